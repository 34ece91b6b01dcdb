import type { ScenarioModule } from '../types.ts';

// Placeholder replaced by the scenario's implementation in this session; never merged as a stub.
export const scenario: ScenarioModule = {
  id: 'S4',
  title: 's4-hot-stream',
  parse: (src) => src,
  sections: () => [],
  run: () => Promise.reject(new Error('scenario S4 is not built yet')),
};

import type { ScenarioModule } from '../types.ts';

// Placeholder replaced by the scenario's implementation in this session; never merged as a stub.
export const scenario: ScenarioModule = {
  id: 'S2',
  title: 's2-ceiling',
  parse: (src) => src,
  sections: () => [],
  run: () => Promise.reject(new Error('scenario S2 is not built yet')),
};

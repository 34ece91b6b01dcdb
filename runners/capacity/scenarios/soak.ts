import type { ScenarioModule } from '../types.ts';

// Placeholder replaced by the scenario's implementation in this session; never merged as a stub.
export const scenario: ScenarioModule = {
  id: 'soak',
  title: 'soak',
  parse: (src) => src,
  sections: () => [],
  run: () => Promise.reject(new Error('scenario soak is not built yet')),
};

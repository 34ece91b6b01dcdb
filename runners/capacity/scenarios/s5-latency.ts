import type { ScenarioModule } from '../types.ts';

// Placeholder replaced by the scenario's implementation in this session; never merged as a stub.
export const scenario: ScenarioModule = {
  id: 'S5',
  title: 's5-latency',
  parse: (src) => src,
  sections: () => [],
  run: () => Promise.reject(new Error('scenario S5 is not built yet')),
};

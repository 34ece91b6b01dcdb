import type { ScenarioModule } from '../types.ts';

// Placeholder replaced by the scenario's implementation in this session; never merged as a stub.
export const scenario: ScenarioModule = {
  id: 'sweep',
  title: 'sweep',
  parse: (src) => src,
  sections: () => [],
  run: () => Promise.reject(new Error('scenario sweep is not built yet')),
};

import type { ScenarioModule } from '../types.ts';

// Placeholder replaced by the scenario's implementation in this session; never merged as a stub.
export const scenario: ScenarioModule = {
  id: 'S1',
  title: 's1-idle-memory',
  parse: (src) => src,
  sections: () => [],
  run: () => Promise.reject(new Error('scenario S1 is not built yet')),
};

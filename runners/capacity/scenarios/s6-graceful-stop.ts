import type { ScenarioModule } from '../types.ts';

// Placeholder replaced by the scenario's implementation in this session; never merged as a stub.
export const scenario: ScenarioModule = {
  id: 'S6',
  title: 's6-graceful-stop',
  parse: (src) => src,
  sections: () => [],
  run: () => Promise.reject(new Error('scenario S6 is not built yet')),
};

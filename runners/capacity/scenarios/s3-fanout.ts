import type { ScenarioModule } from '../types.ts';

// Placeholder replaced by the scenario's implementation in this session; never merged as a stub.
export const scenario: ScenarioModule = {
  id: 'S3',
  title: 's3-fanout',
  parse: (src) => src,
  sections: () => [],
  run: () => Promise.reject(new Error('scenario S3 is not built yet')),
};

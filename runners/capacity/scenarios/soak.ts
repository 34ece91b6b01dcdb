import { parseSoakOptions, type SoakOptions } from '../soak/options.ts';
import { runSoak } from '../soak/run.ts';
import { soakSections } from '../soak/sections.ts';
import type { ScenarioModule } from '../types.ts';

/**
 * Soak (seeds/002): N minutes of steady traffic, a health sample every 10 s, hard pass/fail rules
 * (no throughput decay, flat memory, stable latency, no unexpected disconnects, nothing lost).
 * The work lives in runners/capacity/soak/; docs/soak.md describes the method and the rules.
 */
export const scenario: ScenarioModule<SoakOptions> = {
  id: 'soak',
  title: 'Soak: steady traffic with health rules',
  parse: (src) => parseSoakOptions({ values: src, origin: 'soak' }),
  run: runSoak,
  sections: soakSections,
};

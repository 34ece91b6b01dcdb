import type { OptionSpec, OptionTable } from '../../../lib/options.ts';
import { withDefaults } from '../../../engine/session/module.ts';
import { checkSoakOptions, SOAK_OPTIONS, type SoakOptions } from '../soak/options.ts';
import { runSoak, soakPlannedMs } from '../soak/run.ts';
import { soakSections } from '../soak/sections.ts';
import { defineScenario } from '../scenario.ts';
import type { ScenarioModule } from '../types.ts';

/** Options the suite decides itself (the target, its URL), not the soak's knobs. */
const SUITE_OWNED = new Set(['target', 'url', 'broadcastKey', 'stream']);

/**
 * The soak's knobs under the suite's prefix (`--soak-duration-sec 60`), so `bench:capacity
 * --scenarios soak` is tuned like every other scenario; env names and aliases stay with
 * `npm run bench:soak`, where they are unambiguous.
 */
const TABLE: OptionTable = Object.fromEntries(
  Object.entries(SOAK_OPTIONS)
    .filter(([k]) => !SUITE_OWNED.has(k))
    .map(([k, spec]) => {
      const { env: _env, aliases: _aliases, ...rest } = spec as OptionSpec;
      return [k, { ...rest, doc: `soak: ${spec.doc}` } as OptionSpec];
    }),
);

/**
 * Soak (seeds/002): N minutes of steady traffic, a health sample every 10 s, hard pass/fail rules
 * (no throughput decay, flat memory, stable latency, no unexpected disconnects, nothing lost).
 * The work lives in runners/capacity/soak/; docs/soak.md describes the method and the rules.
 */
export const scenario: ScenarioModule<SoakOptions> = defineScenario({
  id: 'soak',
  title: 'Soak: steady traffic with health rules',
  prefix: 'soak',
  table: TABLE,
  // The suite-owned options keep the soak's defaults: the suite hands the target over in the context.
  typed: (v) => checkSoakOptions(withDefaults(SOAK_OPTIONS, v)),
  plannedSec: (o) => soakPlannedMs(o) / 1000,
  run: runSoak,
  sections: soakSections,
});

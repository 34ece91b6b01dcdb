import type { Scenario, ScenarioId } from '../types.ts';
import { scenario as s1 } from './s1-idle-memory.ts';
import { scenario as s2 } from './s2-ceiling.ts';
import { scenario as s3 } from './s3-fanout.ts';
import { scenario as s4 } from './s4-hot-stream.ts';
import { scenario as s5 } from './s5-latency.ts';
import { scenario as s6 } from './s6-graceful-stop.ts';
import { scenario as soak } from './soak.ts';
import { scenario as sweep } from './sweep.ts';

/** Every capacity scenario by id, in the order the suite runs and reports them. */
export const SCENARIOS: readonly Scenario[] = [s1, s2, s3, s4, s5, s6, soak, sweep];

export const SCENARIO_IDS: readonly ScenarioId[] = SCENARIOS.map((s) => s.id);

export function scenarioById(id: ScenarioId): Scenario {
  const s = SCENARIOS.find((m) => m.id === id);
  if (!s) throw new Error(`no capacity scenario ${id}`);
  return s;
}

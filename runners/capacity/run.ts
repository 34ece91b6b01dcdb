import { cpus, loadavg, totalmem } from 'node:os';
import { Emitter } from '../../lib/emitter.ts';
import type { EngineEvents } from '../../engine/session/events.ts';
import { logLines } from '../../engine/session/present.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { splitTargetLabel, type CapacityOptions } from './options.ts';
import { errorOutcome, SHARED_MACHINE_NOTE } from './result.ts';
import type { ScenarioContext, ScenarioResult } from './types.ts';

export type CapacityHooks = Partial<Pick<ScenarioContext, 'signal' | 'log' | 'progress'>>;

/** The suite's result: every scenario × target, in scenario order, targets side by side. */
export interface CapacityRun {
  test: 'capacity';
  startedAt: string;
  finishedAt: string;
  targets: string[];
  scenarios: string[];
  seed: number;
  params: Record<string, unknown>;
  machine: { cpus: number; totalMemMb: number; loadavgAtStart: number[]; loadavgAtEnd: number[] };
  results: ScenarioResult[];
  aborted: boolean;
  /** Suite-wide: what none of these figures shows. */
  notShown: string[];
}

const round2 = (xs: number[]) => xs.map((x) => Math.round(x * 100) / 100);

/**
 * Walk scenarios × targets: for each scenario, every target in turn (so a scenario's targets are
 * measured minutes apart, not hours), each on its own fresh local service unless the target is
 * external (`url`). A scenario that throws is recorded as a failed, invalid result; the walk goes on.
 */
export async function runCapacity(o: CapacityOptions, hooks: CapacityHooks = {}): Promise<CapacityRun> {
  const signal = hooks.signal ?? new AbortController().signal;
  const log = hooks.log ?? (() => {});
  // The walk speaks in engine events; the log is one subscriber (scenarios still get `log` as their sink).
  const events = new Emitter<EngineEvents>();
  logLines(events, hooks.log, 'capacity');
  const startedAt = new Date().toISOString();
  const loadStart = round2(loadavg());
  const results: ScenarioResult[] = [];
  // perScenario was filled in the order the scenarios were listed: the order they run in.
  for (const bound of Object.values(o.perScenario)) {
    const { id, title } = bound;
    for (const name of o.targets) {
      if (signal.aborted) break;
      const { name: targetName, nodes } = splitTargetLabel(name);
      events.emit('note', `${id} on ${name}`);
      const ctx = { target: getTarget(targetName), ...(o.url ? { url: o.url } : {}), ...(nodes > 1 ? { nodes } : {}), ...(o.serverWorkers > 0 ? { serviceArgs: ['--workers', String(o.serverWorkers)] } : {}), seed: o.seed, signal, log, progress: (p: Record<string, unknown>) => hooks.progress?.({ scenario: id, target: name, ...p }) };
      try {
        // The label, not the bare name, tells replay-redis:2 from replay-redis in the tables.
        const r = await bound.run(ctx);
        results.push({ ...r, target: name, ...(nodes > 1 ? { params: { ...r.params, nodes } } : {}) });
      } catch (err) {
        const { failureMode, flag } = errorOutcome(err);
        events.emit('note', `${id} on ${name} failed: ${flag.message}`);
        results.push({
          scenario: id,
          title,
          target: name,
          startedAt: new Date().toISOString(),
          params: { ...bound.opts },
          steps: [],
          headline: { name: title, value: null, unit: '', higherIsBetter: true },
          failureMode,
          validity: { valid: false, flags: [flag] },
          notShown: [],
        });
      }
    }
  }
  return {
    test: 'capacity',
    startedAt,
    finishedAt: new Date().toISOString(),
    targets: o.targets,
    scenarios: o.scenarios,
    seed: o.seed,
    params: o.values,
    machine: { cpus: cpus().length, totalMemMb: Math.round(totalmem() / 1048576), loadavgAtStart: loadStart, loadavgAtEnd: round2(loadavg()) },
    results,
    aborted: signal.aborted,
    notShown: [
      SHARED_MACHINE_NOTE,
      'ratios are against the first target, measured in the same run; absolute figures move with the machine\'s load (see loadavg)',
      'targets run one at a time with default settings: a single process each unless its options say otherwise',
    ],
  };
}

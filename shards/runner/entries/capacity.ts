import type { OptionTable } from '../../../lib/options.ts';
import { CAPACITY_OPTIONS, parseCapacityOptions, type CapacityOptions } from '../../../runners/capacity/options.ts';
import { runCapacity } from '../../../runners/capacity/run.ts';
import type { S1Options } from '../../../runners/capacity/scenarios/s1-idle-memory.ts';
import type { S2Options } from '../../../runners/capacity/scenarios/s2-ceiling.ts';
import type { S6Options } from '../../../runners/capacity/scenarios/s6-graceful-stop.ts';
import { defined } from '../params.ts';
import { annotateRun } from '../targets.ts';
import type { BenchEntry } from '../types.ts';

const { targets: _t, url: _u, ...Q } = CAPACITY_OPTIONS;
export const CAPACITY_HTTP_OPTIONS = Q satisfies OptionTable;

/** A rough wall time for Retry-After and the job's ETA: ramps and holds of the scenarios that say how long they take, 2 minutes for the others. */
function plannedMs(o: CapacityOptions): number {
  let s = 0;
  for (const id of o.scenarios) {
    const p = o.perScenario[id];
    if (id === 'S1') {
      const x = p as S1Options;
      s += x.ramps.length * x.runs * x.counts.reduce((a, n) => a + n / x.ramps[0]! + x.hold + 15, 0);
    } else if (id === 'S2') {
      const x = p as S2Options;
      s += x.steps.reduce((a, n) => a + n / x.ramp + x.hold + 15, 0);
    } else if (id === 'S6') {
      const x = p as S6Options;
      s += x.connections / x.ramp + x.preStopSec + 15;
    } else s += 120;
  }
  return Math.ceil(s * 1000);
}

export const capacityEntry: BenchEntry = {
  test: 'capacity',
  targets: ['replay', 'ws', 'socketio', 'socketio-csr', 'uws', 'anycable'],
  options: CAPACITY_HTTP_OPTIONS,
  doc: 'capacity suite (seeds/000): the chosen scenarios (S1 idle memory, S2 ceiling, S3 fan-out, S4 hot stream, S5 latency, S6 graceful stop, soak, sweep) against one target, each step judged against its budget',
  prepare(values, t) {
    const opts = parseCapacityOptions({ values: defined({ ...values, targets: t.server, url: t.url }), origin: 'query' });
    return { opts, effectiveParams: defined({ ...opts.values, targets: undefined, target: t.route, targetSource: t.source, scenarios: opts.scenarios.join(',') }), plannedMs: plannedMs(opts) };
  },
  run(o, t, ctx) {
    return annotateRun(t, () => runCapacity(o as CapacityOptions, { signal: ctx.signal, log: ctx.log, progress: (p) => ctx.progress({ phase: String(p.phase ?? p.scenario ?? 'run'), ...p }) }) as unknown as Promise<Record<string, unknown>>);
  },
};

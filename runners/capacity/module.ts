import { defineModule } from '../../engine/session/module.ts';
import { capacityReport } from './page.ts';
import { CAPACITY_OPTIONS, checkCapacityOptions, type CapacityOptions } from './options.ts';
import { runCapacity } from './run.ts';

/** A rough wall time for Retry-After and the job's ETA: each scenario's own plan. */
export function capacityPlannedMs(o: CapacityOptions): number {
  return Math.ceil(Object.values(o.perScenario).reduce((s, b) => s + b.plannedSec, 0) * 1000);
}

export const capacityModule = defineModule({
  name: 'capacity',
  doc: 'capacity suite (seeds/000): the chosen scenarios (S1 idle memory, S2 ceiling, S3 fan-out, S4 hot stream, S5 latency, S6 graceful stop, soak, sweep) against one target, each step judged against its budget',
  options: CAPACITY_OPTIONS,
  validate: checkCapacityOptions,
  plannedMs: capacityPlannedMs,
  target: 'self',
  targetOf: (o) => ({ name: o.targets.join(','), url: o.url }),
  run: (o, ctx) => runCapacity(o, { signal: ctx.signal, log: ctx.log, progress: (p) => ctx.progress({ phase: String(p.phase ?? p.scenario ?? 'run'), ...p }) }),
  multi: { sharedStream: false },
  page: capacityReport,
});

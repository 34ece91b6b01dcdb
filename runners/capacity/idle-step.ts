import { ReboundError } from '../../lib/errors.ts';
import { parseIdleOptions, type IdleOptions } from '../idle/options.ts';
import type { IdleResult } from '../idle/result.ts';
import { runIdle } from '../idle/run.ts';
import type { StepObservation } from './failure-mode.ts';
import { watchStep, type TargetInstance } from './target.ts';
import type { ScenarioContext } from './types.ts';

/** The idle run's knobs the step sets (the rest keep the idle runner's defaults), and the step's own bounds. */
export interface IdleStepParams extends Pick<IdleOptions, 'clients' | 'ramp' | 'hold' | 'stream'>, Partial<Pick<IdleOptions, 'workers' | 'workerFdLimit' | 'connectTimeoutMs'>> {
  /** Abort the step when available memory falls under this (MB). */
  minFreeMb: number;
  /** Hard bound on the step's wall time. */
  timeoutSec: number;
}

/**
 * One connection step through the idle runner's public run function (its multi-process lean
 * clients and target sampler), with what the capacity walk needs around it: the target's open
 * files, the machine's free memory, a wall-time bound, and whether the target survived.
 */
export async function idleStep(ctx: ScenarioContext, inst: TargetInstance, p: IdleStepParams): Promise<{ result: IdleResult | null; obs: StepObservation }> {
  const opts = parseIdleOptions({
    values: { target: ctx.target.name, clients: p.clients, ramp: p.ramp, hold: p.hold, stream: p.stream, workers: p.workers ?? 'auto', workerFdLimit: p.workerFdLimit ?? 0, connectTimeoutMs: p.connectTimeoutMs ?? 20_000 },
    origin: 'capacity',
  });
  const lowMemory = new AbortController();
  const watch = watchStep(inst.pid, p.minFreeMb, () => lowMemory.abort());
  let result: IdleResult | null = null;
  let rigError: string | undefined;
  try {
    const signal = AbortSignal.any([ctx.signal, lowMemory.signal, AbortSignal.timeout(p.timeoutSec * 1000)]);
    result = await runIdle(opts, inst.url, inst.pid, { signal, log: ctx.log, progress: (x) => ctx.progress({ ...x, clients: p.clients }) });
  } catch (err) {
    if (!(err instanceof ReboundError) || err.code !== 'RR_ERR_RUNNER_WORKER') throw err;
    rigError = err.message;
  }
  const w = watch.stop();
  const exited = await inst.exitStatus();
  return {
    result,
    obs: {
      requested: p.clients,
      subscribed: result?.subscribed ?? 0,
      failureCauses: result?.failureCauses ?? {},
      exited,
      lowMemory: w.lowMemory,
      minAvailMb: w.minAvailMb,
      targetFdPeak: w.fdPeak,
      targetFdLimit: w.fdLimit,
      targetProcesses: w.processes,
      targetPeakCpuPct: result?.targetMetrics.peakCpuPct ?? null,
      ...(rigError ? { rigError } : {}),
    },
  };
}

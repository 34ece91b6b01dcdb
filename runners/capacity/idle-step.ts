import { ReboundError } from '../../lib/errors.ts';
import { parseIdleOptions } from '../idle/options.ts';
import type { IdleResult } from '../idle/result.ts';
import { runIdle } from '../idle/run.ts';
import type { StepObservation } from './failure-mode.ts';
import { watchStep, type TargetInstance } from './target.ts';
import type { ScenarioContext } from './types.ts';

export interface IdleStepParams {
  clients: number;
  ramp: number;
  hold: number;
  stream: string;
  /** Abort the step when available memory falls under this (MB). */
  minFreeMb: number;
  /** Hard bound on the step's wall time. */
  timeoutSec: number;
  workers?: string;
  workerFdLimit?: number;
  connectTimeoutMs?: number;
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
  const abort = new AbortController();
  const onOuter = () => abort.abort();
  ctx.signal.addEventListener('abort', onOuter, { once: true });
  const timer = setTimeout(() => abort.abort(), p.timeoutSec * 1000);
  const watch = watchStep(inst.pid, p.minFreeMb, () => abort.abort());
  let result: IdleResult | null = null;
  let rigError: string | undefined;
  try {
    result = await runIdle(opts, inst.url, inst.pid, { signal: abort.signal, log: ctx.log, progress: (x) => ctx.progress({ ...x, clients: p.clients }) });
  } catch (err) {
    if (!(err instanceof ReboundError) || err.code !== 'RR_ERR_RUNNER_WORKER') throw err;
    rigError = err.message;
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', onOuter);
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

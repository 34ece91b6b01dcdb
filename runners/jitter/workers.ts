import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ReboundError } from '../../lib/errors.ts';
import { reapOnExit } from '../../lib/reaper.ts';
import { randomSeed } from '../../lib/rng.ts';
import { sum } from '../../engine/session/results.ts';
import { mergeJitterResults, slices, type WorkerSlice } from './merge.ts';
import type { JitterOptions } from './options.ts';
import type { JitterProgress } from './progress.ts';
import type { JitterResult } from './result.ts';
import { assertNever } from '../../engine/measure/child-link.ts';
import type { FromJitterWorker, ToJitterWorker } from './worker-messages.ts';

const ENTRY = fileURLToPath(new URL('./worker.ts', import.meta.url));

export interface JitterWorkerHooks {
  signal?: AbortSignal;
  /** A target this runner started: worker 0 samples its memory and CPU (the whole target, once). */
  targetPid?: number;
  phase?: (name: string, detail: string) => void;
  progress?: (p: JitterProgress) => void;
}

/**
 * The jitter run spread over `workers` processes, so one runner is not one event loop: each
 * worker runs the jitter engine for its slice of the clients on its own stream (the benchmark's
 * multi-shard layout: `<stream>-w<i>`, one publisher per stream at the same rate), and the
 * parent merges the results exactly (ledger totals summed, HdrHistograms merged).
 */
export async function runJitterWorkers(o: JitterOptions, url: string, workers: number, hooks: JitterWorkerHooks = {}): Promise<JitterResult & { workers: number; perWorker: unknown[] }> {
  const seed = o.seed || randomSeed();
  const runId = `${o.target}-${Date.now().toString(36)}-${seed}-x${workers}`;
  const stream = o.stream || `jitter-${runId}`;
  const plan = slices(o, workers, seed, stream);
  const children: ChildProcess[] = [];
  const progress = new Map<number, JitterProgress>();
  try {
    const results = await Promise.all(
      plan.map(
        (s) =>
          new Promise<{ slice: WorkerSlice; result: JitterResult }>((resolve, reject) => {
            const child = fork(ENTRY, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
            reapOnExit(child);
            children.push(child);
            let done = false;
            child.on('message', (m: FromJitterWorker) => {
              switch (m.type) {
                case 'phase':
                  if (s.worker === 0) hooks.phase?.(m.name, `${m.detail} [x${workers} workers]`);
                  return;
                case 'progress':
                  progress.set(s.worker, m.progress);
                  hooks.progress?.(combineProgress([...progress.values()]));
                  return;
                case 'result':
                  done = true;
                  resolve({ slice: s, result: m.result });
                  return;
                case 'error':
                  done = true;
                  reject(new ReboundError('RR_ERR_RUNNER_WORKER', `jitter worker ${s.worker}: ${m.message}`));
                  return;
                default:
                  assertNever(m);
              }
            });
            // 'exit' can overtake the last message still being read from the channel: give it a moment.
            child.once('exit', (code, sig) => {
              setTimeout(() => {
                if (!done) reject(new ReboundError('RR_ERR_RUNNER_WORKER', `jitter worker ${s.worker} exited early (code ${code}, signal ${sig})`));
              }, 2000).unref();
            });
            hooks.signal?.addEventListener('abort', () => child.connected && child.send({ type: 'stop' } satisfies ToJitterWorker), { once: true });
            // The ramp is the run's total connect rate: each worker takes its share of it.
            child.send({ type: 'run', opts: { ...o, clients: s.clients, seed: s.seed, stream: s.stream, ramp: Math.max(1, Math.round(o.ramp / workers)) }, url, ...(s.worker === 0 && hooks.targetPid ? { targetPid: hooks.targetPid } : {}) } satisfies ToJitterWorker);
          }),
      ),
    );
    return mergeJitterResults(o, results, seed, stream, runId);
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
}

/**
 * The fleet's progress from each worker's latest snapshot: every worker publishes the same
 * schedule on its own stream, so sent/published are the slowest worker's; clients, failures and
 * drops add up; delivered % is weighted by clients; loop lag is the worst worker's.
 */
function combineProgress(all: readonly JitterProgress[]): JitterProgress {
  const clients = sum(all, (p) => p.clients);
  return {
    phase: 'publish',
    sent: Math.min(...all.map((p) => p.sent)),
    planned: Math.max(...all.map((p) => p.planned)),
    published: Math.min(...all.map((p) => p.published)),
    publishFailures: sum(all, (p) => p.publishFailures),
    connected: sum(all, (p) => p.connected),
    clients,
    received: sum(all, (p) => p.received ?? 0),
    deliveredPct: clients > 0 ? Math.round((sum(all, (p) => p.deliveredPct * p.clients) / clients) * 100) / 100 : 0,
    drops: sum(all, (p) => p.drops),
    loopLagMs: { p99: Math.max(...all.map((p) => p.loopLagMs.p99)), max: Math.max(...all.map((p) => p.loopLagMs.max)) },
  };
}

import { fileURLToPath } from 'node:url';
import { randomSeed } from '../../lib/rng.ts';
import { sum } from '../../engine/session/results.ts';
import { mergeJitterResults, slices, type WorkerSlice } from './merge.ts';
import type { JitterOptions } from './options.ts';
import type { JitterProgress } from './progress.ts';
import type { JitterResult } from './result.ts';
import { forkChild, MailboxLink } from '../../engine/measure/child-link.ts';
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
  const progress = new Map<number, JitterProgress>();
  const links = plan.map(
    (s) =>
      new JitterWorker(s, (m) => {
        if (m.type === 'phase' && s.worker === 0) hooks.phase?.(m.name, `${m.detail} [x${workers} workers]`);
        if (m.type === 'progress') {
          progress.set(s.worker, m.progress);
          hooks.progress?.(combineProgress([...progress.values()]));
        }
      }),
  );
  const stop = () => links.forEach((w) => w.send({ type: 'stop' }));
  hooks.signal?.addEventListener('abort', stop, { once: true });
  try {
    const results = await Promise.all(
      links.map(async (w) => {
        const s = w.slice;
        // The ramp is the run's total connect rate: each worker takes its share of it.
        w.send({ type: 'run', opts: { ...o, clients: s.clients, seed: s.seed, stream: s.stream, ramp: Math.max(1, Math.round(o.ramp / workers)) }, url, ...(s.worker === 0 && hooks.targetPid ? { targetPid: hooks.targetPid } : {}) });
        // Bounded by the run itself (its own time limit); a worker that dies ends the wait at once.
        return { slice: s, result: (await w.next('result', Number.MAX_SAFE_INTEGER)).result };
      }),
    );
    return mergeJitterResults(o, results, seed, stream, runId);
  } finally {
    hooks.signal?.removeEventListener('abort', stop);
    for (const w of links) w.kill();
  }
}

/** One jitter worker process: its phase and progress passed on as they come, its result (or error) waited for. */
class JitterWorker extends MailboxLink<ToJitterWorker, FromJitterWorker> {
  constructor(
    readonly slice: WorkerSlice,
    private readonly report: (m: Extract<FromJitterWorker, { type: 'phase' | 'progress' }>) => void,
  ) {
    super(forkChild(ENTRY), `jitter worker ${slice.worker}`);
  }

  protected override receive(m: FromJitterWorker): void {
    if (m.type === 'phase' || m.type === 'progress') this.report(m);
    else super.receive(m);
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

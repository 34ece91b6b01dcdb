import cluster, { type Worker } from 'node:cluster';
import { ReboundError } from '../../../lib/errors.ts';
import { StatsBoard, type ClusterSummary, type WorkerReport } from './stats.ts';
import { sendTo, type PoolMessage } from './wire.ts';

/**
 * The cluster primary's workers, for every service with `--workers N`: N processes share one
 * port (node:cluster, round-robin accept); the primary holds the listening handle, so the port
 * never stops accepting while a worker is replaced.
 *
 * The pool keeps N workers: a worker that dies is replaced, with back-off while replacements die
 * before they listen (counted in `health.spawnFailures`, logged on stderr). Each worker reports
 * its counters every second (`worker.stats`); `summary()` sums them for /metrics.
 */

const MAX_BACKOFF_MS = 5000;

export interface PoolOptions {
  /** Service name, for logs and errors. */
  label: string;
  size: number;
  /** Environment of each forked worker (how it learns its options). */
  env: Record<string, string>;
  /** A worker's own stop grace: past it (plus a margin) the primary kills it. */
  stopGraceMs: number;
  /** Wire a fresh worker to the primary's services; the returned undo runs when it exits. */
  attach?(w: Worker): () => void;
}

export interface PoolHealth {
  /** Workers started to replace one that exited unexpectedly. */
  respawns: number;
  /** Workers that exited before they listened (the primary backs off before the next try). */
  spawnFailures: number;
  lastSpawnError: string | null;
}

export class WorkerPool<R extends WorkerReport = WorkerReport> {
  readonly health: PoolHealth = { respawns: 0, spawnFailures: 0, lastSpawnError: null };
  readonly workers = new Set<Worker>();
  /** Workers being replaced on purpose (a rolling reload): their exit is expected, not respawned. */
  readonly retiring = new Set<Worker>();
  private readonly board = new StatsBoard<R>();
  private started = false;
  private stopping = false;
  private failures = 0;

  constructor(private readonly o: PoolOptions) {}

  get isStopping(): boolean {
    return this.stopping;
  }

  private log(line: string): void {
    process.stderr.write(`${this.o.label}: ${line}\n`);
  }

  /** Every worker's latest report summed, with the pool's health. */
  summary(): ClusterSummary<R> & PoolHealth {
    return { ...this.board.summary(this.workers.size), ...this.health };
  }

  /**
   * Fork one worker; resolves once it listens, rejects if it exits first. `replaceOnEarlyExit`:
   * a worker that dies before listening is retried with back-off (false where the caller
   * handles the failure itself, e.g. a reload whose old worker keeps serving).
   */
  spawn(replaceOnEarlyExit: boolean): Promise<{ w: Worker; port: number }> {
    const w = cluster.fork(this.o.env);
    this.workers.add(w);
    const detach = this.o.attach?.(w);
    let listened = false;
    const onReport = (m: PoolMessage) => {
      if (m?.type === 'worker.stats') this.board.set(w, m.stats as unknown as R);
    };
    w.on('message', onReport);
    const listening = new Promise<{ w: Worker; port: number }>((resolve, reject) => {
      const onMsg = (m: PoolMessage) => {
        if (m?.type !== 'listening') return;
        w.off('message', onMsg);
        listened = true;
        this.failures = 0;
        resolve({ w, port: m.port });
      };
      w.on('message', onMsg);
      w.once('exit', (code, signal) => reject(new ReboundError('RR_ERR_SERVICE_START', `${this.o.label} worker ${w.process.pid} exited before listening (code ${code}, signal ${signal})`)));
    });
    listening.catch(() => {}); // every caller handles it; never an unhandled rejection
    w.once('exit', (code, signal) => {
      detach?.();
      w.off('message', onReport);
      this.board.delete(w);
      this.workers.delete(w);
      if (this.stopping || !this.started || this.retiring.delete(w)) return;
      if (!listened) {
        this.failures++;
        this.health.spawnFailures++;
        this.health.lastSpawnError = `worker ${w.process.pid} exited before listening (code ${code}, signal ${signal})`;
        if (!replaceOnEarlyExit) return;
      }
      const delay = listened ? 0 : Math.min(100 * 2 ** (this.failures - 1), MAX_BACKOFF_MS);
      this.respawn(delay, listened ? `worker ${w.process.pid} exited (code ${code}, signal ${signal})` : this.health.lastSpawnError!);
    });
    return listening;
  }

  /** Keep N workers: clients of the dead one reconnect (to the others). */
  private respawn(delayMs: number, why: string): void {
    this.log(`${why}; starting a replacement${delayMs > 0 ? ` in ${delayMs} ms` : ''}`);
    setTimeout(() => {
      if (this.stopping) return;
      this.health.respawns++;
      this.spawn(true).catch(() => {}); // an early exit schedules the next try itself
    }, delayMs).unref();
  }

  /** Tell a worker to say goodbye to its clients and exit; resolves on exit (SIGKILL if it hangs). */
  retire(w: Worker): Promise<void> {
    this.retiring.add(w);
    const exited = exitOf(w);
    sendTo(w, { type: 'stop' });
    const hard = setTimeout(() => w.process.kill('SIGKILL'), this.o.stopGraceMs + 5000);
    hard.unref();
    return exited.finally(() => clearTimeout(hard));
  }

  /** Start all N; resolves with the shared port. If any fails to listen, every worker is killed. */
  async start(): Promise<number> {
    try {
      const ports = (await Promise.all(Array.from({ length: this.o.size }, () => this.spawn(false)))).map((x) => x.port);
      this.started = true;
      return ports[0] ?? 0;
    } catch (err) {
      this.stopping = true;
      for (const w of this.workers) w.process.kill('SIGKILL');
      throw err;
    }
  }

  /** Graceful stop: every worker says goodbye to its clients and exits; stragglers are killed. */
  async stop(): Promise<void> {
    this.stopping = true;
    const exits = [...this.workers].map(exitOf);
    for (const w of this.workers) sendTo(w, { type: 'stop' });
    const hard = setTimeout(() => {
      for (const w of this.workers) w.process.kill('SIGKILL');
    }, this.o.stopGraceMs + 2500);
    await Promise.all(exits);
    clearTimeout(hard);
  }
}

const exitOf = (w: Worker) => new Promise<void>((r) => (w.isDead() ? r() : w.once('exit', () => r())));

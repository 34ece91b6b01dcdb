import cluster, { type Worker } from 'node:cluster';
import { ReboundError, toErrorBody } from '../../../lib/errors.ts';
import type { RunningService } from '../../common/service-main.ts';
import { IpcBroker, servePrimary, type IpcChannel, type PrimaryToWorker, type WorkerToPrimary } from '../broker/ipc.ts';
import { MemoryBroker } from '../broker/memory.ts';
import { openBroker } from '../broker/open.ts';
import type { ReloadedWorker } from '../http/index.ts';
import { brokerOptions, createReplayServer } from '../index.ts';
import type { ReplayServerOptions } from '../options.ts';

/**
 * `--workers N`: N worker processes share one port (node:cluster, round-robin accept); the
 * primary holds the only MemoryBroker and serves them over IPC (broker/ipc.ts), so each stream
 * has one offset sequence and one history whichever worker a client lands on.
 *
 * The primary keeps N workers: a worker that dies is replaced, with back-off while replacements
 * die before they listen (counted in /metrics `cluster.spawnFailures`, logged on stderr). A
 * rolling reload (SIGUSR2 or POST /_admin/reload) replaces them one at a time.
 */

const ENV_KEY = 'REPLAY_WORKER_OPTIONS';
const MAX_BACKOFF_MS = 5000;
/** A reload answer may take a while: each worker waits for its replacement and its own stop. */
const RELOAD_REQUEST_TIMEOUT_MS = 300_000;

export const isReplayWorker = (): boolean => cluster.isWorker && process.env[ENV_KEY] !== undefined;

function workerChannel(w: Worker): IpcChannel<PrimaryToWorker, WorkerToPrimary> {
  return {
    send: (m) => {
      // With a callback a send to a dying worker reports EPIPE there instead of an 'error' event.
      if (w.isConnected()) w.send(m, undefined, undefined, ignore);
    },
    onMessage: (fn) => {
      w.on('message', fn);
      return () => w.off('message', fn);
    },
  };
}

function processChannel(): IpcChannel<WorkerToPrimary, PrimaryToWorker> {
  return {
    send: (m) => {
      if (process.connected) process.send!(m, undefined, undefined, ignore);
    },
    onMessage: (fn) => {
      const h = (m: unknown) => fn(m as PrimaryToWorker);
      process.on('message', h);
      return () => process.off('message', h);
    },
  };
}

const ignore = () => {};
const log = (line: string) => process.stderr.write(`replay: ${line}\n`);

/** Primary: fork the workers, serve the broker, report the shared port once every worker listens. */
export async function runPrimary(opts: ReplayServerOptions): Promise<RunningService> {
  // --broker redis: every worker holds its own Redis connections (the primary's MemoryBroker then
  // serves only the admin channel); check Redis once here so an outage is one clear error.
  if (opts.broker === 'redis') await (await openBroker(opts))?.close();
  const broker = new MemoryBroker(brokerOptions(opts));
  const health = { respawns: 0, spawnFailures: 0, lastSpawnError: null as string | null, reloads: 0 };
  const workers = new Set<Worker>();
  const channels = new Map<IpcChannel<PrimaryToWorker, WorkerToPrimary>, Worker>();
  const chanOf = new Map<Worker, IpcChannel<PrimaryToWorker, WorkerToPrimary>>();
  /** Workers being replaced by a reload: their exit is expected, not respawned. */
  const retiring = new Set<Worker>();
  let started = false;
  let stopping = false;
  let reloading = false;
  let failures = 0;

  const host = servePrimary(broker, {
    extraStats: () => ({ ...health }),
    reload: (ch, id) => {
      const requester = channels.get(ch);
      rollingReload(requester).then(
        ({ workers: replaced, last }) => {
          ch.send({ type: 'reload.result', id, status: 200, body: { workers: replaced } });
          // The requesting worker answers its HTTP client first, then goes (IPC keeps the order).
          if (last) retire(last);
        },
        (err: unknown) => {
          const body = toErrorBody(err);
          ch.send({ type: 'reload.result', id, status: body.statusCode, body });
        },
      );
    },
  });

  /**
   * Fork one worker; resolves once it listens, rejects if it exits first. `replaceOnEarlyExit`:
   * a worker that dies before listening is retried with back-off (false for reload
   * replacements: the reload reports the failure and the old worker keeps serving).
   */
  const spawn = (replaceOnEarlyExit: boolean): Promise<{ w: Worker; port: number }> => {
    const w = cluster.fork({ [ENV_KEY]: JSON.stringify(opts) });
    const ch = workerChannel(w);
    workers.add(w);
    channels.set(ch, w);
    chanOf.set(w, ch);
    const detach = host.attach(ch);
    let listened = false;
    const listening = new Promise<{ w: Worker; port: number }>((resolve, reject) => {
      const onMsg = (m: WorkerToPrimary) => {
        if (m?.type !== 'listening') return;
        w.off('message', onMsg);
        listened = true;
        failures = 0;
        resolve({ w, port: m.port });
      };
      w.on('message', onMsg);
      w.once('exit', (code, signal) => reject(new Error(`replay worker ${w.process.pid} exited before listening (code ${code}, signal ${signal})`)));
    });
    listening.catch(() => {}); // every caller handles it; never an unhandled rejection
    w.once('exit', (code, signal) => {
      detach();
      workers.delete(w);
      channels.delete(ch);
      chanOf.delete(w);
      if (stopping || !started || retiring.delete(w)) return;
      if (!listened) {
        failures++;
        health.spawnFailures++;
        health.lastSpawnError = `worker ${w.process.pid} exited before listening (code ${code}, signal ${signal})`;
        if (!replaceOnEarlyExit) return;
      }
      respawn(listened ? 0 : Math.min(100 * 2 ** (failures - 1), MAX_BACKOFF_MS), listened ? `worker ${w.process.pid} exited (code ${code}, signal ${signal})` : health.lastSpawnError!);
    });
    return listening;
  };

  /** Keep N workers: clients of the dead one reconnect (to the others) and resume. */
  const respawn = (delayMs: number, why: string) => {
    log(`${why}; starting a replacement${delayMs > 0 ? ` in ${delayMs} ms` : ''}`);
    setTimeout(() => {
      if (stopping) return;
      health.respawns++;
      spawn(true).catch(() => {}); // an early exit schedules the next try itself
    }, delayMs).unref();
  };

  /** Tell a worker to say goodbye to its clients and exit; resolves on exit (SIGKILL if it hangs). */
  const retire = (w: Worker): Promise<void> => {
    retiring.add(w);
    const exited = new Promise<void>((r) => (w.isDead() ? r() : w.once('exit', () => r())));
    chanOf.get(w)?.send({ type: 'stop' });
    const hard = setTimeout(() => w.process.kill('SIGKILL'), opts.stopGraceMs + 5000);
    hard.unref();
    return exited.finally(() => clearTimeout(hard));
  };

  /**
   * Replace every worker, one at a time: start the replacement and wait until it listens, then
   * stop the old one (clients get `disconnect server_restart`, reconnect: true) and wait for its
   * exit. The port never stops accepting: the primary holds the listening handle. The worker
   * that asked (HTTP) goes last and is returned as `last`: it answers before it stops.
   */
  const rollingReload = async (requester?: Worker): Promise<{ workers: ReloadedWorker[]; last?: Worker }> => {
    if (stopping) throw new ReboundError('RR_ERR_RELOAD_UNAVAILABLE', 'the server is stopping');
    if (reloading) throw new ReboundError('RR_ERR_RELOAD_IN_PROGRESS', 'a rolling reload is already running');
    reloading = true;
    const done: ReloadedWorker[] = [];
    try {
      const olds = [...workers].filter((w) => !retiring.has(w) && w !== requester);
      if (requester && workers.has(requester)) olds.push(requester);
      for (const old of olds) {
        if (old.isDead() || stopping) continue;
        const startedAt = Date.now();
        let fresh: Worker;
        try {
          fresh = (await spawn(false)).w;
        } catch (err) {
          throw new ReboundError('RR_ERR_RELOAD_FAILED', `replacement for worker ${old.process.pid} did not start: ${(err as Error).message}`, { details: { workers: done } });
        }
        const entry = { oldPid: old.process.pid ?? 0, newPid: fresh.process.pid ?? 0, startedAt, endedAt: 0 };
        if (old === requester) {
          entry.endedAt = Date.now();
          done.push(entry);
          health.reloads++;
          log(`rolling reload: ${JSON.stringify(done)}`);
          return { workers: done, last: old };
        }
        await retire(old);
        entry.endedAt = Date.now();
        done.push(entry);
      }
      health.reloads++;
      log(`rolling reload: ${JSON.stringify(done)}`);
      return { workers: done };
    } finally {
      reloading = false;
    }
  };

  const onSignal = () => {
    rollingReload().catch((err: unknown) => log(`rolling reload (SIGUSR2) failed: ${(err as Error).message}`));
  };
  process.on('SIGUSR2', onSignal);

  try {
    const ports = (await Promise.all(Array.from({ length: opts.workers }, () => spawn(false)))).map((x) => x.port);
    started = true;
    return {
      port: ports[0] ?? 0,
      async stop() {
        stopping = true;
        process.off('SIGUSR2', onSignal);
        const exits = [...workers].map((w) => new Promise<void>((r) => (w.isDead() ? r() : w.once('exit', () => r()))));
        host.broadcast({ type: 'stop' });
        const hard = setTimeout(() => {
          for (const w of workers) w.process.kill('SIGKILL');
        }, opts.stopGraceMs + 2500);
        await Promise.all(exits);
        clearTimeout(hard);
        await broker.close();
      },
    };
  } catch (err) {
    stopping = true;
    for (const w of workers) w.process.kill('SIGKILL');
    throw err;
  }
}

/** Worker: a normal replay server whose broker is the primary's. */
export async function runWorker(compactHeap: () => void): Promise<void> {
  const opts = JSON.parse(process.env[ENV_KEY] ?? '{}') as ReplayServerOptions;
  if (opts.compactHeap) compactHeap();
  const channel = processChannel();
  const ipc = new IpcBroker(channel);
  const reload = () =>
    ipc.request(
      (id) => ({ type: 'reload', id }),
      (m) => (m.type === 'reload.result' ? { status: m.status, body: m.body } : { status: 500, body: null }),
      RELOAD_REQUEST_TIMEOUT_MS,
    );
  // With --broker redis the worker stores and fans out through Redis itself; IPC stays for admin.
  const broker = (await openBroker(opts)) ?? ipc;
  const srv = createReplayServer({ ...opts, workers: 1 }, { broker, reload });
  await srv.listen(opts.port, opts.host);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(1), opts.stopGraceMs + 2000).unref();
    await srv.stop({ processExit: true });
    process.exit(0);
  };
  channel.onMessage((m) => {
    if (m?.type === 'stop') void stop();
  });
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  process.on('disconnect', () => void stop());
  // Each worker reports its own counters to the primary every second, so /metrics on whichever
  // worker answers can show the whole cluster (`cluster` in /metrics, at most 1 s old).
  const report = () => {
    const st = srv.stats() as { connections: number; subscriptions: number; deliveries: number };
    channel.send({ type: 'worker.stats', stats: { pid: process.pid, connections: st.connections, subscriptions: st.subscriptions, deliveries: st.deliveries } });
  };
  report();
  setInterval(report, 1000).unref();
  channel.send({ type: 'listening', port: srv.port });
}

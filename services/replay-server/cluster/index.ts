import type { Worker } from 'node:cluster';
import { ReboundError, toErrorBody } from '../../../lib/errors.ts';
import { WorkerPool } from '../../common/cluster/pool.ts';
import { isWorkerOf, serveAsWorker, workerOptions } from '../../common/cluster/worker.ts';
import { processChannel, workerChannel, type IpcChannel } from '../../common/cluster/wire.ts';
import type { RunningService } from '../../common/service-main.ts';
import { IpcBroker, servePrimary, type PrimaryToWorker, type WorkerToPrimary } from '../broker/ipc.ts';
import { MemoryBroker } from '../broker/memory.ts';
import { openBroker } from '../broker/open.ts';
import type { WorkerStats } from '../broker/types.ts';
import type { ReloadedWorker } from '../http/index.ts';
import { brokerOptions, createReplayServer } from '../index.ts';
import type { ReplayServerOptions } from '../options.ts';
import { acceptQueueMigration, portForWorkers } from '../../uws/server.ts';

/**
 * `--workers N`: N worker processes share one port (the common pool: node:cluster, respawn with
 * back-off, graceful stop; under the uws transport each worker binds the port with
 * SO_REUSEPORT); the primary holds the only MemoryBroker and serves them over IPC (broker/ipc.ts),
 * so each stream has one offset sequence and one history whichever worker a client lands on. A
 * rolling reload (SIGUSR2 or POST /_admin/reload) replaces the workers one at a time.
 */

const ENV_KEY = 'REPLAY_WORKER_OPTIONS';
/** A reload answer may take a while: each worker waits for its replacement and its own stop. */
const RELOAD_REQUEST_TIMEOUT_MS = 300_000;

export const isReplayWorker = (): boolean => isWorkerOf(ENV_KEY);

const log = (line: string) => process.stderr.write(`replay: ${line}\n`);

/** Primary: fork the workers, serve the broker, report the shared port once every worker listens. */
export async function runPrimary(opts: ReplayServerOptions): Promise<RunningService> {
  // --broker redis: every worker holds its own Redis connections (the primary's MemoryBroker then
  // serves only the admin channel); check Redis once here so an outage is one clear error.
  if (opts.broker === 'redis') await (await openBroker(opts))?.close();
  const broker = new MemoryBroker(brokerOptions(opts));
  // uws: every worker binds the port itself (SO_REUSEPORT): one concrete port, checked free.
  if (opts.transport === 'uws') opts = { ...opts, port: await portForWorkers(opts.host, opts.port) };
  if (opts.transport === 'uws' && acceptQueueMigration() !== 'on') {
    log('warning: net.ipv4.tcp_migrate_req is not 1: a worker a rolling reload retires resets the connections queued on its listener (set it to 1, Linux 5.14+; docs/replay-server.md)');
  }
  let reloads = 0;
  const channels = new Map<IpcChannel<PrimaryToWorker, WorkerToPrimary>, Worker>();
  let reloading = false;
  let pool: WorkerPool<WorkerStats> | undefined;

  const host = servePrimary(broker, {
    cluster: () => ({ ...pool!.summary(), reloads }),
    reload: (ch, id) => {
      const requester = channels.get(ch);
      // A worker being replaced asked (it had not yet seen its stop): it exits before any reload
      // could answer, so it answers now instead (see adminReload).
      const reload = requester && pool!.retiring.has(requester) ? Promise.reject(new ReboundError('RR_ERR_RELOAD_UNAVAILABLE', 'this worker is stopping: ask again')) : rollingReload(requester);
      reload.then(
        ({ workers: replaced, last }) => {
          ch.send({ type: 'reload.result', id, status: 200, body: { workers: replaced }, ...(last ? { leaving: true as const } : {}) });
          // The requesting worker answers its HTTP client first, then goes (IPC keeps the order).
          if (last) void pool!.retire(last);
        },
        (err: unknown) => {
          const body = toErrorBody(err);
          ch.send({ type: 'reload.result', id, status: body.statusCode, body });
        },
      );
    },
  });

  pool = new WorkerPool<WorkerStats>({
    label: 'replay',
    size: opts.workers,
    env: { [ENV_KEY]: JSON.stringify(opts) },
    stopGraceMs: opts.stopGraceMs,
    attach: (w) => {
      const ch = workerChannel<PrimaryToWorker, WorkerToPrimary>(w);
      channels.set(ch, w);
      const detach = host.attach(ch);
      return () => {
        detach();
        channels.delete(ch);
      };
    },
  });
  const workers = pool;

  /**
   * Replace every worker, one at a time: start the replacement and wait until it listens, then
   * stop the old one (clients get `disconnect server_restart`, reconnect: true) and wait for its
   * exit. The port never stops accepting: the primary holds the listening handle (ws), or the
   * replacement binds beside the old worker with SO_REUSEPORT before it goes (uws). The worker
   * that asked (HTTP) goes last and is returned as `last`: it answers before it stops.
   */
  const rollingReload = async (requester?: Worker): Promise<{ workers: ReloadedWorker[]; last?: Worker }> => {
    if (workers.isStopping) throw new ReboundError('RR_ERR_RELOAD_UNAVAILABLE', 'the server is stopping');
    if (reloading) throw new ReboundError('RR_ERR_RELOAD_IN_PROGRESS', 'a rolling reload is already running');
    reloading = true;
    const done: ReloadedWorker[] = [];
    try {
      const olds = [...workers.workers].filter((w) => !workers.retiring.has(w) && w !== requester);
      if (requester && workers.workers.has(requester)) olds.push(requester);
      for (const old of olds) {
        if (old.isDead() || workers.isStopping) continue;
        const startedAt = Date.now();
        let fresh: Worker;
        try {
          fresh = (await workers.spawn(false)).w;
        } catch (err) {
          throw new ReboundError('RR_ERR_RELOAD_FAILED', `replacement for worker ${old.process.pid} did not start: ${(err as Error).message}`, { details: { workers: done } });
        }
        const entry = { oldPid: old.process.pid ?? 0, newPid: fresh.process.pid ?? 0, startedAt, endedAt: 0 };
        if (old === requester) {
          entry.endedAt = Date.now();
          done.push(entry);
          reloads++;
          log(`rolling reload: ${JSON.stringify(done)}`);
          return { workers: done, last: old };
        }
        await workers.retire(old);
        entry.endedAt = Date.now();
        done.push(entry);
      }
      reloads++;
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
  const port = await workers.start();
  return {
    port,
    async stop() {
      process.off('SIGUSR2', onSignal);
      await workers.stop();
      await broker.close();
    },
  };
}

/** Worker: a normal replay server whose broker is the primary's. */
export async function runWorker(compactHeap: () => void): Promise<void> {
  const opts = workerOptions<ReplayServerOptions>(ENV_KEY);
  if (opts.compactHeap) compactHeap();
  const ipc = new IpcBroker(processChannel<WorkerToPrimary, PrimaryToWorker>());
  const reload = async () => {
    const m = await ipc.request((id) => ({ type: 'reload', id }), (a) => a, RELOAD_REQUEST_TIMEOUT_MS);
    if (m.type !== 'reload.result') return { status: 500, body: null };
    // This worker is retired right after its answer: it stops accepting first and the answer
    // says `Connection: close`, so the client's next request (a keep-alive one too) reaches a
    // worker that stays instead of one that would refuse it as stopping.
    if (m.leaving) srv.leave();
    return { status: m.status, body: m.body };
  };
  // With --broker redis the worker stores and fans out through Redis itself; IPC stays for admin.
  const broker = (await openBroker(opts)) ?? ipc;
  const srv = createReplayServer({ ...opts, workers: 1 }, { broker, reload, sharePort: true });
  await srv.listen(opts.port, opts.host);
  // Each worker reports its own counters to the primary every second, so /metrics on whichever
  // worker answers can show the whole cluster (`cluster` in /metrics, at most 1 s old).
  serveAsWorker({
    port: srv.port,
    stopGraceMs: opts.stopGraceMs,
    stop: () => srv.stop({ processExit: true }),
    report: () => {
      const st = srv.stats() as { connections: number; subscriptions: number; deliveries: number };
      return { connections: st.connections, subscriptions: st.subscriptions, deliveries: st.deliveries };
    },
  });
}

import cluster, { type Worker } from 'node:cluster';
import type { RunningService } from '../../common/service-main.ts';
import { IpcBroker, servePrimary, type IpcChannel, type PrimaryToWorker, type WorkerToPrimary } from '../broker/ipc.ts';
import { MemoryBroker } from '../broker/memory.ts';
import { createReplayServer } from '../index.ts';
import type { ReplayServerOptions } from '../options.ts';

/**
 * `--workers N`: N worker processes share one port (node:cluster, round-robin accept); the
 * primary holds the only MemoryBroker and serves them over IPC (broker/ipc.ts), so each stream
 * has one offset sequence and one history whichever worker a client lands on.
 */

const ENV_KEY = 'REPLAY_WORKER_OPTIONS';

export const isReplayWorker = (): boolean => cluster.isWorker && process.env[ENV_KEY] !== undefined;

function workerChannel(w: Worker): IpcChannel<PrimaryToWorker, WorkerToPrimary> {
  return {
    send: (m) => {
      if (w.isConnected()) w.send(m);
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
      if (process.connected) process.send!(m);
    },
    onMessage: (fn) => {
      const h = (m: unknown) => fn(m as PrimaryToWorker);
      process.on('message', h);
      return () => process.off('message', h);
    },
  };
}

/** Primary: fork the workers, serve the broker, report the shared port once every worker listens. */
export async function runPrimary(opts: ReplayServerOptions): Promise<RunningService> {
  const broker = new MemoryBroker({ historyLimit: opts.historyLimit, historyTtlSec: opts.historyTtlSec, sessionTtlSec: opts.sessionTtlSec });
  const host = servePrimary(broker);
  const workers = new Set<Worker>();
  let stopping = false;
  let port = 0;
  const spawn = (): Promise<number> => {
    const w = cluster.fork({ [ENV_KEY]: JSON.stringify(opts) });
    workers.add(w);
    const detach = host.attach(workerChannel(w));
    w.once('exit', () => {
      detach();
      workers.delete(w);
      if (!stopping) void spawn(); // keep N workers; clients of the dead one reconnect and resume
    });
    return new Promise((resolve, reject) => {
      const onMsg = (m: WorkerToPrimary) => {
        if (m?.type !== 'listening') return;
        w.off('message', onMsg);
        resolve(m.port);
      };
      w.on('message', onMsg);
      w.once('exit', (code) => reject(new Error(`replay worker exited before listening (code ${code})`)));
    });
  };
  const ports = await Promise.all(Array.from({ length: opts.workers }, spawn));
  port = ports[0] ?? 0;
  return {
    port,
    async stop() {
      stopping = true;
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
}

/** Worker: a normal replay server whose broker is the primary's. */
export async function runWorker(compactHeap: () => void): Promise<void> {
  const opts = JSON.parse(process.env[ENV_KEY] ?? '{}') as ReplayServerOptions;
  if (opts.compactHeap) compactHeap();
  const channel = processChannel();
  const broker = new IpcBroker(channel);
  const srv = createReplayServer({ ...opts, workers: 1 }, { broker });
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

import type { Worker } from 'node:cluster';
import type { RunningService } from '../service-main.ts';
import { WorkerPool, type PoolHealth } from './pool.ts';
import { PendingRequests } from './requests.ts';
import type { ClusterSummary } from './stats.ts';
import { isObj, processChannel, sendTo, type IpcChannel } from './wire.ts';

/**
 * What the reference servers' workers (ws, Socket.IO) need from their primary besides the pool:
 *
 * - `relay`: items sent to every worker, the sender included, in the order the primary got them
 *   (one total order across workers: a broadcast or whisper reaches each client once, in order);
 *   with an `id` the sender hears `relay.done` after the items went out to everyone.
 * - `barrier`: answered once every other live worker has read everything the primary forwarded
 *   before it (so a broadcast another channel carried, e.g. Socket.IO's cluster adapter, has been
 *   delivered everywhere before the HTTP answer, and the next broadcast cannot overtake it).
 * - `cluster.stats`: the pool's summary for /metrics.
 */

export type HubRequest =
  | { type: 'relay'; id?: number; items: unknown[] }
  | { type: 'barrier'; id: number }
  | { type: 'barrier.ack'; id: number }
  | { type: 'cluster.stats'; id: number };

export type HubAnswer =
  | { type: 'relay'; items: unknown[] }
  | { type: 'relay.done'; id: number }
  | { type: 'barrier'; id: number }
  | { type: 'barrier.done'; id: number }
  | { type: 'cluster.stats.result'; id: number; stats: ClusterSummary & PoolHealth };

/** A barrier answers at the latest after this long, even if a (hung) worker never acknowledges. */
const BARRIER_TIMEOUT_MS = 2000;

/** The primary's side: `attach` is the pool's per-worker hook. */
export function serveHub(getPool: () => WorkerPool) {
  let gseq = 0;
  const barriers = new Map<number, { from: Worker; id: number; waiting: Set<Worker>; timer: NodeJS.Timeout }>();
  const finish = (gid: number) => {
    const b = barriers.get(gid);
    if (!b) return;
    barriers.delete(gid);
    clearTimeout(b.timer);
    sendTo(b.from, { type: 'barrier.done', id: b.id } satisfies HubAnswer);
  };
  const handle = (w: Worker, m: HubRequest) => {
    switch (m.type) {
      case 'relay': {
        const out: HubAnswer = { type: 'relay', items: m.items };
        for (const x of getPool().workers) sendTo(x, out);
        if (m.id !== undefined) sendTo(w, { type: 'relay.done', id: m.id } satisfies HubAnswer);
        return;
      }
      case 'barrier': {
        const gid = ++gseq;
        const waiting = new Set([...getPool().workers].filter((x) => x !== w && x.isConnected()));
        barriers.set(gid, { from: w, id: m.id, waiting, timer: setTimeout(() => finish(gid), BARRIER_TIMEOUT_MS).unref() });
        for (const x of waiting) sendTo(x, { type: 'barrier', id: gid } satisfies HubAnswer);
        if (waiting.size === 0) finish(gid);
        return;
      }
      case 'barrier.ack': {
        const b = barriers.get(m.id);
        if (b?.waiting.delete(w) && b.waiting.size === 0) finish(m.id);
        return;
      }
      case 'cluster.stats':
        sendTo(w, { type: 'cluster.stats.result', id: m.id, stats: getPool().summary() } satisfies HubAnswer);
        return;
      default: {
        const never: never = m;
        void never;
      }
    }
  };
  return {
    attach(w: Worker): () => void {
      const onMsg = (m: unknown) => {
        if (isObj(m) && typeof m.type === 'string' && HUB_TYPES.has(m.type)) handle(w, m as HubRequest);
      };
      w.on('message', onMsg);
      return () => {
        w.off('message', onMsg);
        // A worker that exits owes no acknowledgement; one that asked gets no answer.
        for (const [gid, b] of barriers) {
          if (b.from === w) {
            clearTimeout(b.timer);
            barriers.delete(gid);
          } else if (b.waiting.delete(w) && b.waiting.size === 0) finish(gid);
        }
      };
    },
  };
}

const HUB_TYPES = new Set(['relay', 'barrier', 'barrier.ack', 'cluster.stats']);

/** A worker's side: relay, barrier and the cluster's stats, over the process's IPC. */
export class PrimaryLink<Item = unknown> {
  private readonly requests = new PendingRequests<Extract<HubAnswer, { id: number }>>();
  private readonly listeners = new Set<(items: Item[]) => void>();

  constructor(private readonly channel: IpcChannel<HubRequest, HubAnswer> = processChannel()) {
    channel.onMessage((m) => {
      if (!isObj(m)) return;
      switch (m.type) {
        case 'relay':
          for (const l of this.listeners) l(m.items as Item[]);
          return;
        case 'barrier':
          // Everything the primary forwarded before this message has been read: say so.
          channel.send({ type: 'barrier.ack', id: m.id });
          return;
        case 'relay.done':
        case 'barrier.done':
        case 'cluster.stats.result':
          this.requests.settle(m);
          return;
        default:
          return; // other channels' messages (the pool's stop, an adapter's packets)
      }
    });
  }

  /** Send items to every worker (this one too); resolves once the primary sent them all out. */
  relay(items: Item[]): Promise<void> {
    return this.requests.request(
      (id) => this.channel.send({ type: 'relay', id, items }),
      () => undefined,
    );
  }

  /** Relay without waiting for the primary (whispers: nothing to answer over HTTP). */
  relayNoWait(items: Item[]): void {
    this.channel.send({ type: 'relay', items });
  }

  barrier(): Promise<void> {
    return this.requests.request(
      (id) => this.channel.send({ type: 'barrier', id }),
      () => undefined,
    );
  }

  onRelay(fn: (items: Item[]) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  clusterStats(): Promise<ClusterSummary & PoolHealth> {
    return this.requests.request(
      (id) => this.channel.send({ type: 'cluster.stats', id }),
      (m) => (m as Extract<HubAnswer, { type: 'cluster.stats.result' }>).stats,
    );
  }
}

export interface HubPrimaryOptions {
  label: string;
  size: number;
  /** The env key workers find their options under (see worker.ts). */
  envKey: string;
  options: object;
  stopGraceMs: number;
}

/** A reference server's primary: the pool of workers and the hub they share. */
export async function runHubPrimary(o: HubPrimaryOptions): Promise<RunningService> {
  let pool: WorkerPool | undefined;
  const hub = serveHub(() => pool!);
  pool = new WorkerPool({ label: o.label, size: o.size, env: { [o.envKey]: JSON.stringify(o.options) }, stopGraceMs: o.stopGraceMs, attach: (w) => hub.attach(w) });
  const port = await pool.start();
  return { port, stop: () => pool!.stop() };
}

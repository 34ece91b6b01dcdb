import type { MemoryBroker } from './memory.ts';
import type { Broker, BrokerStats, ClusterStats, HistoryPosition, HistoryResult, MessagesListener, PublishItem, StreamMessage, WorkerStats } from './types.ts';

/**
 * Cluster mode: the primary owns one MemoryBroker (one offset sequence and one history per
 * stream); workers reach it through `IpcBroker`. Every publish, wherever it arrives, goes to the
 * primary, which assigns offsets and fans the stored messages out to all workers in one order.
 */

export type WorkerToPrimary =
  | { type: 'publish'; items: PublishItem[] }
  | { type: 'history'; id: number; stream: string; position: HistoryPosition }
  | { type: 'session.commit'; sid: string; state: string }
  | { type: 'session.restore'; id: number; sid: string }
  | { type: 'stats'; id: number }
  | { type: 'worker.stats'; stats: WorkerStats }
  | { type: 'listening'; port: number };

export type PrimaryToWorker =
  | { type: 'deliver'; messages: StreamMessage[] }
  | { type: 'history.result'; id: number; result: HistoryResult }
  | { type: 'session.result'; id: number; state: string | null }
  | { type: 'stats.result'; id: number; stats: BrokerStats }
  | { type: 'stop' };

/** A message pipe in one direction pair; `process` in a worker, a `cluster.Worker` in the primary, or an in-memory pair in tests. */
export interface IpcChannel<Out, In> {
  send(msg: Out): void;
  onMessage(fn: (msg: In) => void): () => void;
}

const isObj = (m: unknown): m is { type: unknown } => typeof m === 'object' && m !== null && 'type' in m;

/** The worker side: a Broker whose storage is the primary's. */
export class IpcBroker implements Broker {
  readonly kind = 'ipc';
  private seq = 0;
  private readonly pending = new Map<number, (m: PrimaryToWorker) => void>();
  private readonly listeners = new Set<MessagesListener>();
  private readonly off: () => void;

  constructor(
    private readonly channel: IpcChannel<WorkerToPrimary, PrimaryToWorker>,
    private readonly requestTimeoutMs = 5000,
  ) {
    this.off = channel.onMessage((m) => this.receive(m));
  }

  private receive(m: PrimaryToWorker): void {
    if (!isObj(m)) return;
    switch (m.type) {
      case 'deliver':
        for (const l of this.listeners) l(m.messages);
        return;
      case 'history.result':
      case 'session.result':
      case 'stats.result': {
        const done = this.pending.get(m.id);
        if (done) {
          this.pending.delete(m.id);
          done(m);
        }
        return;
      }
      case 'stop':
        return; // handled by the worker's process wiring
      default: {
        const never: never = m;
        void never;
      }
    }
  }

  private request<T>(build: (id: number) => WorkerToPrimary, pick: (m: PrimaryToWorker) => T): Promise<T> {
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`broker request ${id} timed out`));
      }, this.requestTimeoutMs);
      timer.unref();
      this.pending.set(id, (m) => {
        clearTimeout(timer);
        resolve(pick(m));
      });
      this.channel.send(build(id));
    });
  }

  async publish(items: readonly PublishItem[]): Promise<void> {
    this.channel.send({ type: 'publish', items: items as PublishItem[] });
  }

  onMessages(listener: MessagesListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  history(stream: string, position: HistoryPosition): Promise<HistoryResult> {
    return this.request(
      (id) => ({ type: 'history', id, stream, position }),
      (m) => (m.type === 'history.result' ? m.result : { ok: false, reason: 'stream_not_found' }),
    );
  }

  async commitSession(sid: string, state: string): Promise<void> {
    this.channel.send({ type: 'session.commit', sid, state });
  }

  restoreSession(sid: string): Promise<string | undefined> {
    return this.request(
      (id) => ({ type: 'session.restore', id, sid }),
      (m) => (m.type === 'session.result' && m.state !== null ? m.state : undefined),
    );
  }

  stats(): Promise<BrokerStats> {
    return this.request(
      (id) => ({ type: 'stats', id }),
      (m) => (m.type === 'stats.result' ? m.stats : { kind: 'ipc', historyStreams: 0, historyMessages: 0, sessions: 0, published: 0 }),
    );
  }

  async close(): Promise<void> {
    this.off();
    this.listeners.clear();
    this.pending.clear();
  }
}

/**
 * The primary side: serve every attached worker from one MemoryBroker. Stored messages are
 * batched per event-loop turn into one `deliver` per worker.
 */
export function servePrimary(broker: MemoryBroker) {
  const channels = new Set<IpcChannel<PrimaryToWorker, WorkerToPrimary>>();
  const workerStats = new Map<IpcChannel<PrimaryToWorker, WorkerToPrimary>, WorkerStats>();
  const clusterStats = (): ClusterStats => {
    const perWorker = [...workerStats.values()];
    const sum = (k: 'connections' | 'subscriptions' | 'deliveries') => perWorker.reduce((n, w) => n + w[k], 0);
    return { workers: channels.size, connections: sum('connections'), subscriptions: sum('subscriptions'), deliveries: sum('deliveries'), perWorker };
  };
  let queue: StreamMessage[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const messages = queue;
    queue = [];
    for (const ch of channels) ch.send({ type: 'deliver', messages });
  };
  broker.onMessages((msgs) => {
    for (const m of msgs) queue.push(m);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });

  const handle = (ch: IpcChannel<PrimaryToWorker, WorkerToPrimary>, m: WorkerToPrimary) => {
    switch (m.type) {
      case 'publish':
        broker.publishSync(m.items);
        return;
      case 'history':
        ch.send({ type: 'history.result', id: m.id, result: broker.historySync(m.stream, m.position) });
        return;
      case 'session.commit':
        broker.commitSessionSync(m.sid, m.state);
        return;
      case 'session.restore':
        ch.send({ type: 'session.result', id: m.id, state: broker.restoreSessionSync(m.sid) ?? null });
        return;
      case 'stats':
        ch.send({ type: 'stats.result', id: m.id, stats: { ...broker.statsSync(), cluster: clusterStats() } });
        return;
      case 'worker.stats':
        workerStats.set(ch, m.stats);
        return;
      case 'listening':
        return; // cluster bookkeeping, see cluster/
      default: {
        const never: never = m;
        void never;
      }
    }
  };

  return {
    attach(ch: IpcChannel<PrimaryToWorker, WorkerToPrimary>): () => void {
      channels.add(ch);
      const off = ch.onMessage((m) => {
        if (isObj(m)) handle(ch, m);
      });
      return () => {
        off();
        channels.delete(ch);
        workerStats.delete(ch);
      };
    },
    /** Sums of the workers' latest self-reports. */
    clusterStats,
    broadcast(msg: PrimaryToWorker): void {
      for (const ch of channels) ch.send(msg);
    },
  };
}

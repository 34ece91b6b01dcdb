import { PendingRequests } from '../../common/cluster/requests.ts';
import { isObj, type IpcChannel } from '../../common/cluster/wire.ts';
import type { MemoryBroker } from './memory.ts';
import type { Broker, BrokerStats, ClusterStats, HistoryPage, HistoryPosition, HistoryResult, MessagesListener, PublishItem, SessionChange, StreamMessage, WorkerStats } from './types.ts';

/**
 * History crosses the process boundary in pages of at most this many bytes (at least one message)
 * whatever the caller asks: one IPC message per page, never the whole backlog in one string.
 */
export const IPC_HISTORY_PAGE_BYTES = 1_048_576;

/**
 * Cluster mode: the primary owns one MemoryBroker (one offset sequence and one history per
 * stream); workers reach it through `IpcBroker`. Every publish, wherever it arrives, goes to the
 * primary, which assigns offsets and fans the stored messages out to all workers in one order.
 */

export type WorkerToPrimary =
  /** With `id` the primary answers `publish.result` once stored (201 means stored); whispers omit it. */
  | { type: 'publish'; id?: number; items: PublishItem[] }
  | { type: 'history'; id: number; stream: string; position: HistoryPosition; maxBytes?: number }
  | { type: 'session.commit'; sid: string; state: string }
  | { type: 'session.update'; sid: string; change: SessionChange }
  | { type: 'reload'; id: number }
  | { type: 'session.restore'; id: number; sid: string }
  | { type: 'stats'; id: number }
  | { type: 'worker.stats'; stats: WorkerStats }
  | { type: 'listening'; port: number };

export type PrimaryToWorker =
  | { type: 'deliver'; messages: StreamMessage[] }
  | { type: 'publish.result'; id: number; error: string | null }
  /** `leaving`: the asking worker goes next (it is the last of the reload): see runWorker. */
  | { type: 'reload.result'; id: number; status: number; body: unknown; leaving?: true }
  | { type: 'history.result'; id: number; result: HistoryResult }
  | { type: 'session.result'; id: number; state: string | null }
  | { type: 'stats.result'; id: number; stats: BrokerStats }
  | { type: 'stop' };

export type { IpcChannel };

/** The worker side: a Broker whose storage is the primary's. */
export class IpcBroker implements Broker {
  readonly kind = 'ipc';
  private readonly pending: PendingRequests<Extract<PrimaryToWorker, { id: number }>>;
  private readonly listeners = new Set<MessagesListener>();
  private readonly off: () => void;

  constructor(
    private readonly channel: IpcChannel<WorkerToPrimary, PrimaryToWorker>,
    requestTimeoutMs = 5000,
  ) {
    this.pending = new PendingRequests(requestTimeoutMs);
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
      case 'publish.result':
      case 'reload.result':
      case 'stats.result':
        this.pending.settle(m);
        return;
      case 'stop':
        return; // handled by the worker's process wiring
      default: {
        const never: never = m;
        void never;
      }
    }
  }

  /** One request/answer over the channel (public for the cluster's admin messages). */
  request<T>(build: (id: number) => WorkerToPrimary, pick: (m: PrimaryToWorker) => T, timeoutMs?: number): Promise<T> {
    return this.pending.request((id) => this.channel.send(build(id)), pick, timeoutMs);
  }

  /** Resolves once the primary stored the items (rejects if it failed or did not answer). */
  async publish(items: readonly PublishItem[]): Promise<void> {
    if (items.every((i) => i.transient)) {
      this.channel.send({ type: 'publish', items: items as PublishItem[] }); // whispers: nothing to store, nothing to wait for
      return;
    }
    const error = await this.request(
      (id) => ({ type: 'publish', id, items: items as PublishItem[] }),
      (m) => (m.type === 'publish.result' ? m.error : 'unexpected answer'),
    );
    if (error !== null) throw new Error(`primary did not store the broadcast: ${error}`);
  }

  onMessages(listener: MessagesListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  history(stream: string, position: HistoryPosition, page?: HistoryPage): Promise<HistoryResult> {
    const maxBytes = Math.min(page?.maxBytes ?? IPC_HISTORY_PAGE_BYTES, IPC_HISTORY_PAGE_BYTES);
    return this.request(
      (id) => ({ type: 'history', id, stream, position, maxBytes }),
      (m) => (m.type === 'history.result' ? m.result : { ok: false, reason: 'stream_not_found' }),
    );
  }

  async commitSession(sid: string, state: string): Promise<void> {
    this.channel.send({ type: 'session.commit', sid, state });
  }

  async updateSession(sid: string, change: SessionChange): Promise<void> {
    this.channel.send({ type: 'session.update', sid, change });
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
export function servePrimary(broker: MemoryBroker, hooks: { cluster?(): ClusterStats; reload?(ch: IpcChannel<PrimaryToWorker, WorkerToPrimary>, id: number): void } = {}) {
  const channels = new Set<IpcChannel<PrimaryToWorker, WorkerToPrimary>>();
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
      case 'publish': {
        let error: string | null = null;
        try {
          broker.publishSync(m.items);
        } catch (err) {
          error = err instanceof Error ? err.message : String(err);
        }
        if (m.id !== undefined) ch.send({ type: 'publish.result', id: m.id, error });
        return;
      }
      case 'history': {
        const maxBytes = Math.min(m.maxBytes ?? IPC_HISTORY_PAGE_BYTES, IPC_HISTORY_PAGE_BYTES);
        ch.send({ type: 'history.result', id: m.id, result: broker.historySync(m.stream, m.position, { maxBytes }) });
        return;
      }
      case 'session.commit':
        broker.commitSessionSync(m.sid, m.state);
        return;
      case 'session.update':
        broker.updateSessionSync(m.sid, m.change);
        return;
      case 'reload':
        if (hooks.reload) hooks.reload(ch, m.id);
        else ch.send({ type: 'reload.result', id: m.id, status: 400, body: null });
        return;
      case 'session.restore':
        ch.send({ type: 'session.result', id: m.id, state: broker.restoreSessionSync(m.sid) ?? null });
        return;
      case 'stats':
        ch.send({ type: 'stats.result', id: m.id, stats: { ...broker.statsSync(), ...(hooks.cluster ? { cluster: hooks.cluster() } : {}) } });
        return;
      case 'worker.stats':
      case 'listening':
        return; // the pool's bookkeeping (common/cluster/pool.ts)
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
      };
    },
    broadcast(msg: PrimaryToWorker): void {
      for (const ch of channels) ch.send(msg);
    },
  };
}

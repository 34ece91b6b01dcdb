import { randomInt } from 'node:crypto';
import type { Broker, BrokerOptions, BrokerStats, HistoryPosition, HistoryResult, MessagesListener, PublishItem, StreamMessage } from './types.ts';

interface StreamState {
  epoch: string;
  /** Last offset assigned; the counter survives TTL eviction of the entries themselves. */
  last: number;
  entries: StreamMessage[];
  lastAddMs: number;
}


export interface MemoryBrokerOptions extends BrokerOptions {
  /** Injectable clock (ms). @default Date.now */
  now?: () => number;
  /** Sweep period for expired history/sessions. @default 1000 */
  sweepIntervalMs?: number;
  /** Fixed process epoch (tests). @default random */
  epoch?: string;
}

/**
 * anycable-go's memory broker semantics, with two deliberate differences (docs/replay-server.md):
 * - a resume from offset N is served when N+1 is still retained (anycable-go wants N itself), so
 *   a client exactly one past the retention window still gets a gap-free backlog;
 * - a stream dropped after 10 × TTL of silence comes back with a new epoch (anycable-go restarts
 *   offsets under the same epoch), so a stale position can never alias a new message.
 */
export class MemoryBroker implements Broker {
  readonly kind = 'memory';
  readonly epoch: string;
  private readonly streams = new Map<string, StreamState>();
  // Two maps instead of one of {state, expiresMs} objects: the expiry is a small integer
  // (deciseconds since the broker started) stored inline, so a session costs two map slots and
  // no objects (the state string itself is shared, see session/encodeSession).
  private readonly sessions = new Map<string, string>();
  private readonly sessionExpiry = new Map<string, number>();
  private readonly t0: number;
  private readonly listeners = new Set<MessagesListener>();
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout;
  private generation = 0;
  private published = 0;
  private storedCount = 0;

  constructor(private readonly opts: MemoryBrokerOptions) {
    this.now = opts.now ?? Date.now;
    this.t0 = this.now();
    this.epoch = opts.epoch ?? randomInt(36 ** 4).toString(36).padStart(4, '0');
    this.timer = setInterval(() => this.sweep(), opts.sweepIntervalMs ?? 1000);
    this.timer.unref();
  }

  /** Synchronous core of `publish`, used directly by the cluster primary. */
  publishSync(items: readonly PublishItem[]): StreamMessage[] {
    const nowMs = this.now();
    const out: StreamMessage[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      const msg: StreamMessage = { stream: it.stream, message: it.message };
      if (it.exclude !== undefined) msg.exclude = it.exclude;
      if (!it.transient) {
        const s = this.streamFor(it.stream, nowMs);
        msg.epoch = s.epoch;
        msg.offset = ++s.last;
        msg.ts = Math.floor(nowMs / 1000);
        s.lastAddMs = nowMs;
        s.entries.push(msg);
        this.storedCount++;
        if (s.entries.length > this.opts.historyLimit) {
          s.entries.shift();
          this.storedCount--;
        }
      }
      out[i] = msg;
    }
    this.published += items.length;
    for (const l of this.listeners) l(out);
    return out;
  }

  async publish(items: readonly PublishItem[]): Promise<void> {
    this.publishSync(items);
  }

  onMessages(listener: MessagesListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  historySync(stream: string, position: HistoryPosition): HistoryResult {
    const s = this.streams.get(stream);
    if ('since' in position) {
      if (!s) return { ok: true, messages: [] };
      return { ok: true, messages: s.entries.filter((m) => (m.ts ?? 0) >= position.since) };
    }
    if (!s) return { ok: false, reason: 'stream_not_found' };
    if (position.epoch !== s.epoch) return { ok: false, reason: 'unknown_epoch' };
    const { offset } = position;
    if (offset > s.last) return { ok: false, reason: 'offset_ahead' };
    if (offset === s.last) return { ok: true, messages: [] };
    const low = s.entries[0]?.offset ?? s.last + 1;
    // Everything after `offset` must still be retained, or the backlog would have a hole.
    if (offset + 1 < low) return { ok: false, reason: 'offset_evicted' };
    return { ok: true, messages: s.entries.slice(offset + 1 - low) };
  }

  async history(stream: string, position: HistoryPosition): Promise<HistoryResult> {
    return this.historySync(stream, position);
  }

  commitSessionSync(sid: string, state: string): void {
    if (this.opts.sessionTtlSec <= 0) return;
    this.sessions.set(sid, state);
    this.sessionExpiry.set(sid, this.ds(this.now()) + this.opts.sessionTtlSec * 10);
  }

  async commitSession(sid: string, state: string): Promise<void> {
    this.commitSessionSync(sid, state);
  }

  restoreSessionSync(sid: string): string | undefined {
    const state = this.sessions.get(sid);
    if (state === undefined) return undefined;
    if ((this.sessionExpiry.get(sid) ?? 0) <= this.ds(this.now())) {
      this.sessions.delete(sid);
      this.sessionExpiry.delete(sid);
      return undefined;
    }
    return state;
  }

  async restoreSession(sid: string): Promise<string | undefined> {
    return this.restoreSessionSync(sid);
  }

  statsSync(): BrokerStats {
    return { kind: this.kind, historyStreams: this.streams.size, historyMessages: this.storedCount, sessions: this.sessions.size, published: this.published };
  }

  async stats(): Promise<BrokerStats> {
    return this.statsSync();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.listeners.clear();
  }

  /** Drop expired history entries, long-silent streams and expired sessions. Public for tests. */
  sweep(): void {
    const nowMs = this.now();
    const minTs = Math.floor(nowMs / 1000) - this.opts.historyTtlSec;
    const streamTtlMs = 10 * this.opts.historyTtlSec * 1000;
    for (const [name, s] of this.streams) {
      let n = 0;
      while (n < s.entries.length && (s.entries[n]!.ts ?? 0) < minTs) n++;
      if (n > 0) {
        s.entries.splice(0, n);
        this.storedCount -= n;
      }
      if (s.entries.length === 0 && nowMs - s.lastAddMs > streamTtlMs) this.streams.delete(name);
    }
    const nowDs = this.ds(nowMs);
    for (const [sid, exp] of this.sessionExpiry) {
      if (exp > nowDs) continue;
      this.sessionExpiry.delete(sid);
      this.sessions.delete(sid);
    }
  }

  /** Deciseconds since the broker started: a small integer for session expiries. */
  private ds(ms: number): number {
    return Math.floor((ms - this.t0) / 100);
  }

  private streamFor(stream: string, nowMs: number): StreamState {
    let s = this.streams.get(stream);
    if (!s) {
      s = { epoch: `${this.epoch}-${(this.generation++).toString(36)}`, last: 0, entries: [], lastAddMs: nowMs };
      this.streams.set(stream, s);
    }
    return s;
  }
}

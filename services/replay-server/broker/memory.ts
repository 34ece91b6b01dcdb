import { randomInt } from 'node:crypto';
import { decodeSession, encodeSession } from '../session/index.ts';
import type { Broker, BrokerOptions, BrokerStats, HistoryPage, HistoryPosition, HistoryResult, MessagesListener, PublishItem, SessionChange, StreamMessage } from './types.ts';

/** What one stored session costs besides its identifiers (sid, map slot, entry), for the bytes cap. */
export const SESSION_OVERHEAD_BYTES = 64;
/** Seconds a publish's idempotency key is remembered by default. */
export const DEFAULT_IDEMPOTENCY_WINDOW_SEC = 300;
/**
 * What one stream costs besides its messages and its name (map slot, state object, epoch string,
 * entries array), counted with the messages against historyMaxBytes so that many tiny streams hit
 * the budget too. bench/replay-streams.ts measured about 440 bytes of heap per stream holding one
 * message, of which about 170 are the message's own entry.
 */
export const STREAM_OVERHEAD_BYTES = 320;
/** Streams kept by default (memory and Redis brokers); the least recently published goes first. */
export const DEFAULT_MAX_STREAMS = 100_000;
/** Idempotency keys the memory broker remembers at most (about 100 bytes each): oldest forgotten first. */
export const MAX_IDEMPOTENCY_KEYS = 100_000;

/** One restorable session: its identifiers (a single one inline), their bytes and its expiry. */
interface SessionEntry {
  ids: string | string[];
  bytes: number;
  /** Deciseconds since the broker started. */
  exp: number;
}

const idsOf = (e: SessionEntry): string[] => (typeof e.ids === 'string' ? [e.ids] : e.ids);

interface StreamState {
  /** The stream's name: every stored message refers to this one string, not to its own copy. */
  name: string;
  epoch: string;
  /** Last offset assigned; the counter survives TTL eviction of the entries themselves. */
  last: number;
  entries: StreamMessage[];
  lastAddMs: number;
  /** Sum of the retained entries' message lengths. */
  bytes: number;
}

/** A stream's share of the byte budget: its fixed overhead and its name. */
export const streamCost = (name: string): number => STREAM_OVERHEAD_BYTES + name.length;


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
 *   offsets under the same epoch), so a stale position can never alias a new message. A stream
 *   evicted by maxStreams or the byte budget comes back the same way.
 */
export class MemoryBroker implements Broker {
  readonly kind = 'memory';
  readonly epoch: string;
  /**
   * Streams in last-publish order (a publish re-inserts), split so that the sweep only touches
   * what expires: `live` may hold unexpired messages, `quiet` streams' whole history expired and
   * they keep only their offset counter (a caught-up client still resumes) until 10 x TTL of
   * silence. Every quiet stream was published before every live one, so the least recently
   * published stream is the head of `quiet`, else of `live`.
   */
  private readonly live = new Map<string, StreamState>();
  private readonly quiet = new Map<string, StreamState>();
  /** Fixed overhead + name of every stream held (STREAM_OVERHEAD_BYTES each), counted against historyMaxBytes. */
  private streamBytes = 0;
  private streamsEvicted = 0;
  /** Entries (streams and sessions) the last sweep looked at: what expired plus one per order. For tests. */
  sweepVisits = 0;
  // Insertion order is change order (an update re-inserts), so the first entry is the one to
  // evict. Identifier strings are the hub's interned copies in a single process: not duplicated.
  private readonly sessions = new Map<string, SessionEntry>();
  private sessionBytes = 0;
  private sessionsEvicted = 0;
  private readonly t0: number;
  private readonly listeners = new Set<MessagesListener>();
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout;
  private generation = 0;
  private published = 0;
  private storedCount = 0;
  /** Message bytes (string length) held in every stream's history. */
  private historyBytes = 0;
  private historyEvictedBytes = 0;
  private historyEvictedMessages = 0;
  /**
   * Store order across streams (oldest first from `orderHead`): the whole-broker cap evicts from
   * here. The stored messages themselves (stale once their stream trimmed them), not a record per
   * message: every message is retained for the history's life, and an object more each doubled
   * what the garbage collector promotes and marks per publish besides the message itself.
   */
  private order: StreamMessage[] = [];
  private orderHead = 0;
  /** Idempotency key -> expiry (ms); insertion order is expiry order (one window), so the head expires first. */
  private readonly idem = new Map<string, number>();
  private duplicatesSuppressed = 0;

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
    const out: StreamMessage[] = [];
    const windowMs = (this.opts.idempotencyWindowSec ?? DEFAULT_IDEMPOTENCY_WINDOW_SEC) * 1000;
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      if (it.idempotencyKey !== undefined && !it.transient) {
        const k = `${it.stream}\u0000${it.idempotencyKey}`;
        const exp = this.idem.get(k);
        if (exp !== undefined && exp > nowMs) {
          this.duplicatesSuppressed++;
          continue;
        }
        this.idem.delete(k);
        this.idem.set(k, nowMs + windowMs);
        // Bounded: expired keys from the head, and never more than MAX_IDEMPOTENCY_KEYS.
        for (const [hk, hexp] of this.idem) {
          if (hexp > nowMs && this.idem.size <= MAX_IDEMPOTENCY_KEYS) break;
          this.idem.delete(hk);
        }
      }
      const msg: StreamMessage = it.transient ? { stream: it.stream, message: it.message } : this.store(it.stream, it.message, nowMs);
      if (it.exclude !== undefined) msg.exclude = it.exclude;
      out.push(msg);
    }
    this.published += out.length;
    if (out.length > 0) for (const l of this.listeners) l(out);
    return out;
  }

  /**
   * Store one message in its stream's history, under the count, byte and TTL caps. It is built
   * whole: one object with its fields in the object itself (fields added one by one after a
   * two-field literal spill into a second object), since it lives as long as the history and is
   * what the garbage collector promotes and marks; its stream name is the stream's own string.
   */
  private store(stream: string, message: string, nowMs: number): StreamMessage {
    const s = this.streamFor(stream, nowMs);
    this.trimExpired(s, nowMs);
    const msg: StreamMessage = { stream: s.name, message, epoch: s.epoch, offset: ++s.last, ts: Math.floor(nowMs / 1000) };
    s.lastAddMs = nowMs;
    s.entries.push(msg);
    s.bytes += message.length;
    this.historyBytes += message.length;
    this.storedCount++;
    if (this.opts.historyMaxBytes !== undefined) this.order.push(msg);
    const maxStream = this.opts.historyStreamMaxBytes ?? Infinity;
    // Count and bytes per stream; the newest entry always stays (a message fits by the size limit).
    while (s.entries.length > this.opts.historyLimit || (s.bytes > maxStream && s.entries.length > 1)) this.dropHead(s, true);
    this.capTotal(s, nowMs);
    return msg;
  }

  async publish(items: readonly PublishItem[]): Promise<void> {
    this.publishSync(items);
  }

  onMessages(listener: MessagesListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  historySync(stream: string, position: HistoryPosition, page?: HistoryPage): HistoryResult {
    const s = this.stateOf(stream);
    // The sweep only empties streams whose whole history expired: an active stream's expired head goes here.
    if (s) this.trimExpired(s, this.now());
    if ('since' in position) {
      if (!s) return { ok: true, messages: [] };
      let i = 0;
      while (i < s.entries.length && (s.entries[i]!.ts ?? 0) < position.since) i++;
      return this.pageFrom(s.entries, i, page);
    }
    if (!s) return { ok: false, reason: 'stream_not_found' };
    if (position.epoch !== s.epoch) return { ok: false, reason: 'unknown_epoch' };
    const { offset } = position;
    if (offset > s.last) return { ok: false, reason: 'offset_ahead' };
    if (offset === s.last) return { ok: true, messages: [] };
    const low = s.entries[0]?.offset ?? s.last + 1;
    // Everything after `offset` must still be retained, or the backlog would have a hole.
    if (offset + 1 < low) return { ok: false, reason: 'offset_evicted' };
    return this.pageFrom(s.entries, offset + 1 - low, page);
  }

  /** Entries from index `i`: all of them, or a page of about `page.maxBytes` (at least one). */
  private pageFrom(entries: StreamMessage[], i: number, page: HistoryPage | undefined): HistoryResult {
    if (!page) return { ok: true, messages: entries.slice(i) };
    let end = i;
    let bytes = 0;
    while (end < entries.length && (end === i || bytes + entries[end]!.message.length <= page.maxBytes)) bytes += entries[end++]!.message.length;
    return end < entries.length ? { ok: true, messages: entries.slice(i, end), more: true } : { ok: true, messages: entries.slice(i, end) };
  }

  async history(stream: string, position: HistoryPosition, page?: HistoryPage): Promise<HistoryResult> {
    return this.historySync(stream, position, page);
  }

  /** Replace a session's state (decoded to identifiers, so the caps account for it like any update). */
  commitSessionSync(sid: string, state: string): void {
    if (this.opts.sessionTtlSec <= 0) return;
    this.dropSession(sid);
    this.updateSessionSync(sid, { add: decodeSession(state) });
  }

  async commitSession(sid: string, state: string): Promise<void> {
    this.commitSessionSync(sid, state);
  }

  /** Incremental: a subscribe costs its own identifier, never a re-encoding of the whole session. */
  updateSessionSync(sid: string, change: SessionChange): void {
    if (this.opts.sessionTtlSec <= 0) return;
    let e = this.sessions.get(sid);
    // A touch or a removal does not bring back a session that expired or was evicted.
    if (!e && !change.add?.length) return;
    const before = e?.bytes ?? 0;
    if (e) this.sessions.delete(sid); // re-inserted below: most recently changed goes last
    else e = { ids: [], bytes: SESSION_OVERHEAD_BYTES + sid.length, exp: 0 };
    if (change.remove?.length) {
      const drop = new Set(change.remove);
      const kept = idsOf(e).filter((id) => !drop.has(id));
      e.ids = kept;
      e.bytes = SESSION_OVERHEAD_BYTES + sid.length + kept.reduce((n, id) => n + id.length, 0);
    }
    for (const id of change.add ?? []) {
      const ids = idsOf(e);
      if (ids.includes(id)) continue;
      e.ids = ids.length === 0 ? id : [...ids, id];
      e.bytes += id.length;
    }
    if (Array.isArray(e.ids) && e.ids.length === 1) e.ids = e.ids[0]!;
    e.exp = this.ds(this.now()) + this.opts.sessionTtlSec * 10;
    this.sessions.set(sid, e);
    this.sessionBytes += e.bytes - before;
    this.evictSessions();
  }

  async updateSession(sid: string, change: SessionChange): Promise<void> {
    this.updateSessionSync(sid, change);
  }

  /** Oldest change first, until both caps hold. */
  private evictSessions(): void {
    const maxCount = this.opts.maxSessions ?? Infinity;
    const maxBytes = this.opts.maxSessionStoreBytes ?? Infinity;
    while (this.sessions.size > 0 && (this.sessions.size > maxCount || this.sessionBytes > maxBytes)) {
      const oldest = this.sessions.keys().next().value!;
      this.dropSession(oldest);
      this.sessionsEvicted++;
    }
  }

  private dropSession(sid: string): void {
    const e = this.sessions.get(sid);
    if (!e) return;
    this.sessions.delete(sid);
    this.sessionBytes -= e.bytes;
  }

  restoreSessionSync(sid: string): string | undefined {
    const e = this.sessions.get(sid);
    if (e === undefined) return undefined;
    if (e.exp <= this.ds(this.now())) {
      this.dropSession(sid);
      return undefined;
    }
    return encodeSession(idsOf(e));
  }

  async restoreSession(sid: string): Promise<string | undefined> {
    return this.restoreSessionSync(sid);
  }

  statsSync(): BrokerStats {
    return { kind: this.kind, historyStreams: this.live.size + this.quiet.size, streamBytes: this.streamBytes, streamsEvicted: this.streamsEvicted, historyMessages: this.storedCount, sessions: this.sessions.size, sessionBytes: this.sessionBytes, sessionsEvicted: this.sessionsEvicted, published: this.published, duplicatesSuppressed: this.duplicatesSuppressed, historyBytes: this.historyBytes, historyEvictedBytes: this.historyEvictedBytes, historyEvictedMessages: this.historyEvictedMessages };
  }

  async stats(): Promise<BrokerStats> {
    return this.statsSync();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.listeners.clear();
  }

  /**
   * Drop expired history, long-silent streams and expired sessions. Each kind is kept in expiry
   * order, so a sweep stops at the first entry still alive: its cost is what expires, not what is
   * held (bench/replay-streams.ts). Public for tests.
   */
  sweep(): void {
    const nowMs = this.now();
    const minTs = Math.floor(nowMs / 1000) - this.opts.historyTtlSec;
    const streamTtlMs = 10 * this.opts.historyTtlSec * 1000;
    let visits = 0;
    // A live stream's newest message is as old as its last publish: once that expired, all did.
    for (const [name, s] of this.live) {
      visits++;
      if (Math.floor(s.lastAddMs / 1000) >= minTs) break;
      this.clearEntries(s, minTs);
      this.live.delete(name);
      this.quiet.set(name, s);
    }
    for (const [name, s] of this.quiet) {
      visits++;
      if (nowMs - s.lastAddMs <= streamTtlMs) break;
      this.quiet.delete(name);
      this.streamBytes -= streamCost(name);
    }
    const nowDs = this.ds(nowMs);
    // Change order is expiry order (one TTL, a change re-inserts).
    for (const [sid, e] of this.sessions) {
      visits++;
      if (e.exp > nowDs) break;
      this.dropSession(sid);
    }
    this.sweepVisits = visits;
  }

  /** Drop a stream's expired head (reads and publishes call it; the sweep handles whole streams). */
  private trimExpired(s: StreamState, nowMs: number): void {
    const minTs = Math.floor(nowMs / 1000) - this.opts.historyTtlSec;
    while (s.entries.length > 0 && (s.entries[0]!.ts ?? 0) < minTs) this.dropHead(s, false);
  }

  /** Drop all of a stream's entries at once: the expired ones by TTL, the rest counted as evicted. */
  private clearEntries(s: StreamState, minTs: number): void {
    for (const e of s.entries) {
      const n = e.message.length;
      this.historyBytes -= n;
      this.storedCount--;
      if ((e.ts ?? 0) >= minTs) {
        this.historyEvictedBytes += n;
        this.historyEvictedMessages++;
      }
    }
    s.entries = [];
    s.bytes = 0;
  }

  /** The least recently published stream (see `live`/`quiet`). */
  private leastRecent(): [string, StreamState] | undefined {
    return (this.quiet.size > 0 ? this.quiet : this.live).entries().next().value;
  }

  /**
   * Forget a whole stream before its time (a cap): its history goes, and a later publish starts it
   * again under a new epoch, so a client resuming from the old one is told its history is gone.
   */
  private evictStream(name: string, s: StreamState, nowMs: number): void {
    this.clearEntries(s, Math.floor(nowMs / 1000) - this.opts.historyTtlSec);
    if (!this.live.delete(name)) this.quiet.delete(name);
    this.streamBytes -= streamCost(name);
    this.streamsEvicted++;
  }

  /** Drop a stream's oldest entry; `evicted`: by a cap (counted), not by TTL. */
  private dropHead(s: StreamState, evicted: boolean): void {
    const e = s.entries.shift();
    if (!e) return;
    s.bytes -= e.message.length;
    this.historyBytes -= e.message.length;
    this.storedCount--;
    if (evicted) {
      this.historyEvictedBytes += e.message.length;
      this.historyEvictedMessages++;
    }
  }

  /**
   * The whole-broker byte budget (messages + streams' fixed overhead): a least recently published
   * stream with no live message goes whole first (it only holds an offset counter), then the oldest
   * stored message of any stream, and with none left the least recently published stream. `keep`
   * (the stream just published) is never dropped whole.
   */
  private capTotal(keep: StreamState, nowMs: number): void {
    const max = this.opts.historyMaxBytes;
    if (max === undefined) return;
    const minTs = Math.floor(nowMs / 1000) - this.opts.historyTtlSec;
    while (this.historyBytes + this.streamBytes > max) {
      const lru = this.leastRecent();
      const evictable = lru !== undefined && lru[1] !== keep;
      if (evictable && (lru[1].entries.length === 0 || Math.floor(lru[1].lastAddMs / 1000) < minTs)) this.evictStream(lru[0], lru[1], nowMs);
      else if (!this.dropOldest()) {
        if (!evictable) break;
        this.evictStream(lru[0], lru[1], nowMs);
      }
    }
    this.compactOrder();
  }

  /** Evict the oldest stored message still held, whichever stream holds it; false when none is. */
  private dropOldest(): boolean {
    while (this.orderHead < this.order.length) {
      const m = this.order[this.orderHead++]!;
      // Live only if still its stream's head (TTL, count and stream caps trim heads too; an evicted
      // stream holds none, and one published again since is a new state with other messages).
      const s = this.stateOf(m.stream);
      if (s !== undefined && s.entries[0] === m) {
        this.dropHead(s, true);
        return true;
      }
    }
    return false;
  }

  private stateOf(stream: string): StreamState | undefined {
    return this.live.get(stream) ?? this.quiet.get(stream);
  }

  /** The message is still held: its stream's current state (same epoch) has not trimmed past it. */
  private holds(m: StreamMessage): boolean {
    const head = this.stateOf(m.stream)?.entries[0];
    return head !== undefined && head.epoch === m.epoch && head.offset! <= m.offset!;
  }

  private compactOrder(): void {
    // Stale items (trimmed by other caps) pile up behind the head: compact now and then.
    if (this.orderHead > 1024 && this.orderHead * 2 > this.order.length) {
      this.order = this.order.slice(this.orderHead);
      this.orderHead = 0;
    }
    if (this.order.length - this.orderHead > 2 * this.storedCount + 1024) {
      this.order = this.order.slice(this.orderHead).filter((m) => this.holds(m));
      this.orderHead = 0;
    }
  }

  /** Deciseconds since the broker started: a small integer for session expiries. */
  private ds(ms: number): number {
    return Math.floor((ms - this.t0) / 100);
  }

  /** The stream, moved to the most recently published end; a new one may push the least recent out (maxStreams). */
  private streamFor(stream: string, nowMs: number): StreamState {
    let s = this.live.get(stream);
    if (s) this.live.delete(stream);
    else if ((s = this.quiet.get(stream))) this.quiet.delete(stream);
    else {
      s = { name: stream, epoch: `${this.epoch}-${(this.generation++).toString(36)}`, last: 0, entries: [], lastAddMs: nowMs, bytes: 0 };
      this.streamBytes += streamCost(stream);
      const max = this.opts.maxStreams ?? DEFAULT_MAX_STREAMS;
      // The new stream is not in a map yet, so it cannot be the one pushed out.
      while (this.live.size + this.quiet.size >= max) {
        const [name, old] = this.leastRecent()!;
        this.evictStream(name, old, nowMs);
      }
    }
    this.live.set(stream, s);
    return s;
  }
}

import { randomInt } from 'node:crypto';
import { decodeSession, encodeSession } from '../session/index.ts';
import { OrderLog } from './order-log.ts';
import type { Broker, BrokerOptions, BrokerStats, HistoryPage, HistoryPosition, HistoryResult, MessagesListener, PublishItem, SessionChange, StreamMessage } from './types.ts';

/** What one stored session costs besides its identifiers (sid, map slot, entry), for the bytes cap. */
export const SESSION_OVERHEAD_BYTES = 64;
/** Seconds a publish's idempotency key is remembered by default. */
export const DEFAULT_IDEMPOTENCY_WINDOW_SEC = 300;
/**
 * What one stream costs besides its messages and its name (map slot, state object, epoch string,
 * entries array), counted with the messages against historyMaxBytes so that many tiny streams hit
 * the budget too. bench/replay-streams.ts measured about 320 bytes of heap per stream holding one
 * small message.
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

/**
 * One stream's history. The retained messages are stored as their text and stamp only, oldest
 * first, and their offsets are implied: retained offsets are contiguous (only the oldest is ever
 * dropped), the newest being `last`. A `StreamMessage` is built when one is handed out (a publish's
 * fan-out, a history page) and dies young; a stored object per message (with the stream, epoch
 * and offset in it) was what every publish made the garbage collector promote and then mark for
 * the history's life, besides the text itself.
 */
interface StreamState {
  /** The stream's name: every handed-out message refers to this one string, not to its own copy. */
  name: string;
  epoch: string;
  /** Last offset assigned; the counter survives TTL eviction of the entries themselves. */
  last: number;
  /**
   * Retained message texts, a ring: `count` of them from index `head`, oldest first (offsets
   * `last - count + 1` .. `last`); the capacity is a power of two and doubles when full. Dropping
   * the oldest moves `head` (`shift()` re-laid the whole array out on every publish of a full
   * history).
   */
  texts: Array<string | undefined>;
  /** Unix seconds each was stored (`since` reads, the TTL), in the same slots as `texts`. */
  stamps: number[];
  head: number;
  count: number;
  lastAddMs: number;
  /** Sum of the retained entries' message lengths. */
  bytes: number;
}

/** Offset of a stream's oldest retained message (`last + 1` when it holds none). */
const firstOffset = (s: StreamState): number => s.last - s.count + 1;
/** Ring slot of the `i`-th oldest retained message. */
const slot = (s: StreamState, i: number): number => (s.head + i) & (s.texts.length - 1);
const textAt = (s: StreamState, i: number): string => s.texts[slot(s, i)]!;
const stampAt = (s: StreamState, i: number): number => s.stamps[slot(s, i)]!;
/**
 * The `i`-th oldest retained message, as handed out (fan-out and history pages alike): one object
 * built whole, one shape (fields added one by one after a two-field literal spill into a second
 * object), its stream name the stream's own string.
 */
const messageAt = (s: StreamState, i: number): StreamMessage => ({ stream: s.name, message: textAt(s, i), epoch: s.epoch, offset: firstOffset(s) + i, ts: stampAt(s, i) });

function append(s: StreamState, text: string, stamp: number): void {
  if (s.count === s.texts.length) {
    // Full: double, the oldest at slot 0.
    const cap = Math.max(4, s.texts.length * 2);
    const texts = new Array<string | undefined>(cap).fill(undefined);
    const stamps = new Array<number>(cap).fill(0);
    for (let i = 0; i < s.count; i++) {
      texts[i] = textAt(s, i);
      stamps[i] = stampAt(s, i);
    }
    s.texts = texts;
    s.stamps = stamps;
    s.head = 0;
  }
  const j = slot(s, s.count);
  s.texts[j] = text;
  s.stamps[j] = stamp;
  s.count++;
}

/** Take the oldest retained text out of the ring (undefined when none is held). */
function takeOldest(s: StreamState): string | undefined {
  if (s.count === 0) return undefined;
  const text = s.texts[s.head];
  s.texts[s.head] = undefined;
  s.head = (s.head + 1) & (s.texts.length - 1);
  s.count--;
  return text;
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
   * Store order across streams, oldest first: the whole-broker cap evicts from here. An entry is a
   * stream's state and the message's offset (stale once its stream trimmed it).
   */
  private readonly order = new OrderLog<StreamState>();
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
   * Store one message in its stream's history, under the count, byte and TTL caps, and hand it out
   * for the fan-out, built as every handed-out message is (`messageAt`).
   */
  private store(stream: string, message: string, nowMs: number): StreamMessage {
    const s = this.streamFor(stream, nowMs);
    this.trimExpired(s, nowMs);
    s.last++;
    s.lastAddMs = nowMs;
    append(s, message, Math.floor(nowMs / 1000));
    // Handed out before the caps run: they may trim this very message from the history.
    const msg = messageAt(s, s.count - 1);
    s.bytes += message.length;
    this.historyBytes += message.length;
    this.storedCount++;
    if (this.opts.historyMaxBytes !== undefined) {
      this.order.push(s, s.last);
    }
    const maxStream = this.opts.historyStreamMaxBytes ?? Infinity;
    // Count and bytes per stream; the newest entry always stays (a message fits by the size limit).
    while (s.count > this.opts.historyLimit || (s.bytes > maxStream && s.count > 1)) this.dropHead(s, true);
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
      while (i < s.count && stampAt(s, i) < position.since) i++;
      return this.pageFrom(s, i, page);
    }
    if (!s) return { ok: false, reason: 'stream_not_found' };
    if (position.epoch !== s.epoch) return { ok: false, reason: 'unknown_epoch' };
    const { offset } = position;
    if (offset > s.last) return { ok: false, reason: 'offset_ahead' };
    if (offset === s.last) return { ok: true, messages: [] };
    const low = firstOffset(s);
    // Everything after `offset` must still be retained, or the backlog would have a hole.
    if (offset + 1 < low) return { ok: false, reason: 'offset_evicted' };
    return this.pageFrom(s, offset + 1 - low, page);
  }

  /** A stream's entries from index `i`: all of them, or a page of about `page.maxBytes` (at least one). */
  private pageFrom(s: StreamState, i: number, page: HistoryPage | undefined): HistoryResult {
    let end = s.count;
    if (page) {
      end = i;
      let bytes = 0;
      while (end < s.count && (end === i || bytes + textAt(s, end).length <= page.maxBytes)) bytes += textAt(s, end++).length;
    }
    const messages: StreamMessage[] = [];
    for (let j = i; j < end; j++) messages.push(messageAt(s, j));
    return end < s.count ? { ok: true, messages, more: true } : { ok: true, messages };
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
    while (s.count > 0 && stampAt(s, 0) < minTs) this.dropHead(s, false);
  }

  /** Drop all of a stream's entries at once: the expired ones by TTL, the rest counted as evicted. */
  private clearEntries(s: StreamState, minTs: number): void {
    for (let i = 0; i < s.count; i++) {
      const n = textAt(s, i).length;
      this.historyBytes -= n;
      this.storedCount--;
      if (stampAt(s, i) >= minTs) {
        this.historyEvictedBytes += n;
        this.historyEvictedMessages++;
      }
    }
    s.texts = [];
    s.stamps = [];
    s.head = 0;
    s.count = 0;
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
    const text = takeOldest(s);
    if (text === undefined) return;
    const n = text.length;
    s.bytes -= n;
    this.historyBytes -= n;
    this.storedCount--;
    if (evicted) {
      this.historyEvictedBytes += n;
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
      if (evictable && (lru[1].count === 0 || Math.floor(lru[1].lastAddMs / 1000) < minTs)) this.evictStream(lru[0], lru[1], nowMs);
      else if (!this.dropOldest()) {
        if (!evictable) break;
        this.evictStream(lru[0], lru[1], nowMs);
      }
    }
    this.compactOrder();
  }

  /** Evict the oldest stored message still held, whichever stream holds it; false when none is. */
  private dropOldest(): boolean {
    const order = this.order;
    for (let s = order.oldestState(); s !== undefined; s = order.oldestState()) {
      const offset = order.oldestOffset();
      order.dropOldest();
      // Live only if still its stream's oldest (TTL, count and stream caps trim heads too; a state
      // that left the maps holds none, see `holds`).
      if (offset === firstOffset(s)) {
        this.dropHead(s, true);
        return true;
      }
    }
    return false;
  }

  private stateOf(stream: string): StreamState | undefined {
    return this.live.get(stream) ?? this.quiet.get(stream);
  }

  /**
   * A store-order entry is still held: its stream has not trimmed past it. No map lookup: a state
   * that left the maps (evicted, or forgotten after its quiet time) holds nothing (clearEntries),
   * and a quiet stream published again keeps its state and offsets above the old ones.
   */
  private static holds = (s: StreamState, offset: number): boolean => offset >= firstOffset(s);

  private compactOrder(): void {
    // Stale entries (trimmed by other caps) pile up in the log: drop them now and then.
    if (this.order.size > 2 * this.storedCount + 1024) this.order.retain(MemoryBroker.holds);
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
      s = { name: stream, epoch: `${this.epoch}-${(this.generation++).toString(36)}`, last: 0, texts: [], stamps: [], head: 0, count: 0, lastAddMs: nowMs, bytes: 0 };
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

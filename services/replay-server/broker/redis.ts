import { randomInt } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { ReboundError } from '../../../lib/errors.ts';
import { DEFAULT_IDEMPOTENCY_WINDOW_SEC, DEFAULT_MAX_STREAMS, SESSION_OVERHEAD_BYTES } from './memory.ts';
import { HISTORY_COUNT_LUA, HISTORY_LUA, PUBLISH_LUA, SESSION_LUA } from './redis-scripts.ts';
import { DeferredSessions, type SessionOp } from './redis-session-queue.ts';
import { encodeSession, decodeSession } from '../session/index.ts';
import type { Broker, BrokerOptions, BrokerStats, HistoryPage, HistoryPosition, HistoryResult, MessagesListener, PublishItem, SessionChange, StreamMessage } from './types.ts';

export interface RedisBrokerOptions extends BrokerOptions {
  /** `redis://host:port[/db]` (or `rediss://`, or a unix socket path). */
  url: string;
  /** Prefix of every key, so several services may share one Redis. @default 'rr:' */
  prefix?: string;
  /** Entries the fan-out feed keeps (approximately): how far a node cut off from Redis can catch up. @default 100_000 */
  feedMaxLen?: number;
  /** How long `connect()` waits for Redis before giving up. @default 3000 */
  connectTimeoutMs?: number;
  /** Deadline of every Redis call: past it the call fails as Redis lost (a publish: "may have been stored"). @default 1000 */
  commandTimeoutMs?: number;
  /** Period of the health probe (a small write, so OOM / READONLY / MISCONF show too). 0 disables it. @default 500 */
  probeIntervalMs?: number;
}

export const DEFAULT_COMMAND_TIMEOUT_MS = 1000;
/**
 * What one stream costs Redis besides its messages and its name: its m: hash and h: stream keys
 * (a Redis Stream's first node allocates about 4 KB), their dict entries and its P streams member.
 * Counted against historyMaxBytes like the memory broker's STREAM_OVERHEAD_BYTES; bench/replay-streams.ts
 * --redis measured about 4,975 bytes of used_memory per stream holding one 7-byte message.
 */
export const REDIS_STREAM_OVERHEAD_BYTES = 4600;
export const DEFAULT_PROBE_INTERVAL_MS = 500;

/** Redis answers that mean "up, but refusing writes": the node is degraded even though PING works. */
const WRITE_REFUSED = /^(OOM|READONLY|MISCONF|NOREPLICAS|MASTERDOWN)\b/;

/** A Redis call past its deadline. `maybeStored`: it was sent, so Redis may still run it. */
class RedisDeadlineError extends Error {
  readonly code = 'RR_ERR_REDIS_TIMEOUT';
}

/** Feed entries read per XREAD, and how long one blocks (the loop re-checks `closed` between). */
const FEED_BATCH = 1000;
const FEED_BLOCK_MS = 1000;
const RETRY_MS = 200;
export const DEFAULT_FEED_MAX_LEN = 100_000;

type Client = Redis & {
  rrPublish(...args: (string | number)[]): Promise<unknown[]>;
  rrHistory(...args: (string | number)[]): Promise<unknown[]>;
  rrSession(...args: (string | number)[]): Promise<number>;
  rrHistoryCount(...args: (string | number)[]): Promise<number>;
};

/** /metrics sums history lengths in Redis up to this many streams; beyond, historyMessages is -1 (not worth blocking Redis). */
export const HISTORY_COUNT_MAX_STREAMS = 10_000;

/** ioredis's words for a command that never reached Redis or lost its connection (the socket may close before its status changes). */
const isConnectionError = (err: unknown): boolean => err instanceof Error && /isn't writeable|Connection is closed|ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|max retries|timed out/i.test(err.message);

const HISTORY_REASONS = new Set(['unknown_epoch', 'stream_not_found', 'offset_evicted', 'offset_ahead']);

/**
 * Several nodes behind one Redis as one service (docs/replay-server.md, "Redis broker").
 *
 * - Offsets: one Lua script per publish batch issues each stream's next offset (HINCRBY), stores
 *   the entry in the stream's history (a Redis Stream whose entry ID is `<offset>-1`) and appends
 *   it to one shared fan-out feed, atomically: Redis is the only counter, so two nodes never
 *   issue the same offset, and feed order is offset order for every stream.
 * - Fan-out: each broker reads the feed with a blocking XREAD from the last entry it saw. After a
 *   lost connection it continues from that entry, so the node catches up with no gap and no
 *   duplicate (a jump in the feed's sequence, e.g. the feed was trimmed meanwhile, is counted
 *   in `feedGaps`). Local delivery of a node's own publishes also comes from the feed: one order.
 * - Commands fail fast while Redis is unreachable (no offline queue): `/_broadcast` answers 503
 *   instead of acknowledging a message it did not store; `health()` reports the outage.
 */
export class RedisBroker implements Broker {
  readonly kind = 'redis';
  private readonly cmd: Client;
  /** Dedicated connection for the blocking feed reads. */
  private readonly reader: Redis;
  private readonly prefix: string;
  private readonly feedKey: string;
  private readonly listeners = new Set<MessagesListener>();
  private readonly resyncListeners = new Set<(why: string) => void>();
  private lastFeedId = '0-0';
  private lastFeedSeq = 0;
  private feedGaps = 0;
  private feedResets = 0;
  private closed = false;
  private readonly sessions: DeferredSessions;
  private loop: Promise<void> | undefined;
  private readonly deadlineMs: number;
  private probeTimer: NodeJS.Timeout | undefined;
  private probing = false;
  /** Why the last probe or a later command failed; undefined when the last probe passed and nothing failed since. */
  private failure: string | undefined;
  private probes = 0;
  private probeFailures = 0;
  private commandFailures = 0;
  private timeouts = 0;
  /** The service epoch (`P epoch`) as last seen; epochs seen to end (Redis lost its data). */
  private serviceEpoch: string | undefined;
  private readonly pastEpochs = new Set<string>();
  private epochChanges = 0;

  constructor(private readonly opts: RedisBrokerOptions) {
    this.prefix = opts.prefix ?? 'rr:';
    this.feedKey = `${this.prefix}feed`;
    const common: RedisOptions = {
      lazyConnect: true,
      // Never queue a command for later: an unstored broadcast must fail now (503), not hang.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: opts.connectTimeoutMs ?? 3000,
      retryStrategy: (times) => Math.min(50 * times, 1000),
    };
    this.deadlineMs = opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    // ioredis's own timeout fails the command; call() adds a guard of its own on top (scripts,
    // a reply stuck behind a hung one), so no caller ever waits past the deadline.
    this.cmd = new Redis(opts.url, { ...common, commandTimeout: this.deadlineMs, connectionName: 'rebound-replay' }) as Client;
    // The feed reader blocks on purpose (XREAD BLOCK): its guard is the block time plus the deadline.
    this.reader = new Redis(opts.url, { ...common, blockingTimeout: this.deadlineMs, connectionName: 'rebound-replay-feed' });
    // ioredis emits 'error' on every failed reconnect; health() reports the state instead.
    this.cmd.on('error', () => {});
    this.reader.on('error', () => {});
    this.cmd.defineCommand('rrPublish', { numberOfKeys: 0, lua: PUBLISH_LUA });
    this.cmd.defineCommand('rrHistory', { numberOfKeys: 0, lua: HISTORY_LUA });
    this.cmd.defineCommand('rrSession', { numberOfKeys: 0, lua: SESSION_LUA });
    this.cmd.defineCommand('rrHistoryCount', { numberOfKeys: 0, lua: HISTORY_COUNT_LUA });
    this.sessions = new DeferredSessions((sid, op) => this.writeSession(sid, op), (err) => this.cmd.status !== 'ready' || isConnectionError(err));
    // Back from an outage: store the session changes made meanwhile.
    this.cmd.on('ready', () => void this.sessions.flush());
  }

  /** Connect both clients and start the fan-out; rejects with RR_ERR_REDIS_UNAVAILABLE when Redis cannot be reached. */
  async connect(): Promise<void> {
    try {
      await Promise.all([this.cmd.connect(), this.reader.connect()]);
      // Start after the feed's current end: only what is published from now on is live.
      this.serviceEpoch = (await this.cmd.get(`${this.prefix}epoch`)) ?? undefined;
      const tail = (await this.cmd.xrevrange(this.feedKey, '+', '-', 'COUNT', 1)) as [string, string[]][];
      if (tail[0]) {
        this.lastFeedId = tail[0][0];
        this.lastFeedSeq = Number(fieldOf(tail[0][1], 'n') ?? 0);
      }
    } catch (err) {
      this.cmd.disconnect();
      this.reader.disconnect();
      throw new ReboundError('RR_ERR_REDIS_UNAVAILABLE', `cannot reach Redis at ${redactUrl(this.opts.url)}: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.loop = this.readFeed();
    const every = this.opts.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
    if (every > 0) {
      this.probeTimer = setInterval(() => void this.probe(), every);
      this.probeTimer.unref();
    }
  }

  /**
   * Degraded when a connection is down, the last probe failed or timed out, or any command failed
   * since the last good probe (a stall, OOM, READONLY, MISCONF); the next good probe clears it.
   */
  health(): { ok: boolean; reason?: string } {
    if (this.cmd.status !== 'ready' || this.reader.status !== 'ready') return { ok: false, reason: `redis ${this.cmd.status}/${this.reader.status}` };
    if (this.failure) return { ok: false, reason: this.failure };
    return { ok: true };
  }

  /** One probe: a tiny write with a TTL (PING alone would pass on a Redis that refuses writes). Never overlaps itself. */
  private async probe(): Promise<void> {
    if (this.probing || this.closed) return;
    this.probing = true;
    this.probes++;
    try {
      await this.call(() => this.cmd.set(`${this.prefix}probe`, '1', 'PX', 10_000), 'probe');
      this.seeEpoch((await this.call(() => this.cmd.get(`${this.prefix}epoch`), 'probe')) ?? undefined, true);
      this.failure = undefined;
    } catch {
      this.probeFailures++;
    } finally {
      this.probing = false;
    }
  }

  isPastEpoch(streamEpoch: string): boolean {
    const dash = streamEpoch.lastIndexOf('-');
    return this.pastEpochs.has(dash < 0 ? streamEpoch : streamEpoch.slice(0, dash));
  }

  /**
   * The service epoch as seen now (probe: the key itself, `gone` allowed; feed: a message's
   * stream epoch). A different one, or the key gone, means Redis lost its data: the old epoch is
   * remembered so history requests naming it are handed over to the new one (connection/history.ts).
   */
  private seeEpoch(epoch: string | undefined, fromKey: boolean): void {
    if (epoch === this.serviceEpoch || (epoch === undefined && !fromKey)) return;
    if (this.serviceEpoch !== undefined) {
      this.pastEpochs.add(this.serviceEpoch);
      this.epochChanges++;
      process.stderr.write(`replay: Redis epoch ${this.serviceEpoch} ended (${epoch === undefined ? 'epoch key gone' : `now ${epoch}`}): Redis lost its data; clients stay connected\n`);
    }
    this.serviceEpoch = epoch;
  }

  /**
   * Every command goes through here: at most `commandTimeoutMs`, whatever ioredis does; a failure
   * or timeout marks the node degraded until the next good probe. A timeout carries
   * `maybeStored` (the command was sent; Redis may still run it once it wakes).
   */
  private call<T>(run: () => Promise<T>, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const fail = (err: Error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.commandFailures++;
        const msg = err.message;
        this.failure = WRITE_REFUSED.test(msg) ? `redis refuses writes: ${msg.split('\n')[0]}` : `redis ${what} failed: ${msg}`;
        reject(err);
      };
      const timer = setTimeout(() => {
        this.timeouts++;
        fail(Object.assign(new RedisDeadlineError(`Redis did not answer ${what} within ${this.deadlineMs} ms (timed out)`), { maybeStored: true }));
      }, this.deadlineMs);
      let p: Promise<T>;
      try {
        p = run();
      } catch (err) {
        fail(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      p.then(
        (v) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          resolve(v);
        },
        (err: unknown) => {
          const e = err instanceof Error ? err : new Error(String(err));
          // ioredis's own timeout: sent, so possibly run later, like our guard's.
          fail(/Command timed out/i.test(e.message) ? Object.assign(e, { maybeStored: true }) : e);
        },
      );
    });
  }

  async publish(items: readonly PublishItem[]): Promise<void> {
    if (items.length === 0) return;
    const args: (string | number)[] = [this.prefix, newEpoch(), this.opts.historyLimit, this.opts.historyTtlSec, this.opts.feedMaxLen ?? DEFAULT_FEED_MAX_LEN, items.length, (this.opts.idempotencyWindowSec ?? DEFAULT_IDEMPOTENCY_WINDOW_SEC) * 1000, this.opts.historyStreamMaxBytes ?? Number.MAX_SAFE_INTEGER, this.opts.historyMaxBytes ?? 0, this.opts.maxStreams ?? DEFAULT_MAX_STREAMS, REDIS_STREAM_OVERHEAD_BYTES];
    for (const it of items) args.push(it.stream, it.message, it.exclude ?? '', it.transient ? '1' : '0', it.idempotencyKey ?? '');
    try {
      await this.call(() => this.cmd.rrPublish(...args), 'publish');
    } catch (err) {
      if ((err as { maybeStored?: boolean }).maybeStored) throw Object.assign(new Error(`the publish timed out, so the batch may have been stored (retry with the same idempotency key): ${(err as Error).message}`), { maybeStored: true });
      // Sent, then the connection dropped: Redis may have run the script. Say so instead of "not stored".
      if (err instanceof Error && (err.name === 'MaxRetriesPerRequestError' || /Connection is closed/i.test(err.message))) throw Object.assign(new Error(`the connection to Redis was lost mid-command, so the batch may have been stored (a retry may deliver it twice): ${err.message}`), { maybeStored: true });
      throw err;
    }
  }

  onMessages(listener: MessagesListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onResync(listener: (why: string) => void): () => void {
    this.resyncListeners.add(listener);
    return () => this.resyncListeners.delete(listener);
  }

  async history(stream: string, position: HistoryPosition, page?: HistoryPage): Promise<HistoryResult> {
    const since = 'since' in position;
    const r = await this.call(() => this.cmd.rrHistory(this.prefix, stream, since ? 's' : 'o', since ? '' : position.epoch, since ? position.since : position.offset, page?.maxBytes ?? 0, this.opts.historyTtlSec), 'history');
    if (r[0] === 'err') {
      const reason = String(r[1]);
      return { ok: false, reason: HISTORY_REASONS.has(reason) ? (reason as 'stream_not_found') : 'stream_not_found' };
    }
    const epoch = String(r[2]);
    const messages: StreamMessage[] = [];
    for (let i = 3; i + 2 < r.length; i += 3) messages.push({ stream, message: String(r[i + 2]), epoch, offset: Number(r[i]), ts: Number(r[i + 1]) });
    return r[1] === 1 ? { ok: true, messages, more: true } : { ok: true, messages };
  }

  async commitSession(sid: string, state: string): Promise<void> {
    if (this.opts.sessionTtlSec <= 0) return;
    await this.session(sid, 'commit', decodeSession(state), []);
  }

  async updateSession(sid: string, change: SessionChange): Promise<void> {
    if (this.opts.sessionTtlSec <= 0) return;
    await this.session(sid, 'update', change.add ?? [], change.remove ?? []);
  }

  private session(sid: string, mode: SessionOp['mode'], add: readonly string[], remove: readonly string[]): Promise<void> {
    return this.sessions.submit(sid, { mode, add, remove });
  }

  private writeSession(sid: string, { mode, add, remove }: SessionOp): Promise<number> {
    const o = this.opts;
    return this.call(() => this.cmd.rrSession(this.prefix, sid, mode, o.sessionTtlSec, o.maxSessions ?? Number.MAX_SAFE_INTEGER, o.maxSessionStoreBytes ?? Number.MAX_SAFE_INTEGER, SESSION_OVERHEAD_BYTES, add.length, remove.length, ...add, ...remove), 'session write');
  }

  /** Session changes made during an outage and not yet stored, and those dropped past the queue's caps. */
  deferredSessions(): { waiting: number; dropped: number } {
    return { waiting: this.sessions.size, dropped: this.sessions.dropped };
  }

  async restoreSession(sid: string): Promise<string | undefined> {
    if (this.opts.sessionTtlSec <= 0) return undefined;
    const raw = await this.call(() => this.cmd.get(`${this.prefix}s:${sid}`), 'session read');
    if (raw === null) return undefined;
    try {
      const ids = JSON.parse(raw) as unknown;
      return Array.isArray(ids) ? encodeSession(ids.filter((x): x is string => typeof x === 'string')) : undefined;
    } catch {
      return undefined;
    }
  }

  async stats(maxStreams = HISTORY_COUNT_MAX_STREAMS): Promise<BrokerStats> {
    const p = this.prefix;
    const c = this.cmd;
    const [streams, sessions, bytes, evicted, published, held, dups, hb] = await this.call(() => Promise.all([c.zcard(`${p}streams`), c.zcard(`${p}sidx`), c.get(`${p}stotal`), c.get(`${p}sevicted`), c.get(`${p}published`), c.rrHistoryCount(p, maxStreams), c.get(`${p}dups`), c.mget(`${p}hbytes`, `${p}hevb`, `${p}hevm`, `${p}stb`, `${p}sev`)]), 'stats');
    const h = this.health();
    return { kind: this.kind, historyStreams: streams, historyMessages: Number(held), sessions, sessionBytes: Number(bytes ?? 0), sessionsEvicted: Number(evicted ?? 0), published: Number(published ?? 0), duplicatesSuppressed: Number(dups ?? 0), historyBytes: Number(hb[0] ?? 0), historyEvictedBytes: Number(hb[1] ?? 0), historyEvictedMessages: Number(hb[2] ?? 0), streamBytes: Number(hb[3] ?? 0), streamsEvicted: Number(hb[4] ?? 0), feedGaps: this.feedGaps, feedResets: this.feedResets, epochChanges: this.epochChanges, redis: { ok: h.ok, ...(h.reason ? { reason: h.reason } : {}), probes: this.probes, probeFailures: this.probeFailures, commandFailures: this.commandFailures, timeouts: this.timeouts, deadlineMs: this.deadlineMs } };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.listeners.clear();
    this.resyncListeners.clear();
    this.reader.disconnect();
    await this.loop?.catch(() => {});
    await this.cmd.quit().catch(() => this.cmd.disconnect());
  }

  private emit(msgs: StreamMessage[]): void {
    if (msgs.length > 0) for (const l of this.listeners) l(msgs);
  }

  /** The fan-out loop: XREAD from the last seen entry, forever; a lost connection just waits and resumes there. */
  private async readFeed(): Promise<void> {
    while (!this.closed) {
      let res: [string, [string, string[]][]][] | null;
      try {
        res = (await this.reader.xread('COUNT', FEED_BATCH, 'BLOCK', FEED_BLOCK_MS, 'STREAMS', this.feedKey, this.lastFeedId)) as typeof res;
      } catch {
        if (this.closed) return;
        await new Promise((r) => setTimeout(r, RETRY_MS));
        continue;
      }
      const entries = res?.[0]?.[1];
      if (!entries || entries.length === 0 || this.closed) continue;
      let out: StreamMessage[] = [];
      for (const [id, f] of entries) {
        this.lastFeedId = id;
        const seq = Number(fieldOf(f, 'n') ?? 0);
        // A jump: the feed was trimmed past us while we were cut off, so live frames would now
        // skip offsets: what came before goes out, then the clients are sent to resume by
        // history. Going backwards: Redis lost its data (restarted without persistence).
        const gap = this.lastFeedSeq > 0 && seq > this.lastFeedSeq + 1;
        const reset = seq <= this.lastFeedSeq;
        const msg = toMessage(f);
        if (msg.epoch !== undefined) {
          const dash = msg.epoch.lastIndexOf('-');
          this.seeEpoch(dash < 0 ? msg.epoch : msg.epoch.slice(0, dash), false);
        }
        if (reset) {
          // Redis came back empty: a new epoch whose messages all came after the old one ended.
          // Live delivery simply continues (subscriptions take the new epoch as it comes); clients
          // that ask for the old epoch's history are handed over to the new one's.
          this.feedResets++;
        } else if (gap) {
          this.feedGaps += seq - this.lastFeedSeq - 1;
          this.emit(out);
          out = [];
          // Clients come straight back to restore their session: let the command link be up first.
          for (let i = 0; i < 100 && this.cmd.status !== 'ready' && !this.closed; i++) await new Promise((r) => setTimeout(r, 50));
          const why = `feed gap of ${seq - this.lastFeedSeq - 1} entries`;
          for (const l of this.resyncListeners) l(why);
        }
        this.lastFeedSeq = seq;
        out.push(msg);
      }
      this.emit(out);
    }
  }
}

function fieldOf(f: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < f.length; i += 2) if (f[i] === name) return f[i + 1];
  return undefined;
}

function toMessage(f: string[]): StreamMessage {
  const m: StreamMessage = { stream: '', message: '' };
  for (let i = 0; i + 1 < f.length; i += 2) {
    const v = f[i + 1]!;
    switch (f[i]) {
      case 's':
        m.stream = v;
        break;
      case 'm':
        m.message = v;
        break;
      case 'x':
        if (v !== '') m.exclude = v;
        break;
      case 'e':
        m.epoch = v;
        break;
      case 'o':
        m.offset = Number(v);
        break;
      case 't':
        m.ts = Number(v);
        break;
    }
  }
  return m;
}

const newEpoch = () => randomInt(36 ** 4).toString(36).padStart(4, '0');

/** The URL without its password, for error messages. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

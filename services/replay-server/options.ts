import { ReboundError } from '../../lib/errors.ts';
import { defaultsOf, parseOptions, type OptionTable, type OptionValues } from '../../lib/options.ts';
import { COMMON_SERVICE_OPTIONS } from '../common/service-main.ts';

/** The one option table of the replay server: CLI (`--history-limit 50`), env and `createReplayServer()` share it. */
export const REPLAY_SERVER_OPTIONS = {
  ...COMMON_SERVICE_OPTIONS,
  workers: { type: 'int', default: 1, min: 1, max: 64, env: ['REPLAY_WORKERS'], doc: 'processes behind one port (node:cluster); the primary owns history and sessions' },
  transport: { type: 'enum', values: ['auto', 'uws', 'ws'], default: 'auto', env: ['REPLAY_TRANSPORT'], doc: 'WebSocket/HTTP library: uws (uWebSockets.js: less CPU and memory per connection; an error where its binary does not load), ws (node:net + ws), auto = uws where it loads, else ws with a notice' },
  broker: { type: 'enum', values: ['memory', 'redis'], default: 'memory', env: ['REPLAY_BROKER'], doc: 'where history, offsets and sessions live: this process (memory) or Redis (several nodes as one service)' },
  redisUrl: { type: 'string', default: 'redis://127.0.0.1:6379', pattern: /^(rediss?:\/\/\S+|\/\S+)$/, env: ['REDIS_URL'], doc: 'redis://[user:pass@]host:port[/db], rediss://..., or a unix socket path; Redis for --broker redis' },
  redisPrefix: { type: 'string', default: 'rr:', pattern: /^\S{1,64}$/, doc: 'prefix of every Redis key (several services may share one Redis)' },
  redisFeedMaxLen: { type: 'int', default: 100_000, min: 100, max: 100_000_000, doc: 'entries (about) the Redis fan-out feed keeps: how long a node cut off from Redis can catch up by itself; beyond, its clients are sent to resume by history' },
  redisCommandTimeoutMs: { type: 'int', default: 1000, min: 50, max: 60_000, env: ['REDIS_COMMAND_TIMEOUT_MS'], doc: 'deadline of every Redis call: past it the call fails as Redis lost, /_broadcast answers 503 (saying the batch may have been stored) and /health is degraded' },
  redisProbeIntervalMs: { type: 'int', default: 500, min: 0, max: 60_000, doc: 'period of the Redis health probe (a small write with a TTL, so OOM, READONLY and MISCONF show as degraded too); 0 disables it' },
  path: { type: 'string', default: '/cable', pattern: /^\/\S*$/, doc: 'WebSocket endpoint path' },
  publicStreams: { type: 'bool', default: true, doc: 'accept unsigned `$pubsub` `stream_name` subscriptions' },
  streamsSecret: { type: 'string', default: '', env: ['ANYCABLE_STREAMS_SECRET'], doc: 'secret for `signed_stream_name` (Rails MessageVerifier, HMAC-SHA256); empty disables signed streams' },
  streamsWhisper: { type: 'bool', default: false, doc: 'allow whispers on signed streams (public streams: see publicWhispers)' },
  accessToken: { type: 'string', default: '', doc: 'when set, connections must present ?jid=<token> (or header x-jid), else disconnect unauthorized' },
  historyLimit: { type: 'int', default: 100, min: 1, max: 1_000_000, doc: 'messages kept per stream' },
  historyStreamMaxBytes: { type: 'int', default: 33_554_432, min: 1024, max: 68_719_476_736, doc: 'message bytes kept per stream as well as historyLimit messages; the oldest go first (the newest always stays)' },
  historyMaxBytes: { type: 'int', default: 268_435_456, min: 1024, max: 1_099_511_627_776, doc: 'bytes kept in all streams\' history together (memory and Redis brokers): message bytes plus a fixed overhead and the name of every stream (/metrics broker.historyBytes + broker.streamBytes); an expired least recently published stream goes first, then the oldest stored message, counted in broker.historyEvictedBytes and broker.streamsEvicted' },
  maxMessageBytes: { type: 'int', default: 10_485_760, min: 256, max: 1_073_741_824, doc: 'largest accepted /_broadcast message (its data), 413 beyond; at most historyStreamMaxBytes' },
  maxStreams: { type: 'int', default: 100_000, min: 1, max: 100_000_000, doc: 'streams kept (memory and Redis brokers), with history or only their offsets; beyond, the least recently published stream is evicted whole (a resume from it is answered history not available), counted in /metrics broker.streamsEvicted' },
  historyTtlSec: { type: 'int', default: 300, min: 1, max: 86_400, env: ['REPLAY_HISTORY_TTL_SEC'], doc: 'seconds a message stays in history' },
  idempotencyWindowSec: { type: 'int', default: 300, min: 1, max: 86_400, doc: 'seconds a /_broadcast idempotency key (Idempotency-Key header, or idempotencyKey per message) is remembered: a retry within it is answered as the first and stored once' },
  sessionTtlSec: { type: 'int', default: 300, min: 0, max: 86_400, env: ['REPLAY_SESSION_TTL_SEC'], doc: 'seconds a session stays restorable after its last change; 0 disables restore' },
  pingIntervalSec: { type: 'int', default: 3, min: 1, max: 3600, doc: 'ping period (clients may override per connection with ?pi=, up to maxPingIntervalSec)' },
  maxPingIntervalSec: { type: 'int', default: 30, min: 1, max: 3600, doc: 'longest ping period a client may ask for with ?pi= (larger values are clamped): pings are the liveness check' },
  maxBufferedBytes: { type: 'int', default: 1_048_576, min: 16_384, max: 1_073_741_824, doc: 'socket write buffer per connection; beyond it frames wait in the connection queue and history replay pauses until the socket drains' },
  maxQueuedBytes: { type: 'int', default: 33_554_432, min: 16_384, max: 4_294_967_296, doc: 'bytes a connection may have waiting beyond maxBufferedBytes (a single frame always fits); more is disconnect too_slow. At least 2 x maxBodyBytes' },
  slowConsumerMs: { type: 'int', default: 10_000, min: 100, max: 600_000, doc: 'a connection with output waiting that makes no progress (no socket drain) for this long is disconnected too_slow' },
  maxBodyBytes: { type: 'int', default: 10_485_760, min: 1024, max: 1_073_741_824, doc: 'largest accepted POST /_broadcast body' },
  historyPageBytes: { type: 'int', default: 262_144, min: 1024, max: 67_108_864, doc: 'history is read (and, with --workers, sent between processes) in pages of about this many bytes (at least one message)' },
  maxIdentifierBytes: { type: 'int', default: 4096, min: 64, max: 1_048_576, doc: 'longest accepted subscription identifier; longer subscribes are rejected' },
  maxSessionBytes: { type: 'int', default: 65_536, min: 256, max: 16_777_216, doc: 'identifier bytes one connection (and so one session, and one restore welcome) may hold; subscribes beyond are rejected' },
  maxSessions: { type: 'int', default: 100_000, min: 1, max: 100_000_000, doc: 'sessions kept for restore; the least recently changed is evicted first' },
  maxSessionStoreBytes: { type: 'int', default: 268_435_456, min: 65_536, max: 68_719_476_736, doc: 'bytes of session state kept for restore (identifiers + 64 per session); the least recently changed is evicted first' },
  publicWhispers: { type: 'bool', default: true, doc: 'allow whispers on public (`stream_name`) streams, as anycable-go does; whispers are unauthenticated' },
  whisperRatePerSec: { type: 'int', default: 20, min: 1, max: 1_000_000, doc: 'whispers per second per connection (burst of one second); more are dropped and counted' },
  whisperBytesPerSec: { type: 'int', default: 65_536, min: 256, max: 1_073_741_824, doc: 'whisper payload bytes per second per connection (burst of one second); more are dropped and counted' },
  maxPayloadBytes: { type: 'int', default: 65_536, min: 256, max: 16_777_216, doc: 'largest accepted client frame (WebSocket close 1009 beyond)' },
  maxSubscriptions: { type: 'int', default: 256, min: 1, max: 100_000, doc: 'subscriptions per connection; more are rejected' },
  maxHeldFrames: { type: 'int', default: 2000, min: 10, max: 1_000_000, doc: 'live frames parked per subscription while its history replay is in flight (disconnect too_slow beyond)' },
  restoreHoldMs: { type: 'int', default: 10_000, min: 0, max: 300_000, doc: 'how long a restored subscription parks live frames waiting for the client history command' },
  compactHeap: { type: 'bool', default: true, doc: 'process entry only: keep V8\'s young generation at its initial size (semi-space growth factor 1), so bursts of connections do not leave megabytes of idle young-generation heap behind' },
  stopGraceMs: { type: 'int', default: 500, min: 0, max: 30_000, doc: 'on stop, time between disconnect server_restart and terminating leftover sockets' },
} as const satisfies OptionTable;

export type ReplayServerOptions = OptionValues<typeof REPLAY_SERVER_OPTIONS>;
export const DEFAULT_REPLAY_SERVER_OPTIONS: ReplayServerOptions = defaultsOf(REPLAY_SERVER_OPTIONS);

/** Merge and validate programmatic options once (same rules as the CLI), then freeze. */
export function resolveReplayOptions(partial: Partial<ReplayServerOptions> = {}): ReplayServerOptions {
  const values: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(partial)) if (v !== undefined) values[k] = v;
  return checkReplayOptions(parseOptions(REPLAY_SERVER_OPTIONS, { values, origin: 'createReplayServer' }), 'createReplayServer');
}

/**
 * Limits that only make sense together: one accepted /_broadcast batch must fit a reading
 * client's queue, or the server would cut healthy clients for a burst it created itself.
 */
export function checkReplayOptions(o: ReplayServerOptions, origin = 'option'): ReplayServerOptions {
  const bad = (option: string, msg: string) => new ReboundError('RR_ERR_OPTION_INVALID', `${origin} option "${option}" ${msg}`, { details: { option } });
  if (o.maxQueuedBytes < 2 * o.maxBodyBytes) throw bad('maxQueuedBytes', `must be at least 2 x maxBodyBytes (${2 * o.maxBodyBytes}) so one accepted broadcast batch fits a reading client's queue (got ${o.maxQueuedBytes})`);
  if (o.maxIdentifierBytes > o.maxSessionBytes) throw bad('maxIdentifierBytes', `must not exceed maxSessionBytes (${o.maxSessionBytes}) (got ${o.maxIdentifierBytes})`);
  if (o.maxMessageBytes > o.historyStreamMaxBytes) throw bad('maxMessageBytes', `must not exceed historyStreamMaxBytes (${o.historyStreamMaxBytes}) so an accepted message fits its stream's history (got ${o.maxMessageBytes})`);
  if (o.historyStreamMaxBytes > o.historyMaxBytes) throw bad('historyStreamMaxBytes', `must not exceed historyMaxBytes (${o.historyMaxBytes}) (got ${o.historyStreamMaxBytes})`);
  if (o.pingIntervalSec > o.maxPingIntervalSec) throw bad('pingIntervalSec', `must not exceed maxPingIntervalSec (${o.maxPingIntervalSec}) (got ${o.pingIntervalSec})`);
  return o;
}

import { defaultsOf, parseOptions, type OptionTable, type OptionValues } from '../../lib/options.ts';
import { COMMON_SERVICE_OPTIONS } from '../common/service-main.ts';

/** The one option table of the replay server: CLI (`--history-limit 50`), env and `createReplayServer()` share it. */
export const REPLAY_SERVER_OPTIONS = {
  ...COMMON_SERVICE_OPTIONS,
  workers: { type: 'int', default: 1, min: 1, max: 64, env: ['REPLAY_WORKERS'], doc: 'processes behind one port (node:cluster); the primary owns history and sessions' },
  path: { type: 'string', default: '/cable', pattern: /^\/\S*$/, doc: 'WebSocket endpoint path' },
  publicStreams: { type: 'bool', default: true, doc: 'accept unsigned `$pubsub` `stream_name` subscriptions' },
  streamsSecret: { type: 'string', default: '', env: ['ANYCABLE_STREAMS_SECRET'], doc: 'secret for `signed_stream_name` (Rails MessageVerifier, HMAC-SHA256); empty disables signed streams' },
  streamsWhisper: { type: 'bool', default: false, doc: 'allow whispers on signed streams (public streams always allow them)' },
  accessToken: { type: 'string', default: '', doc: 'when set, connections must present ?jid=<token> (or header x-jid), else disconnect unauthorized' },
  historyLimit: { type: 'int', default: 100, min: 1, max: 1_000_000, doc: 'messages kept per stream' },
  historyTtlSec: { type: 'int', default: 300, min: 1, max: 86_400, doc: 'seconds a message stays in history' },
  sessionTtlSec: { type: 'int', default: 300, min: 0, max: 86_400, doc: 'seconds a session stays restorable after its last change; 0 disables restore' },
  pingIntervalSec: { type: 'int', default: 3, min: 1, max: 3600, doc: 'ping period (clients may override per connection with ?pi=)' },
  maxBufferedBytes: { type: 'int', default: 1_048_576, min: 1024, max: 1_073_741_824, doc: 'outbound bytes queued per connection before disconnect too_slow' },
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
  return parseOptions(REPLAY_SERVER_OPTIONS, { values, origin: 'createReplayServer' });
}

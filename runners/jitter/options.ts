import { kebab, parseOptions, type OptionTable, type OptionValues } from '../../lib/options.ts';
import { ReboundError } from '../../lib/errors.ts';
import { checkTargetUrl, getTarget } from '../../engine/targets/index.ts';
import { checkReconnectOptions } from '../../engine/targets/reconnect.ts';
import { LEDGER_MAX_CELLS } from '../../engine/measure/ledger.ts';
import { parsePlan, planNeedsProxy } from '../../chaos/plans/catalog.ts';
import { parseWeather } from '../../chaos/weather/population.ts';
import { canRestartUrl, restartConfigFromEnv } from '../../engine/measure/restart.ts';
import { RECONNECT_STRATEGIES } from '../../engine/targets/reconnect.ts';

/**
 * Jitter run options. Defaults are the benchmark's 10K test (003 seed, first table:
 * 10,000 clients, 120 messages every 500 ms, a drop every ~15 s lasting ~1 s, ramp 200/s).
 * The benchmark's env var names work too. CLI flags, HTTP query params and env are parsed once by
 * the module's table and checked by `checkJitterOptions`.
 */
export const JITTER_OPTIONS = {
  target: { type: 'string', default: 'socketio', env: ['TARGET'], doc: 'target name (see --help for the list)' },
  url: { type: 'optional-string', default: undefined, env: ['TARGET_URL'], doc: 'base URL of an already running target (loopback only); default: start it locally' },
  broadcastUrl: { type: 'optional-string', default: undefined, env: ['BROADCAST_URL'], doc: 'where to POST broadcasts (e.g. anycable-go\'s http://127.0.0.1:8090/_broadcast); default <url>/_broadcast' },
  clients: { type: 'int', default: 10_000, min: 1, max: 18_000, env: ['NUM_CLIENTS'], aliases: ['n'], doc: 'concurrent clients (one process holds at most ~18,000 sockets: use shards beyond)' },
  msgs: { type: 'int', default: 120, min: 1, max: 100_000, env: ['TOTAL_MESSAGES'], aliases: ['messages'], doc: 'messages to publish' },
  interval: { type: 'int', default: 500, min: 1, max: 60_000, env: ['INTERVAL_MS'], aliases: ['interval-ms'], doc: 'ms between published messages' },
  jitter: { type: 'number', default: 15, min: 0, max: 1_000_000, env: ['JITTER_INTERVAL'], doc: "seconds between drops per client (+U(0,5) s); 0, or any value at or above the drop window (the benchmark's 999999), = no drops" },
  duration: { type: 'int', default: 0, min: 0, max: 86_400, env: ['DURATION'], doc: "drop window from the first message, s (the benchmark's duration): drops go on until it ends, also after publishing stopped; 0 = msgs x interval" },
  jitterMs: { type: 'int', default: 1000, min: 0, max: 60_000, env: ['JITTER_DURATION'], doc: 'offline time per drop, ms (manual targets floor it, e.g. Socket.IO to 2000)' },
  payloadBytes: { type: 'int', default: 0, min: 0, max: 65_536, env: ['PAYLOAD_BYTES'], doc: 'padding added to each message (slow-consumer plans need traffic above 1 KB/s per client)' },
  ramp: { type: 'int', default: 200, min: 1, max: 100_000, env: ['RAMP_RATE'], doc: 'client connects per second' },
  settle: { type: 'int', default: 10_000, min: 0, max: 600_000, env: ['SETTLE_MS'], doc: 'ms to wait after the last message for replays to land (ends early once complete)' },
  seed: { type: 'int', default: 0, min: 0, max: 0x7fffffff, env: ['SEED'], doc: 'seed for the drop timeline; 0 picks one (reported in the result)' },
  stream: { type: 'string', default: '', maxLength: 256, env: ['STREAM'], doc: 'stream/room name; default jitter-<runId>' },
  broadcastKey: { type: 'string', default: '', env: ['BROADCAST_KEY', 'ANYCABLE_BROADCAST_SECRET'], doc: 'bearer key for /_broadcast' },
  plan: { type: 'string', default: 'drop', maxLength: 128, env: ['CHAOS_PLAN'], doc: 'chaos plan: drop, flaky, blackhole, partition, slow-consumer, reset, or several joined by +' },
  groups: { type: 'int', default: 4, min: 1, max: 64, env: ['CHAOS_GROUPS'], doc: 'proxy groups for network plans: clients are split over this many proxies, each disrupted on its own schedule' },
  chaosMs: { type: 'int', default: 0, min: 0, max: 600_000, env: ['CHAOS_MS'], doc: 'duration of each network disruption, ms (0 = the plan\'s default)' },
  weather: { type: 'string', default: '', maxLength: 256, env: ['WEATHER'], doc: 'network weather: clients dealt to named conditions by share, seeded, e.g. good-wifi:60,lte:30,subway:10 (conditions: good-wifi, congested-wifi, lte, 3g, mobile-handover, subway, laptop-sleep, deploy; docs/chaos-plans.md); each condition gets its own proxies. Takes the place of network plans (--plan drop adds drops on top)' },
  weatherScale: { type: 'number', default: 1, min: 0.001, max: 1, env: ['WEATHER_SCALE'], doc: 'time scale of the weather spells (their starts, lengths and gaps): 0.01 makes laptop-sleep\'s 6 min 3.6 s, for small runs against targets with short session lifetimes' },
  toxiproxyUrl: { type: 'optional-string', default: undefined, env: ['TOXIPROXY_URL'], doc: 'a real Toxiproxy API to use instead of the embedded proxy' },
  reconnectStrategy: { type: 'enum', values: RECONNECT_STRATEGIES, default: 'default', env: ['RECONNECT_STRATEGY'], doc: 'client reconnect strategy of library-driven targets (replay, anycable, socketio-csr): the library\'s default, or tuned = the same backoff for all (500 ms x2, cap 5 s, full jitter)' },
  reconnectBaseMs: { type: 'int', default: 500, min: 1, max: 60_000, env: ['RECONNECT_BASE_MS'], doc: 'base of the tuned backoff, ms (the benchmark\'s reconnectBaseMs): attempt k waits U(0, min(5 s, base x 2^k)); only with reconnect-strategy tuned' },
  subscribeOnly: { type: 'bool', default: false, env: ['SUBSCRIBE_ONLY'], doc: 'shared-stream shard: publish nothing, only subscribe to `stream` and record what arrives (tagged `run-id`); the coordinator judges it against the publishing shard\'s accepted messages' },
  runId: { type: 'string', default: '', maxLength: 128, pattern: /^[A-Za-z0-9._:-]*$/, env: ['RUN_ID'], doc: 'tag written into (publisher) or expected in (subscriber) every payload; default a fresh one. Shards sharing a stream share it' },
  allowPublishFailures: { type: 'bool', default: false, env: ['ALLOW_PUBLISH_FAILURES'], doc: 'the run is about publisher faults: messages the target did not accept make a warning instead of a fatal flag (they are never counted as lost either way)' },
} as const satisfies OptionTable;

export type JitterOptions = OptionValues<typeof JITTER_OPTIONS>;

export function parseJitterOptions(src: Parameters<typeof parseOptions>[1]): JitterOptions {
  return checkJitterOptions(parseOptions(JITTER_OPTIONS, src));
}

/** The rules only the combination can break, over values already parsed (the CLI's, the route's, latency's). */
export function checkJitterOptions(opts: JitterOptions): JitterOptions {
  const target = getTarget(opts.target); // unknown target → RR_ERR_TARGET_UNKNOWN
  const kinds = parsePlan(opts.plan); // unknown plan → RR_ERR_OPTION_INVALID
  const weather = parseWeather(opts.weather); // → RR_ERR_WEATHER_INVALID
  if (weather.length > 0 && kinds.some((k) => k !== 'drop')) {
    throw new ReboundError('RR_ERR_WEATHER_INVALID', `--weather takes the place of network plans: use --plan drop (client drops on top of the weather) or no network kind; got --plan ${opts.plan}`, { details: { option: 'plan' } });
  }
  // The proxies forward plain TCP and the clients are sent to them over http: a TLS target cannot take them.
  if ((weather.length > 0 || planNeedsProxy(kinds)) && opts.url !== undefined && /^(https|wss):/i.test(opts.url)) {
    throw new ReboundError('RR_ERR_WEATHER_NEEDS_PROXY', `${weather.length > 0 ? `weather ${opts.weather}` : `plan ${opts.plan}`} runs its clients through a proxy in front of the target, which forwards plain TCP: ${JSON.stringify(opts.url)} is TLS; give the target's plain http URL or a client-side plan (drop)`, { details: { option: 'url' } });
  }
  // A deploy restarts the target: one the runner starts it can; one at --url only through the operator's configured restart.
  if (weather.some((w) => w.condition === 'deploy') && opts.url !== undefined && !opts.subscribeOnly && !canRestartUrl(restartConfigFromEnv())) {
    throw new ReboundError('RR_ERR_WEATHER_NEEDS_RESTART', `weather ${opts.weather} has a deploy, which restarts the target, and ${JSON.stringify(opts.url)} is a server this runner did not start: set AVALANCHE_RESTART_COMMAND (or AVALANCHE_RESTART_HOOK_URL) in the runner's environment, or leave out --url so the runner starts the target`, { details: { option: 'weather' } });
  }
  checkReconnectOptions(target, opts);
  if (opts.clients * opts.msgs > LEDGER_MAX_CELLS) {
    throw new ReboundError('RR_ERR_OPTION_INVALID', `clients x msgs = ${opts.clients * opts.msgs} exceeds ${LEDGER_MAX_CELLS} ledger cells; split the clients over shards`, { details: { option: 'clients' } });
  }
  for (const k of ['broadcastUrl', 'toxiproxyUrl'] as const) checkTargetUrl(k, opts[k], `${kebab(k)} must be a loopback http URL`);
  checkTargetUrl('url', opts.url, 'url must be a loopback http(s) URL (127.0.0.0/8, localhost, [::1]) unless REBOUND_ALLOW_REMOTE_TARGETS=1');
  if (opts.subscribeOnly && opts.stream === '') {
    throw new ReboundError('RR_ERR_OPTION_INVALID', 'subscribe-only needs the shared stream\'s name (stream) and its publisher\'s tag (run-id)', { details: { option: 'stream' } });
  }
  if (opts.subscribeOnly && opts.runId === '') {
    throw new ReboundError('RR_ERR_OPTION_INVALID', 'subscribe-only needs the publisher\'s tag (run-id) to tell its messages from anything else on the stream', { details: { option: 'runId' } });
  }
  return opts;
}

import { ReboundError } from '../../lib/errors.ts';
import { parseOptions, type OptionTable, type OptionValues } from '../../lib/options.ts';
import { isAllowedTargetUrl } from '../../engine/measure/addresses.ts';
import { LEDGER_MAX_CELLS } from '../../engine/measure/ledger.ts';
import { openFileLimit } from '../../engine/measure/runner-limits.ts';
import { checkTargetUrl, getTarget } from '../../engine/targets/index.ts';
import { checkReconnectOptions } from '../../engine/targets/reconnect.ts';
import { RESTART_MODES, type RestartConfig } from '../../engine/measure/restart.ts';

/**
 * Avalanche options: N clients receiving at a fixed publish rate, one forced restart after the
 * warm-up, then wait for the herd. Defaults follow the benchmark's avalanche (n 1000, ramp 200)
 * with the 10 msg/s. The restart command and hook URL are NOT options: they come from
 * the runner's configuration (env), never from a request (see `restartConfigFromEnv`).
 */
export const AVALANCHE_OPTIONS = {
  target: { type: 'string', default: 'socketio', env: ['TARGET'], doc: 'target name' },
  url: { type: 'optional-string', default: undefined, env: ['TARGET_URL'], doc: 'base URL of an already running target (loopback only; modes command and hook); default: start it locally' },
  broadcastUrl: { type: 'optional-string', default: undefined, env: ['BROADCAST_URL'], doc: 'where to POST broadcasts (e.g. anycable-go\'s http://127.0.0.1:8090/_broadcast); default <url>/_broadcast' },
  restart: { type: 'enum', values: RESTART_MODES, default: 'kill', env: ['AVALANCHE_RESTART'], doc: 'how to restart the target' },
  clients: { type: 'int', default: 1000, min: 1, max: 18_000, env: ['NUM_CLIENTS'], aliases: ['n'], doc: 'concurrent clients' },
  rate: { type: 'number', default: 10, min: 0.1, max: 1000, env: ['PUB_RATE'], aliases: ['pub-rate'], doc: 'messages published per second, before, during and after the restart' },
  ramp: { type: 'int', default: 200, min: 1, max: 100_000, env: ['RAMP_RATE'], doc: 'client connects per second' },
  warmupMs: { type: 'int', default: 5000, min: 500, max: 600_000, env: ['AVALANCHE_WARMUP_MS'], doc: 'publishing time before the restart, ms' },
  publishAfterMs: { type: 'int', default: 15_000, min: 0, max: 600_000, env: ['AVALANCHE_PUBLISH_AFTER_MS'], doc: 'publishing time after the restart began, ms' },
  recoveryTimeoutMs: { type: 'int', default: 60_000, min: 1000, max: 900_000, env: ['AVALANCHE_RECOVERY_TIMEOUT_MS'], aliases: ['recovery-wait-ms'], doc: 'after the restart, wait at most this long for every dropped client to be back' },
  settleMs: { type: 'int', default: 3000, min: 0, max: 600_000, env: ['SETTLE_MS'], doc: 'after publishing ends and clients are back, wait for replays to land (ends early once complete)' },
  nodes: { type: 'int', default: 1, min: 1, max: 16, env: ['AVALANCHE_NODES'], doc: 'instances of the local target on different ports; clients are spread over them' },
  restartNodes: { type: 'int', default: 0, min: 0, max: 16, env: ['AVALANCHE_RESTART_NODES'], doc: 'kill/term: restart only the last N of the --nodes K nodes (0 = every node)' },
  front: { type: 'bool', default: false, env: ['AVALANCHE_FRONT'], doc: 'put a round-robin TCP front before the nodes (a load balancer): clients and publisher use its one address, a dropped client reconnects to whichever node accepts' },
  workers: { type: 'int', default: 1, min: 1, max: 16, env: ['REPLAY_WORKERS'], doc: 'replay target only: processes behind one port; --restart rolling then reloads the workers one at a time' },
  rollingGapMs: { type: 'int', default: 2000, min: 0, max: 600_000, env: ['AVALANCHE_ROLLING_GAP_MS'], doc: 'rolling: pause after a node is back before restarting the next' },
  termGraceMs: { type: 'int', default: 10_000, min: 100, max: 600_000, env: ['AVALANCHE_TERM_GRACE_MS'], doc: 'term/rolling: SIGKILL a node that has not exited this long after SIGTERM' },
  payloadBytes: { type: 'int', default: 0, min: 0, max: 65_536, env: ['PAYLOAD_BYTES'], doc: 'padding added to each message' },
  seed: { type: 'int', default: 0, min: 0, max: 0x7fffffff, env: ['SEED'], doc: 'seed for the runner-driven reconnect jitter; 0 picks one (reported)' },
  stream: { type: 'string', default: '', maxLength: 256, env: ['STREAM'], doc: 'stream/room name; default avalanche-<runId>' },
  broadcastKey: { type: 'string', default: '', env: ['BROADCAST_KEY', 'ANYCABLE_BROADCAST_SECRET'], doc: 'bearer key for /_broadcast (and the replay reload route)' },
  reconnectStrategy: { type: 'enum', values: ['default', 'tuned'], default: 'default', env: ['RECONNECT_STRATEGY'], doc: 'reconnect backoff: default (the library\'s own; runner-driven targets copy socket.io-client: 1 s x2, cap 5 s, +-50%) or tuned (500 ms x2, cap 5 s, full jitter)' },
  reconnectBaseMs: { type: 'int', default: 500, min: 1, max: 60_000, env: ['RECONNECT_BASE_MS'], doc: 'base of the tuned backoff, ms (the benchmark\'s reconnectBaseMs): attempt k waits U(0, min(5 s, base x 2^k)); only with reconnect-strategy tuned' },
} as const satisfies OptionTable;

export type AvalancheOptions = OptionValues<typeof AVALANCHE_OPTIONS>;

/**
 * The target's nodes share their broker (Redis): a message published on one node reaches every
 * node's clients, so one publisher serves them all (K publishers would deliver each message K times).
 */
export const hasSharedBroker = (t: { needsRedis?: boolean }): boolean => t.needsRedis === true;

/** Open files a run with --front needs in the runner: each client's socket plus the front's two, and some slack. */
export const frontFdNeed = (clients: number): number => clients * 3 + 256;

export const messagesFor = (o: Pick<AvalancheOptions, 'rate' | 'warmupMs' | 'publishAfterMs'>) => Math.max(1, Math.round(((o.warmupMs + o.publishAfterMs) / 1000) * o.rate));

/** Validate options together with the restart configuration: every mismatch is a clear 400 before a socket opens. */
export function parseAvalancheOptions(src: Parameters<typeof parseOptions>[1], config: RestartConfig = {}): AvalancheOptions {
  return checkAvalancheOptions(parseOptions(AVALANCHE_OPTIONS, src), config);
}

/** The rules only the combination (and the restart configuration) can break, over values already parsed. */
export function checkAvalancheOptions(opts: AvalancheOptions, config: RestartConfig = {}): AvalancheOptions {
  const target = getTarget(opts.target);
  const bad = (option: string, message: string) => new ReboundError('RR_ERR_OPTION_INVALID', message, { details: { option } });
  checkReconnectOptions(target, opts);
  if (opts.clients * messagesFor(opts) > LEDGER_MAX_CELLS) throw bad('clients', `clients x messages = ${opts.clients * messagesFor(opts)} exceeds ${LEDGER_MAX_CELLS} ledger cells`);
  checkTargetUrl('broadcastUrl', opts.broadcastUrl, 'broadcast-url must be a loopback http URL unless REBOUND_ALLOW_REMOTE_TARGETS=1');
  checkTargetUrl('url', opts.url, 'url must be a loopback http(s) URL unless REBOUND_ALLOW_REMOTE_TARGETS=1');
  const local = opts.url === undefined;
  if (!local && (opts.restart === 'kill' || opts.restart === 'term' || opts.restart === 'rolling')) throw bad('restart', `--restart ${opts.restart} restarts a target the runner started itself; with --url use --restart command or hook`);
  if (local && !target.service) throw bad('url', `target "${target.name}" has no local service: pass --url with --restart command or hook`);
  if (opts.workers > 1 && target.service?.name !== 'replay') throw bad('workers', `--workers applies to the replay target only (got target "${target.name}")`);
  if (opts.workers > 1 && opts.nodes > 1) throw bad('workers', '--workers and --nodes cannot be combined');
  if (opts.broadcastUrl !== undefined && opts.nodes > 1) throw bad('broadcastUrl', '--broadcast-url names one endpoint; with --nodes K each node gets its own publisher');
  if (!local && opts.nodes > 1) throw bad('nodes', '--nodes starts local instances; it cannot be combined with --url');
  if (opts.restart === 'rolling' && opts.nodes < 2 && opts.workers < 2) throw bad('restart', '--restart rolling needs several nodes (--nodes K >= 2) or a replay target with --workers N >= 2');
  if (opts.restartNodes > opts.nodes) throw bad('restartNodes', `--restart-nodes ${opts.restartNodes} is more than the ${opts.nodes} node(s) started`);
  if (opts.restartNodes > 0 && opts.restart !== 'kill' && opts.restart !== 'term') throw bad('restartNodes', '--restart-nodes applies to --restart kill and term (rolling restarts every node in turn)');
  if (opts.front && !local) throw bad('front', '--front balances the nodes the runner starts; it cannot be combined with --url');
  const fds = frontFdNeed(opts.clients);
  const limit = openFileLimit();
  if (opts.front && limit !== undefined && fds > limit) throw bad('front', `--front holds 3 descriptors per client in the runner (client, front, node side): ${opts.clients} clients need about ${fds}, over this process's open-file limit ${limit}; use fewer clients or no front`);
  if (opts.front && opts.restart === 'rolling') throw bad('front', '--front with --restart rolling is not supported: behind the front a client\'s node is unknown, so its own node\'s restart time is too');
  if (opts.front && opts.nodes > 1 && !hasSharedBroker(target)) throw bad('front', `--front over ${opts.nodes} nodes needs a target with a shared broker (a *-redis target): "${target.name}" nodes share no state, so they are not one service`);
  if (opts.restart === 'command' && !config.command) throw bad('restart', '--restart command needs AVALANCHE_RESTART_COMMAND in the runner\'s environment (a restart command never comes from a request)');
  if (opts.restart === 'hook') {
    if (!config.hookUrl) throw bad('restart', '--restart hook needs AVALANCHE_RESTART_HOOK_URL in the runner\'s environment');
    if (!isAllowedTargetUrl(config.hookUrl) || !/^https?:/.test(config.hookUrl)) throw bad('restart', `AVALANCHE_RESTART_HOOK_URL must be a loopback http(s) URL unless REBOUND_ALLOW_REMOTE_TARGETS=1; got ${JSON.stringify(config.hookUrl)}`);
  }
  return opts;
}

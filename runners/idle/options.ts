import { ReboundError } from '../../lib/errors.ts';
import { parseOptions, type OptionTable, type OptionValues } from '../../lib/options.ts';
import { checkTargetUrl, getTarget } from '../../engine/targets/index.ts';

/**
 * Idle-capacity options. Defaults are the benchmark's idle test (n 10000, hold 60 s, ramp 200,
 * stream `idle-probe`); its env names work for the CLI. One table for CLI, env and HTTP.
 */
export const IDLE_OPTIONS = {
  target: { type: 'string', default: 'replay', env: ['TARGET'], doc: 'target name' },
  url: { type: 'optional-string', default: undefined, env: ['TARGET_URL'], doc: 'base URL of an already running target (CLI only; loopback unless REBOUND_ALLOW_REMOTE_TARGETS=1); default: start it locally' },
  clients: { type: 'int', default: 10_000, min: 1, max: 2_000_000, env: ['NUM_CLIENTS', 'PER_SHARD_N'], aliases: ['n'], doc: 'idle connections to open' },
  hold: { type: 'number', default: 60, min: 0, max: 86_400, env: ['HOLD_SEC'], doc: 'seconds to hold every connection once all are subscribed' },
  ramp: { type: 'int', default: 200, min: 1, max: 100_000, env: ['RAMP_PER_SEC', 'RAMP_RATE'], doc: 'connects per second (over all workers)' },
  stream: { type: 'string', default: 'idle-probe', maxLength: 256, env: ['STREAM'], doc: 'stream every connection subscribes to' },
  workers: { type: 'string', default: 'auto', pattern: /^(auto|[1-9]\d{0,2})$/, env: ['IDLE_WORKERS'], doc: 'runner worker processes: auto (from the fd limit and n) or a count' },
  perWorker: { type: 'int', default: 0, min: 0, max: 1_000_000, env: ['IDLE_PER_WORKER'], doc: 'clients per worker for workers=auto (0 = 75% of the fd limit, at most 15,000)' },
  addresses: { type: 'int', default: 200, min: 1, max: 254, env: ['SOURCE_ADDRESSES'], doc: 'source addresses 127.0.0.1..N to spread clients over (each has ~28K ephemeral ports)' },
  connectTimeoutMs: { type: 'int', default: 20_000, min: 100, max: 600_000, env: ['CONNECT_TIMEOUT_MS'], doc: 'per-connection time to subscribe before it counts as failed (timeout)' },
  workerFdLimit: { type: 'int', default: 0, min: 0, max: 1_048_576, env: ['IDLE_WORKER_FD_LIMIT'], doc: 'start workers with this open-file limit (ulimit -n), e.g. to reproduce a small container; 0 = inherit' },
  serverWorkers: { type: 'int', default: 0, min: 0, max: 64, env: ['SERVER_WORKERS'], doc: 'target started locally (replay, ws, socketio): its --workers, processes behind one port (0 = one process); socketio-csr cannot' },
  pingInterval: { type: 'int', default: 0, min: 0, max: 3600, env: ['PING_INTERVAL_SEC'], doc: "AnyCable targets (replay, anycable): ask for this ping period, seconds, with the cable URL's ?pi= (the server clamps it to its own maximum: the replay server's --max-ping-interval-sec); 0 = the server's default" },
  shard: { type: 'optional-string', default: undefined, pattern: /^[\w.-]{1,64}$/, env: ['SHARD'], doc: 'a label for this shard, echoed as shardLabel' },
} as const satisfies OptionTable;

/** Targets whose clients may ask for a ping period with `?pi=` (AnyCable's URL parameter). */
export const PI_TARGETS = new Set(['replay', 'anycable']);

export type IdleOptions = OptionValues<typeof IDLE_OPTIONS>;

export function parseIdleOptions(src: Parameters<typeof parseOptions>[1]): IdleOptions {
  return checkIdleOptions(parseOptions(IDLE_OPTIONS, src));
}

/** The rules only the combination can break, over values already parsed. */
export function checkIdleOptions(o: IdleOptions): IdleOptions {
  const t = getTarget(o.target);
  checkTargetUrl('url', o.url);
  if (o.serverWorkers > 0 && (t.noWorkers || !t.service)) {
    throw new ReboundError('RR_ERR_OPTION_INVALID', `server-workers: target "${o.target}" cannot run as --workers N: ${t.noWorkers ?? 'it has no local service'}`, { details: { option: 'serverWorkers' } });
  }
  if (o.pingInterval > 0 && !PI_TARGETS.has(o.target)) throw new ReboundError('RR_ERR_OPTION_INVALID', `pingInterval: target "${o.target}" takes no ?pi= (only the AnyCable protocol has it: ${[...PI_TARGETS].join(', ')})`, { details: { option: 'pingInterval' } });
  const w = workerCount(o, undefined);
  if (o.workers !== 'auto' && w > o.clients) throw new ReboundError('RR_ERR_OPTION_INVALID', `workers (${w}) exceeds clients (${o.clients})`, { details: { option: 'workers' } });
  return o;
}

/** Clients one worker process may hold: 75% of its fd limit (the rest for files, pipes, IPC), at most 15,000. */
export const clientsPerWorker = (fdLimit: number) => Math.max(100, Math.min(15_000, Math.floor((fdLimit - 256) * 0.75)));

export function workerCount(o: IdleOptions, fdLimit: number | undefined): number {
  if (o.workers !== 'auto') return Number(o.workers);
  const perWorker = o.perWorker > 0 ? o.perWorker : clientsPerWorker(o.workerFdLimit || fdLimit || 20_000);
  return Math.max(1, Math.min(o.clients, Math.ceil(o.clients / perWorker)));
}

/** Extra args for the locally started target service. */
export function idleServiceArgs(o: IdleOptions): string[] {
  return o.serverWorkers > 0 ? ['--workers', String(o.serverWorkers)] : [];
}

import type { Server } from 'node:http';
import { ReboundError, toErrorBody } from '../../lib/errors.ts';
import { argvToValues, helpText, parseOptions, type OptionTable, type OptionValues } from '../../lib/options.ts';

/** What a service process tells its parent once it listens (IPC message and one stdout JSON line). */
export interface ListeningMessage {
  type: 'listening';
  service: string;
  port: number;
  host: string;
  pid: number;
}

export interface RunningService {
  /** The port clients use. A cluster primary that binds nothing itself reports its workers' port here. */
  port: number;
  /** Graceful stop: stop accepting, say goodbye to clients, close. */
  stop(): Promise<void>;
}

/** Options every service process accepts. */
export const COMMON_SERVICE_OPTIONS = {
  port: { type: 'int', default: 0, min: 0, max: 65535, env: ['PORT'], doc: 'port to listen on (0 = any free port, reported to the parent)' },
  host: { type: 'string', default: '127.0.0.1', env: ['HOST'], doc: 'address to bind (unset on Railway: "::", both IPv4 and IPv6); anything but loopback needs BROADCAST_KEY or --public' },
  broadcastKey: { type: 'string', default: '', env: ['BROADCAST_KEY'], doc: 'bearer key required by /_broadcast (empty = open, loopback only unless --public)' },
  public: { type: 'bool', default: false, doc: 'allow a non-loopback host without BROADCAST_KEY (/_broadcast open to anyone who reaches the port)' },
} as const satisfies OptionTable;

/** Same rule as the runner's: only these never leave the machine. */
export const isLoopbackHost = (host: string) => {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
};

/** Railway sets these in every deployment; nothing else here does. */
export const onRailway = (env: Record<string, string | undefined>) => Boolean(env.RAILWAY_ENVIRONMENT_ID || env.RAILWAY_SERVICE_ID);

/**
 * The host to bind and whether it may be bound. HOST unset on Railway binds `::` (dual stack):
 * its private network resolves `<service>.railway.internal` to IPv6 in older environments, which
 * an IPv4-only `0.0.0.0` never answers. A non-loopback host without a broadcast key would leave
 * `/_broadcast` open to anyone who reaches the port, so it is refused unless `--public` says so
 * (as anycable-go refuses to run without a secret unless `--public`).
 */
export function bindHost(opts: { host: string; broadcastKey: string; public: boolean }, hostGiven: boolean, env: Record<string, string | undefined>): string {
  const host = !hostGiven && onRailway(env) ? '::' : opts.host;
  if (!isLoopbackHost(host) && !opts.broadcastKey && !opts.public)
    throw new ReboundError('RR_ERR_OPTION_INVALID', `refusing to bind ${host} without BROADCAST_KEY: anyone who reaches the port could publish through /_broadcast. Set BROADCAST_KEY (--broadcast-key), bind 127.0.0.1, or pass --public to run open on purpose`, { details: { option: 'BROADCAST_KEY' } });
  return host;
}

export interface ServiceMainOptions<T extends OptionTable> {
  /** Hard deadline of a graceful stop. @default 5000 */
  stopDeadlineMs?: number;
  /** Rules across options (e.g. two that cannot go together): throw a ReboundError to refuse, exit 2. */
  check?(opts: OptionValues<T>): void;
}

/**
 * Shared process wrapper for every service: parse options (CLI > env > defaults), start, report
 * the bound port, and stop cleanly on SIGTERM/SIGINT with a hard deadline so a stuck close can
 * never keep a runner waiting.
 */
export async function serviceMain<T extends OptionTable>(
  name: string,
  table: T,
  start: (opts: OptionValues<T>) => Promise<RunningService>,
  { stopDeadlineMs = 5000, check }: ServiceMainOptions<T> = {},
): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help')) {
    process.stdout.write(`usage: npm run serve:${name} -- [options]\n${helpText(table)}\n`);
    return;
  }
  let opts: OptionValues<T>;
  try {
    opts = parseOptions(table, { values: argvToValues(argv, table), env: process.env, origin: 'CLI' });
    check?.(opts);
    if ('host' in table && 'broadcastKey' in table && 'public' in table) {
      const hostGiven = process.env.HOST !== undefined || argv.some((a) => a === '--host' || a.startsWith('--host='));
      const host = bindHost(opts as unknown as { host: string; broadcastKey: string; public: boolean }, hostGiven, process.env);
      opts = Object.freeze({ ...opts, host }) as OptionValues<T>;
    }
  } catch (err) {
    exitWithError(name, err, 2); // whatever refused the options (a target unavailable here too): bad input
  }
  // Handlers go in before anything can report "listening": a parent may stop us the moment it
  // hears the port, and a SIGTERM that finds no handler kills the process without a goodbye.
  let svc: RunningService | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${name}: ${signal}, stopping\n`);
    setTimeout(() => process.exit(1), stopDeadlineMs).unref();
    try {
      await svc?.stop();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  svc = await start(opts).catch((err: unknown) => exitWithError(name, err));
  const port = svc.port;
  const msg: ListeningMessage = { type: 'listening', service: name, port, host: String((opts as Record<string, unknown>).host ?? ''), pid: process.pid };
  process.stdout.write(JSON.stringify(msg) + '\n');
  process.send?.(msg);

  // A parent that dies must not leave a server holding ports.
  process.on('disconnect', () => void shutdown('parent gone'));
}

/**
 * A service (or cluster worker) that cannot start: one coded line on stderr (a parent quotes it:
 * spawn.ts forkListening), not a stack; exit `exitCode`, by default 2 for bad input, 1 otherwise.
 */
export function exitWithError(name: string, err: unknown, exitCode?: number): never {
  const body = toErrorBody(err);
  process.stderr.write(`${name}: ${body.code}: ${body.message}\n`);
  process.exit(exitCode ?? (body.statusCode < 500 ? 2 : 1));
}

/** The one wording of a taken port, whoever finds it (a bind here, uWS's probe before its shared bind). */
export const portInUse = (host: string, port: number) => new ReboundError('RR_ERR_SERVICE_START', `port ${port} on ${host} is already in use (another server listens there)`);

/** Listen and resolve with the bound port (port 0 picks a free one). */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const refused = (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? portInUse(host, port) : err.code === 'EACCES' ? new ReboundError('RR_ERR_SERVICE_START', `no permission to listen on ${host}:${port}`) : err);
    server.once('error', refused);
    server.listen({ port, host, backlog: 4096 }, () => {
      server.off('error', refused);
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : port);
    });
  });
}

import { ReboundError } from '../../lib/errors.ts';
import type { OptionTable, OptionValues } from '../../lib/options.ts';
import { workersOption } from '../common/cluster/main.ts';
import { REFERENCE_LIMIT_OPTIONS } from '../common/limits.ts';
import { COMMON_SERVICE_OPTIONS, isLoopbackHost, type RunningService } from '../common/service-main.ts';
import type { UwsResponse } from '../uws/load.ts';
import { assertPortFree, freePort } from '../uws/server.ts';
import { loadSoketi, SOKETI_NO_WORKERS, type SoketiLoad } from './load.ts';

/** soketi's default app (its docs and every Pusher quick start use it); env overrides it. */
export const SOKETI_DEFAULT_APP = { id: 'app-id', key: 'app-key', secret: 'app-secret' } as const;

const APP_TOKEN = /^[A-Za-z0-9._-]{1,64}$/;

export const SOKETI_OPTIONS = {
  port: COMMON_SERVICE_OPTIONS.port,
  host: { type: 'string', default: '127.0.0.1', env: ['HOST'], doc: 'address to bind; anything but loopback needs an app secret of your own (SOKETI_DEFAULT_APP_SECRET) or --public' },
  public: { type: 'bool', default: false, doc: "allow a non-loopback host with soketi's well-known default secret (anyone who reaches the port could publish)" },
  appId: { type: 'string', default: SOKETI_DEFAULT_APP.id, pattern: APP_TOKEN, env: ['SOKETI_DEFAULT_APP_ID'], doc: 'Pusher app id of the one app (letters, digits, . _ -; at most 64)' },
  appKey: { type: 'string', default: SOKETI_DEFAULT_APP.key, pattern: APP_TOKEN, env: ['SOKETI_DEFAULT_APP_KEY'], doc: 'Pusher app key (what clients put in /app/<key>)' },
  appSecret: { type: 'string', default: SOKETI_DEFAULT_APP.secret, pattern: /^[\x21-\x7e]{1,256}$/, env: ['SOKETI_DEFAULT_APP_SECRET'], doc: 'Pusher app secret that signs HTTP API calls (printable ASCII, at most 256; never logged)' },
  maxConnections: { type: 'int', default: -1, min: -1, max: 10_000_000, env: ['SOKETI_DEFAULT_APP_MAX_CONNS'], doc: "the app's connection cap (-1 = none, soketi's default: capacity runs find the machine's limit, not this one)" },
  stopGraceMs: { ...REFERENCE_LIMIT_OPTIONS.stopGraceMs, max: 3000, doc: "soketi's shutdownGracePeriod: on stop, after every socket got pusher:error 4200 and was closed, how long until the listener closes (soketi's own default 3000)" },
  workers: workersOption('SOKETI_WORKERS', 'accepted for the runners\' shared flag; only 0 or 1 (one process): see SOKETI_NO_WORKERS'),
} as const satisfies OptionTable;

export type SoketiOptions = OptionValues<typeof SOKETI_OPTIONS>;

/** Refused at start: several processes (SOKETI_NO_WORKERS), a public port with the secret everyone knows. */
export function checkSoketiOptions(opts: SoketiOptions): void {
  if (opts.workers > 1) throw new ReboundError('RR_ERR_OPTION_INVALID', `--workers ${opts.workers}: ${SOKETI_NO_WORKERS}`, { details: { option: 'workers' } });
  if (!isLoopbackHost(opts.host) && opts.appSecret === SOKETI_DEFAULT_APP.secret && !opts.public)
    throw new ReboundError('RR_ERR_OPTION_INVALID', `refusing to bind ${opts.host} with soketi's default app secret: anyone who reaches the port could publish. Set SOKETI_DEFAULT_APP_SECRET, bind 127.0.0.1, or pass --public to run open on purpose`, { details: { option: 'SOKETI_DEFAULT_APP_SECRET' } });
}

interface UwsRoutes {
  get(pattern: string, handler: (res: unknown, req: unknown) => void): unknown;
}

/**
 * Run soketi in this process (so the service pid is the server's pid, which the memory samplers
 * read), on soketi's own defaults except: the one app from options, no rate limits, port 0
 * resolved, its metrics/usage listener on a free loopback port (its default 9601 on 0.0.0.0 would
 * collide between instances), no UDP node discovery (one process: SOKETI_NO_WORKERS),
 * `/health` answered like `/` (the runners' probe), and its logs on stderr (stdout carries the
 * listening line).
 */
export async function createSoketiServer(found: Extract<SoketiLoad, { ok: true }>, opts: SoketiOptions): Promise<RunningService> {
  const { soketi, uws } = loadSoketi(found);
  routeLogsToStderr(soketi.Log);
  // uSockets sets SO_REUSEADDR only on a concrete port, so port 0 is made one first (a restart on
  // the same port is then not blocked by TIME_WAIT); and it binds with SO_REUSEPORT, so a port
  // another server holds is refused here rather than silently shared (services/uws/server.ts).
  if (opts.port !== 0) await assertPortFree(opts.host, opts.port);
  const bindPort = opts.port === 0 ? await freePort(opts.host) : opts.port;
  const server = new soketi.Server({
    host: opts.host,
    port: bindPort,
    'appManager.array.apps': [
      {
        id: opts.appId,
        key: opts.appKey,
        secret: opts.appSecret,
        maxConnections: opts.maxConnections,
        enableClientMessages: false,
        enabled: true,
        maxBackendEventsPerSecond: -1,
        maxClientEventsPerSecond: -1,
        maxReadRequestsPerSecond: -1,
        webhooks: [],
      },
    ],
    'metrics.enabled': false,
    'metrics.host': '127.0.0.1',
    'metrics.port': 0,
    shutdownGracePeriod: opts.stopGraceMs,
    'adapter.driver': 'local',
  });
  // Node discovery (node-discover) binds UDP 0.0.0.0:11002 and broadcasts every 500 ms; only the
  // cluster adapter and cluster rate limiter read it, and this one process uses neither.
  server.configureDiscovery = async () => undefined;
  const configureHttp = server.configureHttp.bind(server);
  server.configureHttp = (app: unknown) => {
    (app as UwsRoutes).get('/health', (res) => server.httpHandler.healthCheck(res));
    const attach = server.httpHandler.attachMiddleware.bind(server.httpHandler);
    server.httpHandler.attachMiddleware = (res, fns) => attach(statusFirst(res as UwsResponse), fns);
    return configureHttp(app);
  };
  await new Promise<void>((resolve) => void server.start(() => resolve()));
  if (!server.serverProcess) throw new ReboundError('RR_ERR_SERVICE_START', `soketi could not listen on ${opts.host}:${bindPort}`);
  const port = uws.us_socket_local_port(server.serverProcess);
  return { port, stop: () => server.stop() };
}

/**
 * soketi's CORS middleware writes headers before the handler picks a status, and uWS's writeHeader
 * commits "200 OK" when no status was written yet (uNetworking/uWebSockets#1754): every HTTP API
 * refusal (401 wrong signature, 404 unknown app, 413, 429) would reach the client as a 200 with
 * the error only in the body, and a Pusher SDK would count a forged or misaddressed publish as
 * sent. Headers are held until the response ends, then written after its status.
 */
function statusFirst(res: UwsResponse): UwsResponse {
  const headers: Array<[string, string]> = [];
  let status: string | undefined;
  const writeStatus = res.writeStatus.bind(res);
  const writeHeader = res.writeHeader.bind(res);
  const end = res.end.bind(res);
  res.writeStatus = (s) => {
    status = s;
    return res;
  };
  res.writeHeader = (key, value) => {
    headers.push([key, String(value)]);
    return res;
  };
  res.end = (body, closeConnection) => {
    if (status !== undefined) writeStatus(status);
    for (const [k, v] of headers.splice(0)) writeHeader(k, v);
    return end(body, closeConnection);
  };
  return res;
}

/** soketi prints through Log.log / Log.br (console.log); send both to stderr. */
function routeLogsToStderr(log: Record<string, unknown>): void {
  log.log = (message: unknown) => void process.stderr.write(`${String(message)}\n`);
  log.br = () => undefined;
}

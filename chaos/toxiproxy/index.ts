import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { ReboundError } from '../../lib/errors.ts';
import { mulberry32 } from '../../lib/rng.ts';
import { ToxiproxyApi } from './api.ts';
import { ChaosError } from './errors.ts';
import { isLoopbackAddress, PUBLIC_OPT_IN } from './loopback.ts';
import type { LinkEnv } from './link.ts';
import { DEFAULT_TOXIPROXY_SERVER_OPTIONS, type ToxiproxyServer, type ToxiproxyServerOptions } from './types.ts';

export * from './types.ts';
export { TOXIPROXY_VERSION } from './api.ts';

/**
 * Start an embedded Toxiproxy-compatible server: the Toxiproxy HTTP API on `host:port`, and a
 * TCP proxy per created proxy. `toxiproxy-node-client` works against it unchanged.
 *
 * @example
 * const tp = await createToxiproxyServer({ port: 0 });
 * const client = new Toxiproxy(tp.url);
 * const proxy = await client.createProxy({ name: 'ws', listen: '127.0.0.1:0', upstream: 'localhost:3000' });
 * await proxy.addToxic({ name: 'lag', type: 'latency', stream: 'downstream', toxicity: 1, attributes: { latency: 200, jitter: 50 } });
 * await tp.close();
 */
export async function createToxiproxyServer(options: ToxiproxyServerOptions = {}): Promise<ToxiproxyServer> {
  const opts = validate({ ...DEFAULT_TOXIPROXY_SERVER_OPTIONS, ...stripUndefined(options) });
  const env: LinkEnv = {
    rng: opts.seed === undefined ? Math.random : mulberry32(opts.seed),
    now: () => performance.now(),
    maxBufferedBytes: opts.maxBufferedBytes,
    timers: { armed: 0 },
    allowPublic: opts.allowPublic,
  };
  const api = new ToxiproxyApi(env);
  if (opts.populate) await api.populateAll(opts.populate);

  const http = createServer({ keepAlive: true }, api.handle);
  try {
    http.listen({ port: opts.port, host: opts.host });
    await once(http, 'listening');
  } catch (cause) {
    api.shutdown();
    throw new ChaosError('RR_ERR_CHAOS_PROXY_LISTEN', `chaos proxy API cannot listen on ${opts.host}:${opts.port}: ${(cause as Error).message}`, {
      cause,
      details: { host: opts.host, port: opts.port },
    });
  }
  http.on('error', () => {});
  const port = (http.address() as AddressInfo).port;
  const urlHost = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  let closing: Promise<void> | undefined;

  return {
    url: `http://${urlHost}:${port}`,
    host: opts.host,
    port,
    stats: () => ({
      proxies: api.proxies.size,
      connections: [...api.proxies.values()].reduce((n, p) => n + p.connectionCount, 0),
      timers: env.timers.armed,
    }),
    close() {
      closing ??= new Promise<void>((resolve) => {
        api.shutdown();
        http.close(() => resolve());
        http.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Configuration errors throw at construction (RR_ERR_OPTION_INVALID), never later on the data path. */
function validate<T extends Required<Pick<ToxiproxyServerOptions, 'port' | 'host' | 'maxBufferedBytes' | 'allowPublic'>> & ToxiproxyServerOptions>(o: T): Readonly<T> {
  const bad = (option: string, why: string, got: unknown) =>
    new ReboundError('RR_ERR_OPTION_INVALID', `chaos proxy option "${option}" ${why} (got ${JSON.stringify(got)})`, { details: { option } });
  if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535) throw bad('port', 'must be an integer in 0..65535', o.port);
  if (typeof o.host !== 'string' || o.host === '') throw bad('host', 'must be a non-empty string', o.host);
  if (!o.allowPublic && o.host !== 'localhost' && !isLoopbackAddress(o.host)) throw bad('host', `is not a loopback address: ${PUBLIC_OPT_IN}`, o.host);
  if (!(o.maxBufferedBytes >= 64 * 1024)) throw bad('maxBufferedBytes', 'must be >= 65536', o.maxBufferedBytes);
  if (o.seed !== undefined && !Number.isInteger(o.seed)) throw bad('seed', 'must be an integer', o.seed);
  return Object.freeze(o);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

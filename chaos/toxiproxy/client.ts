import { Toxiproxy, type Proxy, type Toxic } from 'toxiproxy-node-client';
import { ChaosError } from './errors.ts';
import type { Direction, ToxicAttributeMap, ToxicJson, ToxicType } from './types.ts';

/**
 * Runner-side helper over the official `toxiproxy-node-client`: the same calls work against the
 * embedded proxy and a real Toxiproxy. It adds what the client lacks: typed toxic specs
 * (including `noop`, `reset_peer`, `limit_data`), remove/update by name, a request timeout and
 * coded errors.
 */

/** A toxic to add; omitted fields take Toxiproxy's defaults (stream downstream, toxicity 1, name `<type>_<stream>`, attributes 0). */
export type ToxicSpec = {
  [K in ToxicType]: { type: K; name?: string; stream?: Direction; toxicity?: number; attributes?: Partial<ToxicAttributeMap[K]> };
}[ToxicType];

export interface ChaosProxyOptions {
  name: string;
  /** `host:port` the proxy forwards to. */
  upstream: string;
  /** @default '127.0.0.1:0' (a free port, read back from `port`) */
  listen?: string;
  /**
   * Delete a proxy of the same name first (a leftover from a crashed run).
   * @default true
   */
  replace?: boolean;
  /**
   * Per API call; the npm client has none of its own.
   * @default 10000
   */
  timeoutMs?: number;
}

/** Run a client call with a timeout; failures become RR_ERR_CHAOS_PROXY_API with the HTTP status in details. */
async function call<T>(what: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([fn(), timeout]);
  } catch (cause) {
    // ToxiproxyError is an Error; the HTTP status is only in its message.
    const why = cause instanceof Error ? cause.message : String(cause);
    const status = cause instanceof Error ? /status code (\d{3})/.exec(why) : null;
    throw new ChaosError('RR_ERR_CHAOS_PROXY_API', `toxiproxy ${what} failed: ${why}`, { cause, details: status ? { status: Number(status[1]) } : {} });
  } finally {
    clearTimeout(timer);
  }
}

/** Where to connect for a proxy's reported `listen` (`host:port`, `[v6]:port`): a wildcard host becomes `wildcardHost`. */
export function connectHost(listen: string, wildcardHost: string): { host: string; port: number } {
  const i = listen.lastIndexOf(':');
  const host = listen.slice(0, i).replace(/^\[|\]$/g, '');
  return { host: host === '' || host === '::' || host === '0.0.0.0' ? wildcardHost : host, port: Number(listen.slice(i + 1)) };
}

/**
 * Create (or replace) a proxy in front of `upstream` and return a handle for toxics.
 *
 * @example
 * const p = await createChaosProxy(tp.url, { name: 'replay', upstream: `127.0.0.1:${port}` });
 * await p.addToxic({ type: 'latency', attributes: { latency: 300, jitter: 100 } });
 * await p.setEnabled(false); // drop everyone
 */
export async function createChaosProxy(api: string | Toxiproxy, options: ChaosProxyOptions) {
  const client = typeof api === 'string' ? new Toxiproxy(api) : api;
  const timeoutMs = options.timeoutMs ?? 10_000;
  if (options.replace ?? true) {
    const all = await call('list proxies', timeoutMs, () => client.getAll());
    const old = all[options.name];
    if (old) await call(`delete proxy ${options.name}`, timeoutMs, () => old.remove());
  }
  let proxy = await call(`create proxy ${options.name}`, timeoutMs, () =>
    client.createProxy({ name: options.name, listen: options.listen ?? '127.0.0.1:0', upstream: options.upstream }),
  );
  const { host, port } = connectHost(proxy.listen, new URL(client.host).hostname.replace(/^\[|\]$/g, ''));
  const toJson = (t: Toxic<unknown>): ToxicJson => t.toJson() as unknown as ToxicJson;

  return {
    name: proxy.name,
    /** The bound listen address the server reported, e.g. `127.0.0.1:41234`. */
    listen: proxy.listen,
    /** Where clients should connect. */
    host,
    port,
    get proxy() {
      return proxy;
    },
    async addToxic(spec: ToxicSpec) {
      // Keys left undefined are dropped by JSON.stringify, so the server applies its defaults.
      const body = { name: spec.name, type: spec.type, stream: spec.stream, toxicity: spec.toxicity, attributes: spec.attributes } as unknown as Parameters<Proxy['addToxic']>[0];
      return toJson(await call(`add toxic ${spec.name ?? spec.type} to ${proxy.name}`, timeoutMs, () => proxy.addToxic(body)));
    },
    /** Merge attributes / replace toxicity of a live toxic; applies to open connections. */
    async updateToxic(name: string, change: { attributes?: Record<string, number>; toxicity?: number }) {
      const toxic = await call(`get toxic ${name}`, timeoutMs, () => proxy.getToxic(name));
      const body = { ...toxic.toJson(), ...change, attributes: { ...(toxic.attributes as object), ...change.attributes } } as Parameters<Toxic<unknown>['update']>[0];
      return toJson(await call(`update toxic ${name}`, timeoutMs, () => toxic.update(body)));
    },
    async removeToxic(name: string) {
      const toxic = await call(`get toxic ${name}`, timeoutMs, () => proxy.getToxic(name));
      await call(`remove toxic ${name}`, timeoutMs, () => toxic.remove());
    },
    /** `false` closes the listener and every connection; `true` listens again on the same address. */
    async setEnabled(enabled: boolean) {
      // Send back the listen the server reported: `127.0.0.1:0` would count as a change and move the port.
      proxy = await call(`${enabled ? 'enable' : 'disable'} proxy ${proxy.name}`, timeoutMs, () => proxy.update({ enabled, listen: proxy.listen, upstream: proxy.upstream }));
    },
    /** Delete the proxy (closes its connections). */
    async remove() {
      await call(`delete proxy ${proxy.name}`, timeoutMs, () => proxy.remove());
    },
  };
}

/** The handle createChaosProxy returns. */
export type ChaosProxyHandle = Awaited<ReturnType<typeof createChaosProxy>>;

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, apiErrors } from './errors.ts';
import type { LinkEnv } from './link.ts';
import { decodeFirstValue } from './gojson.ts';
import { ChaosProxy } from './proxy.ts';
import { cannotUnmarshal, decodeField, decodeObject, parseString, parseToxicCreate, parseToxicUpdate, toxicJson } from './toxics.ts';
import type { ProxyInput } from './types.ts';

/** What `GET /version` reports: the Toxiproxy release whose API this mirrors. */
export const TOXIPROXY_VERSION = '2.12.0';
const MAX_BODY_BYTES = 16 * 1024 * 1024;

type Reply = { status: number; body?: unknown; raw?: string; contentType?: string };
type Handler = (params: string[], body: () => Promise<unknown>) => Promise<Reply>;
interface Route {
  pattern: RegExp;
  methods: Record<string, Handler>;
}

/** Go's encoding/json escapes <, > and & in strings; do the same so bodies match byte for byte. */
const goJson = (v: unknown) => JSON.stringify(v).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
const json = (status: number, body: unknown): Reply => ({ status, body });
const noContent: Reply = { status: 204 };

/**
 * The proxy collection and its HTTP API (Toxiproxy `api.go` + `proxy_collection.go`). Every
 * request runs under one lock, like the Go collection's mutex, so concurrent API calls never
 * interleave halfway through a bind or a populate.
 */
export class ToxiproxyApi {
  readonly proxies = new Map<string, ChaosProxy>();
  private lock: Promise<unknown> = Promise.resolve();
  private readonly routes: Route[];

  constructor(private readonly env: LinkEnv) {
    const seg = '([^/]+)';
    this.routes = [
      { pattern: /^\/reset$/, methods: { POST: () => this.reset() } },
      { pattern: /^\/version$/, methods: { GET: async () => ({ status: 200, raw: `{"version": "${TOXIPROXY_VERSION}"}\n`, contentType: 'application/json;charset=utf-8' }) } },
      { pattern: /^\/populate$/, methods: { POST: (_p, body) => this.populate(body) } },
      {
        pattern: /^\/proxies$/,
        methods: {
          GET: async () => json(200, Object.fromEntries([...this.proxies].map(([k, p]) => [k, p.toJSON()]))),
          POST: async (_p, body) => this.createProxy(await body()),
        },
      },
      {
        pattern: new RegExp(`^/proxies/${seg}$`),
        methods: {
          GET: async ([name]) => json(200, this.get(name!).toJSON()),
          POST: (p, body) => this.updateProxy(p[0]!, body),
          PATCH: (p, body) => this.updateProxy(p[0]!, body),
          DELETE: async ([name]) => {
            this.get(name!).stop();
            this.proxies.delete(name!);
            return noContent;
          },
        },
      },
      {
        pattern: new RegExp(`^/proxies/${seg}/toxics$`),
        methods: {
          GET: async ([name]) => json(200, this.get(name!).toJSON().toxics),
          POST: async ([name], body) => {
            const p = this.get(name!);
            const toxic = parseToxicCreate(await body(), (n) => p.findToxic(n) !== undefined);
            p.addToxic(toxic);
            return json(200, toxicJson(toxic));
          },
        },
      },
      {
        pattern: new RegExp(`^/proxies/${seg}/toxics/${seg}$`),
        methods: {
          GET: async ([name, toxic]) => json(200, toxicJson(this.getToxic(name!, toxic!).toxic)),
          POST: (p, body) => this.updateToxic(p[0]!, p[1]!, body),
          PATCH: (p, body) => this.updateToxic(p[0]!, p[1]!, body),
          DELETE: async ([name, toxicName]) => {
            const { proxy, toxic } = this.getToxic(name!, toxicName!);
            proxy.removeToxic(toxic);
            return noContent;
          },
        },
      },
    ];
  }

  /** node:http request listener. Never throws; every failure becomes a Toxiproxy error body. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    res.setHeader('X-Toxiproxy-Request-Id', randomUUID());
    const path = (req.url ?? '/').split('?')[0]!;
    // Ours (Toxiproxy has none): a platform health check (railway.toml's healthcheckPath), answered
    // before the browser check so any checker's user agent gets through.
    if (path === '/health' && (req.method === 'GET' || req.method === 'HEAD')) {
      const refusedDials = [...this.proxies.values()].reduce((n, p) => n + p.refusedDials, 0);
      return send(res, json(200, { status: 'ok', service: 'chaos-proxy', version: TOXIPROXY_VERSION, proxies: this.proxies.size, refusedDials }));
    }
    // Ours: Toxiproxy's /metrics (off by default there) has byte counters we do not keep; this one
    // carries the dial outcomes, so an upstream refused by the loopback rule is visible.
    if (path === '/metrics' && req.method === 'GET') return plain(res, 200, this.metrics());
    if ((req.headers['user-agent'] ?? '').startsWith('Mozilla/')) return plain(res, 403, 'User agent not allowed\n');
    const route = this.routes.find((r) => r.pattern.test(path));
    if (!route) return plain(res, 404, '404 page not found\n');
    const handler = route.methods[req.method ?? ''];
    if (!handler) {
      res.statusCode = 405;
      res.end();
      return;
    }
    let params: string[];
    try {
      params = route.pattern.exec(path)!.slice(1).map(decodeURIComponent);
    } catch {
      return plain(res, 404, '404 page not found\n');
    }
    // Read the body before taking the lock, so a slow uploader cannot stall other API calls.
    const body = req.method === 'POST' || req.method === 'PATCH' ? readJson(req, res) : Promise.resolve(undefined);
    // A bad body fails only the handler that reads it: never an unhandled rejection.
    body.catch(() => {});
    const run = () => handler(params, () => body);
    const done = this.lock.then(run, run);
    this.lock = done.catch(() => undefined);
    done.then(
      (reply) => send(res, reply),
      (err: unknown) => sendError(res, err instanceof ApiError ? err : new ApiError(err instanceof Error ? err.message : String(err), 500)),
    );
  };

  /** Stop every proxy and forget them (server shutdown). */
  shutdown(): void {
    for (const p of this.proxies.values()) p.stop();
    this.proxies.clear();
  }

  /** Create proxies at start-up (`-config`); same rules as `POST /populate`. */
  async populateAll(input: readonly ProxyInput[]): Promise<void> {
    const reply = await this.populate(async () => input);
    if (reply.status !== 201) throw new ApiError((reply.body as { error: string }).error, reply.status);
  }

  private get(name: string): ChaosProxy {
    const p = this.proxies.get(name);
    if (!p) throw apiErrors.proxyNotFound();
    return p;
  }

  private metrics(): string {
    const label = (v: string) => v.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
    const lines: string[] = [];
    for (const [metric, help, pick] of [
      ['rebound_chaos_proxy_refused_dials_total', 'Accepted clients closed because the upstream is not a loopback address (public use off).', (p: ChaosProxy) => p.refusedDials],
      ['rebound_chaos_proxy_failed_dials_total', 'Accepted clients closed because the upstream dial failed.', (p: ChaosProxy) => p.failedDials],
    ] as const) {
      lines.push(`# HELP ${metric} ${help}`, `# TYPE ${metric} counter`);
      for (const p of this.proxies.values()) lines.push(`${metric}{proxy="${label(p.name)}",upstream="${label(p.upstream)}"} ${pick(p)}`);
    }
    return lines.join('\n') + '\n';
  }

  private getToxic(proxyName: string, toxicName: string) {
    const proxy = this.get(proxyName);
    const toxic = proxy.findToxic(toxicName);
    if (!toxic) throw apiErrors.toxicNotFound();
    return { proxy, toxic };
  }

  private async createProxy(body: unknown): Promise<Reply> {
    const input = decodeProxy(body);
    requireFields(input);
    if (this.proxies.has(input.name)) throw apiErrors.proxyExists();
    return json(201, (await this.addOrReplace(input)).toJSON());
  }

  private async updateProxy(name: string, body: () => Promise<unknown>): Promise<Reply> {
    const proxy = this.get(name);
    const input = decodeProxy(await body(), { listen: proxy.listen, upstream: proxy.upstream, enabled: proxy.enabled });
    // Toxiproxy Proxy.Update: a changed listen/upstream restarts (dropping connections), then `enabled` is applied.
    if (await proxy.differs(input.listen, input.upstream)) {
      proxy.stop();
      proxy.listen = input.listen;
      proxy.upstream = input.upstream;
    }
    if (input.enabled && !proxy.enabled) await proxy.start();
    if (!input.enabled && proxy.enabled) proxy.stop();
    return json(200, proxy.toJSON());
  }

  private async updateToxic(proxyName: string, toxicName: string, body: () => Promise<unknown>): Promise<Reply> {
    const { proxy, toxic } = this.getToxic(proxyName, toxicName);
    proxy.updateToxic(toxic, parseToxicUpdate(await body(), toxic));
    return json(200, toxicJson(toxic));
  }

  /**
   * `POST /populate`: validate every entry first (nothing is created on a missing field), then
   * add or replace in order. An existing proxy whose resolved listen and upstream match is kept
   * untouched (toxics, enabled flag and connections survive). The first failure stops the loop;
   * the body then carries the error and the proxies handled so far.
   */
  private async populate(readBody: () => Promise<unknown>): Promise<Reply> {
    const done: ChaosProxy[] = [];
    const reply = (status: number, err?: ApiError): Reply => ({
      status,
      body: { ...(err ? { error: err.message, status: err.status } : {}), proxies: done.length > 0 ? done.map((p) => p.toJSON()) : null },
    });
    try {
      const body = await readBody();
      if (body !== null && !Array.isArray(body)) throw cannotUnmarshal(typeof body, 'value of type []struct { main.Proxy; Enabled *bool "json:\\"enabled\\" default:\\"true\\"" }');
      const inputs = ((body ?? []) as unknown[]).map((entry) => decodeProxy(entry));
      inputs.forEach((p, i) => requireFields(p, ` at proxy ${i + 1}`));
      for (const input of inputs) done.push(await this.addOrReplace(input));
      return reply(201);
    } catch (err) {
      return reply(err instanceof ApiError ? err.status : 500, err instanceof ApiError ? err : new ApiError(String(err), 500));
    }
  }

  private async addOrReplace(input: Required<ProxyInput>): Promise<ChaosProxy> {
    const existing = this.proxies.get(input.name);
    if (existing) {
      if (!(await existing.differs(input.listen, input.upstream))) return existing;
      existing.stop();
    }
    const proxy = new ChaosProxy(input.name, input.listen, input.upstream, this.env);
    if (input.enabled) await proxy.start();
    this.proxies.set(proxy.name, proxy);
    return proxy;
  }

  private async reset(): Promise<Reply> {
    for (const proxy of this.proxies.values()) {
      await proxy.start();
      proxy.removeAllToxics();
    }
    return noContent;
  }
}

/** Decode a proxy body onto defaults like Go's json.Decoder into a struct (nulls and unknown keys ignored). */
function decodeProxy(body: unknown, defaults: Omit<Required<ProxyInput>, 'name'> = { listen: '', upstream: '', enabled: true }): Required<ProxyInput> {
  const out = { name: '', ...defaults };
  const obj = decodeObject(body, 'value of type main.Proxy') ?? {};
  for (const key of ['name', 'listen', 'upstream'] as const) out[key] = parseString(obj, key, out[key], 'Proxy');
  out.enabled = decodeField(obj, 'enabled', out.enabled, (v): v is boolean => typeof v === 'boolean', 'Proxy.enabled of type bool');
  return out;
}

/** Toxiproxy's required proxy fields, name first; `at` names the entry of a populate body. */
function requireFields(p: Required<ProxyInput>, at = ''): void {
  for (const key of ['name', 'upstream'] as const) if (!p[key]) throw apiErrors.missingField(`${key}${at}`);
}

async function readJson(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      // The rest of the body is never read, so the connection cannot carry another request:
      // answer with Connection: close (Node ends the socket after the 400) instead of stalling.
      res.shouldKeepAlive = false;
      res.setHeader('Connection', 'close');
      throw apiErrors.badBody('http: request body too large');
    }
    chunks.push(chunk);
  }
  try {
    return decodeFirstValue(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw apiErrors.badBody((err as Error).message);
  }
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
  res.end(text);
}

function send(res: ServerResponse, reply: Reply): void {
  if (reply.status === 204) {
    res.writeHead(204);
    res.end();
    return;
  }
  const text = reply.raw ?? goJson(reply.body);
  res.writeHead(reply.status, { 'Content-Type': reply.contentType ?? 'application/json' });
  res.end(text);
}

/** Go's `http.Error`: text/plain, nosniff, trailing newline, JSON `{"error","status"}`. */
function sendError(res: ServerResponse, err: ApiError): void {
  plain(res, err.status, `${goJson({ error: err.message, status: err.status })}\n`);
}

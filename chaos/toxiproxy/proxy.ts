import { lookup } from 'node:dns/promises';
import { once } from 'node:events';
import { isIP, createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { apiErrors } from './errors.ts';
import { isLoopbackAddress, loopbackOnlyLookup, NOT_LOOPBACK, PUBLIC_OPT_IN } from './loopback.ts';
import { Connection, type LinkEnv } from './link.ts';
import { toxicJson, type ToxicRecord } from './toxics.ts';
import type { Direction, ProxyJson } from './types.ts';

/**
 * One proxy (Toxiproxy `proxy.go`): a listener, its live connections and its two toxic chains.
 * Every accepted connection dials `upstream` right away; if that fails the client is closed
 * (no retry, no refusal: Toxiproxy issue #265).
 */
export class ChaosProxy {
  enabled = false;
  readonly toxics: Record<Direction, ToxicRecord[]> = { upstream: [], downstream: [] };
  private server: Server | undefined;
  private readonly connections = new Set<Connection>();
  /** Accepted clients whose upstream dial is still in flight. */
  private readonly dialing = new Set<Socket>();

  constructor(
    readonly name: string,
    public listen: string,
    public upstream: string,
    private readonly env: LinkEnv,
  ) {}

  /**
   * Ours: accepted clients closed because `upstream` is (or resolved to) a non-loopback address
   * while public use is off. Counted so a misdirected proxy shows up (`/metrics`, `/health`)
   * instead of looking like a flaky upstream.
   */
  refusedDials = 0;
  /** Accepted clients closed because the upstream dial failed (refused, unresolvable, ...). */
  failedDials = 0;

  get connectionCount(): number {
    return this.connections.size;
  }

  toJSON(): ProxyJson {
    return {
      name: this.name,
      listen: this.listen,
      upstream: this.upstream,
      enabled: this.enabled,
      Logger: {},
      toxics: [...this.toxics.upstream, ...this.toxics.downstream].map(toxicJson),
    };
  }

  /** Bind `listen`; on success `listen` becomes the bound address (`localhost:0` → `127.0.0.1:41234`). */
  async start(): Promise<void> {
    if (this.enabled) return;
    const { host: resolved, port, addr } = await resolveListen(this.listen);
    let host = resolved;
    if (!this.env.allowPublic) {
      // Loopback-only by default: a wildcard listen ("", ":N", "0.0.0.0:N") binds 127.0.0.1.
      if (host === undefined) host = '127.0.0.1';
      else if (!isLoopbackAddress(host)) throw apiErrors.notLoopback(`listen ${this.listen}`, PUBLIC_OPT_IN);
    }
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true, noDelay: true }, (client) => this.accept(client));
    server.listen({ host, port, exclusive: true });
    await once(server, 'listening').catch((err: NodeJS.ErrnoException) => Promise.reject(apiErrors.listen(bindError(addr, err))));
    server.on('error', () => {});
    this.server = server;
    this.enabled = true;
    const bound = server.address() as AddressInfo;
    this.listen = joinHostPort(bound.address, bound.port);
  }

  /** Close the listener (new connects are refused) and every live connection. Safe to repeat. */
  stop(): void {
    this.enabled = false;
    this.server?.close();
    this.server = undefined;
    for (const c of this.connections) c.close();
    this.connections.clear();
    for (const s of this.dialing) s.destroy();
    this.dialing.clear();
  }

  findToxic(name: string): ToxicRecord | undefined {
    return this.toxics.upstream.find((t) => t.name === name) ?? this.toxics.downstream.find((t) => t.name === name);
  }

  /** Append to the direction's chain and to every live link of that direction. */
  addToxic(toxic: ToxicRecord): void {
    this.toxics[toxic.direction].push(toxic);
    for (const c of this.connections) c.links[toxic.direction].addToxic(toxic);
  }

  updateToxic(toxic: ToxicRecord, change: Pick<ToxicRecord, 'attributes' | 'toxicity'>): void {
    Object.assign(toxic, change);
    for (const c of this.connections) c.links[toxic.direction].updateToxic(toxic);
  }

  removeToxic(toxic: ToxicRecord): void {
    const list = this.toxics[toxic.direction];
    list.splice(list.indexOf(toxic), 1);
    for (const c of [...this.connections]) c.links[toxic.direction].removeToxic(toxic.name);
  }

  removeAllToxics(): void {
    for (const t of [...this.toxics.upstream, ...this.toxics.downstream]) this.removeToxic(t);
  }

  /** Toxiproxy `Differs`: the new listen, resolved, against the current listen string; upstream as a string. */
  async differs(listen: string, upstream: string): Promise<boolean> {
    return (await resolveForCompare(listen)) !== this.listen || this.upstream !== upstream;
  }

  private accept(client: Socket): void {
    client.on('error', () => {});
    const target = splitHostPort(this.upstream);
    if (!target || target.port === '') return this.dialFailed(client, false);
    const host = target.host || 'localhost';
    // An IP literal never goes through the lookup below, so the loopback rule is checked here.
    if (!this.env.allowPublic && isIP(host) && !isLoopbackAddress(host)) return this.dialFailed(client, true);
    const server = createConnection({
      host,
      port: Number(target.port),
      allowHalfOpen: true,
      noDelay: true,
      ...(this.env.allowPublic ? {} : { lookup: loopbackOnlyLookup }),
    });
    this.dialing.add(client);
    client.once('close', () => {
      this.dialing.delete(client);
      if (server.connecting) server.destroy();
    });
    server.on('error', (err) => this.dialFailed(client, Boolean((err as unknown as Record<symbol, unknown>)[NOT_LOOPBACK])));
    server.once('connect', () => {
      this.dialing.delete(client);
      if (client.destroyed || !this.enabled) {
        server.destroy();
        client.destroy();
        return;
      }
      server.removeAllListeners('error');
      client.removeAllListeners('error');
      const conn = new Connection(client, server, this.toxics, this.env, (c) => this.connections.delete(c));
      this.connections.add(conn);
    });
  }

  /** Close an accepted client whose upstream dial was refused (not loopback) or failed, and count it. */
  private dialFailed(client: Socket, refused: boolean): void {
    if (refused) this.refusedDials++;
    else this.failedDials++;
    client.destroy();
  }
}

/** Go's `net.SplitHostPort`; undefined when malformed. */
function splitHostPort(addr: string): { host: string; port: string } | undefined {
  if (addr.startsWith('[')) {
    const end = addr.indexOf(']');
    if (end < 0 || addr[end + 1] !== ':') return undefined;
    return { host: addr.slice(1, end), port: addr.slice(end + 2) };
  }
  const i = addr.lastIndexOf(':');
  if (i < 0 || addr.indexOf(':') !== i) return undefined;
  return { host: addr.slice(0, i), port: addr.slice(i + 1) };
}

const isWildcard = (host: string) => host === '' || host === '0.0.0.0' || host === '::';

/** A `listen` string's host and port, Go's way: "" is ":0" (every interface, any free port); `prefix` starts the missing-port error. */
function splitListen(listen: string, prefix: string): { host: string; port: number } {
  const parts = splitHostPort(listen === '' ? ':0' : listen);
  if (!parts) throw apiErrors.listen(`${prefix}address ${listen}: missing port in address`);
  const port = /^\d{1,5}$/.test(parts.port) ? Number(parts.port) : NaN;
  if (!(port >= 0 && port <= 65535)) throw apiErrors.listen(`listen tcp: address ${listen}: invalid port`);
  return { host: parts.host, port };
}

async function resolveHost(host: string): Promise<string> {
  if (isIP(host)) return host;
  try {
    // Go prefers IPv4 when resolving a name for listen/dial on "tcp".
    const all = await lookup(host, { all: true });
    const pick = all.find((a) => a.family === 4) ?? all[0];
    if (!pick) throw new Error('no address');
    return pick.address;
  } catch {
    throw apiErrors.listen(`listen tcp: lookup ${host}: no such host`);
  }
}

/** Go's `net.JoinHostPort`: an IPv6 host (it has colons) goes in brackets. */
const joinHostPort = (host: string, port: number) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/** Where to bind for a Toxiproxy `listen` string, and the address as Go prints it in a bind error. */
async function resolveListen(listen: string): Promise<{ host: string | undefined; port: number; addr: string }> {
  const { host, port } = splitListen(listen, 'listen tcp: ');
  // Wildcards bind dual-stack like Go (`[::]:N`); Node falls back to IPv4 when IPv6 is off.
  if (isWildcard(host)) return { host: undefined, port, addr: `:${port}` };
  const address = await resolveHost(host);
  return { host: address, port, addr: joinHostPort(address, port) };
}

/** Go `net.ResolveTCPAddr("tcp", listen).String()`. */
async function resolveForCompare(listen: string): Promise<string> {
  const { host, port } = splitListen(listen, '');
  return host === '' ? `:${port}` : joinHostPort(await resolveHost(host), port);
}

const BIND_ERRORS: Record<string, string> = {
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied',
  EADDRNOTAVAIL: 'cannot assign requested address',
};

function bindError(addr: string, err: NodeJS.ErrnoException): string {
  const why = (err.code && BIND_ERRORS[err.code]) ?? err.message;
  return `listen tcp ${addr}: bind: ${why}`;
}

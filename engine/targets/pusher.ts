import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { connect as tcpConnect } from 'node:net';
import PusherServer from 'pusher';
import pusherJs from 'pusher-js';
import { ReboundError } from '../../lib/errors.ts';
import { SOKETI_NO_WORKERS, soketiAvailability } from '../../services/soketi/load.ts';
import { ClientBase, defineTarget, LeanClient, LeanStage, parseJson, type ClientOptions, type DisconnectReason, type FunctionPublish, type LeanProtocol, type PublishContext, type PublishMessage, type TargetClient, type TargetDeclaration } from './contract.ts';

/**
 * The Pusher protocol (Pusher Channels, soketi, Laravel Reverb, pylon) as a target: the official
 * `pusher-js` client unchanged, publishing through the official `pusher` server SDK (signed HTTP
 * API requests). Channels are named after streams; one event name carries the run's payloads.
 * Pusher is at-most-once: a reconnect resubscribes and restores nothing.
 */

/** pusher-js's CommonJS export is the class itself; its typings call it `default`. */
const Pusher = pusherJs as unknown as typeof pusherJs.default;
type Pusher = InstanceType<typeof Pusher>;

/** The event every published message is triggered as (the name is ours; any name would do). */
export const PUSHER_EVENT = 'rebound';
/** Pusher Channels' limit on an event's data (soketi's default is 100 KB; the stricter one holds everywhere). */
export const PUSHER_MAX_EVENT_BYTES = 10 * 1024;
/** The protocol and version the lean client announces: what pusher-js 8.6.0 sends. */
const LEAN_QUERY = 'protocol=7&client=js&version=8.6.0&flash=false';
/** Longest time connect() waits for the subscription: pusher-js gives up on a connection (state `unavailable`) after 10 s. */
const CONNECT_BOUND_MS = 12_000;

/** Pusher's channel-name rule (pusher-js and the HTTP API agree): these characters, 1..164 of them. */
const CHANNEL_NAME = /^[A-Za-z0-9_\-=@,.;]{1,164}$/;
/** App ids and keys go into URL paths: a conservative alphabet, bounded. */
const APP_TOKEN = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Throws RR_ERR_PUSHER_CHANNEL unless `stream` is a valid Pusher channel name. */
export function checkChannelName(stream: string): string {
  if (!CHANNEL_NAME.test(stream) || stream.startsWith('private-') || stream.startsWith('presence-')) {
    throw new ReboundError(
      'RR_ERR_PUSHER_CHANNEL',
      `stream ${JSON.stringify(stream.slice(0, 80))} is not a public Pusher channel name: 1 to 164 of A-Z a-z 0-9 _ - = @ , . ; and not private-/presence- (those need an auth endpoint)`,
      { details: { option: 'stream' } },
    );
  }
  return stream;
}

/**
 * The app's credentials and address. From the URL in Pusher's own form
 * (`http://<key>:<secret>@host:port/apps/<app_id>`: userinfo is redacted wherever Rebound stores or
 * shows a URL, lib/redact.ts), else from PUSHER_APP_ID / PUSHER_APP_KEY / PUSHER_APP_SECRET, else
 * soketi's default app (app-id, app-key, app-secret). The secret is never put into an error.
 */
export function pusherApp(url: string, env: Record<string, string | undefined> = process.env) {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ReboundError('RR_ERR_OPTION_INVALID', 'the pusher target needs --url http(s)://host:port (optionally http://<key>:<secret>@host:port/apps/<app_id>)', { details: { option: 'url' } });
  }
  if (!/^(https?|wss?):$/.test(u.protocol)) throw new ReboundError('RR_ERR_OPTION_INVALID', `the pusher target's url must be http(s):// or ws(s)://, got ${u.protocol}`, { details: { option: 'url' } });
  const fromPath = /^\/apps\/([^/]+)\/?$/.exec(u.pathname)?.[1];
  const dec = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  const appId = (fromPath && dec(fromPath)) || env.PUSHER_APP_ID || 'app-id';
  const key = dec(u.username) || env.PUSHER_APP_KEY || 'app-key';
  const secret = dec(u.password) || env.PUSHER_APP_SECRET || 'app-secret';
  if (!APP_TOKEN.test(appId)) throw new ReboundError('RR_ERR_OPTION_INVALID', 'the Pusher app id (PUSHER_APP_ID or /apps/<id> in --url) must be 1-128 of A-Z a-z 0-9 _ . : -', { details: { option: 'PUSHER_APP_ID' } });
  if (!APP_TOKEN.test(key)) throw new ReboundError('RR_ERR_OPTION_INVALID', 'the Pusher app key (PUSHER_APP_KEY or the user in --url) must be 1-128 of A-Z a-z 0-9 _ . : -', { details: { option: 'PUSHER_APP_KEY' } });
  if (secret.length > 256 || /[\s\0]/.test(secret)) throw new ReboundError('RR_ERR_OPTION_INVALID', 'the Pusher app secret (PUSHER_APP_SECRET or the password in --url) must be at most 256 characters without spaces', { details: { option: 'PUSHER_APP_SECRET' } });
  const tls = u.protocol === 'https:' || u.protocol === 'wss:';
  return { appId, key, secret, host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || (tls ? 443 : 80)), tls };
}

export type PusherApp = ReturnType<typeof pusherApp>;

const keyAdvice = (key: string) => `the server does not know app key "${key}": set PUSHER_APP_KEY (or the user part of --url http://<key>:<secret>@host:port/apps/<app_id>)`;
const notPusher = (where: string, why: string) => new ReboundError('RR_ERR_PUSHER_PROTOCOL', `${where} did not speak the Pusher protocol (${why}): --url must point at a Pusher-protocol server (soketi, Reverb, Pusher Channels)`);

/** Is anything listening at host:port? Tells "down" from "not Pusher" once pusher-js gave up. */
function listening(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tcpConnect({ host, port });
    const end = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.once('connect', () => end(true));
    s.once('error', () => end(false));
    s.setTimeout(2000, () => end(false));
  });
}

/** What pusher-js keeps of its live transport: a Dispatcher around faye-websocket's client, whose `_stream` is the TCP socket. Not in its public types. */
interface PusherTransport {
  bind(event: 'message', fn: (e: { data: unknown }) => void): void;
  socket?: { _stream?: { destroy(): void } };
}
const transportOf = (p: Pusher): PusherTransport | undefined => (p.connection as unknown as { connection?: { transport?: PusherTransport } }).connection?.transport;

/**
 * pusher-js behind TargetClient. `library`: pusher-js reconnects and resubscribes by itself (its
 * own backoff, which nothing outside it can replace: `--reconnect-strategy tuned` is refused).
 * `manual`: any lost connection is ended (`disconnect()`) so the library never comes back by itself;
 * the runner's `reconnect()` builds a fresh client after the offline floor.
 *
 * Arrivals are read off pusher-js's own transport as raw frames: pusher-js hands `data` to
 * listeners JSON-parsed when it parses, and the contract wants it byte for byte as published.
 */
class PusherClient extends ClientBase implements TargetClient {
  private pusher: Pusher | undefined;
  private readonly app: PusherApp;
  private dropping = false;
  private readonly bound = new WeakSet<object>();
  private lastClose: { code?: number; reason?: string } | undefined;

  constructor(opts: ClientOptions, private readonly mode: 'library' | 'manual') {
    super(opts);
    checkChannelName(opts.stream);
    this.app = pusherApp(opts.url);
  }

  connect(): Promise<void> {
    if (this.state === 'closed') return Promise.reject(new Error('client closed'));
    if (this.pusher && this.mode === 'library') return Promise.resolve(); // the library keeps it connected
    this.state = 'connecting';
    const { key, host, port, tls } = this.app;
    const p = new Pusher(key, { cluster: 'rebound', wsHost: host, wsPort: port, wssPort: port, forceTLS: tls, enabledTransports: ['ws'], disableStats: true });
    this.pusher = p;
    const channel = p.subscribe(this.opts.stream);
    const wsUrl = `${tls ? 'wss' : 'ws'}://${host}:${port}/app/${key}`;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(bound);
        if (this.pusher === p) this.pusher = undefined;
        this.state = 'offline';
        p.disconnect();
        reject(e);
      };
      const bound = setTimeout(() => fail(notPusher(wsUrl, `no pusher:connection_established and subscription within ${CONNECT_BOUND_MS} ms`)), CONNECT_BOUND_MS);
      channel.bind('pusher:subscription_succeeded', () => {
        if (this.pusher !== p || this.state === 'closed') return;
        this.state = 'open';
        this.dropping = false;
        this.events.emit('connected', { resumed: false, attempt: this.attempt++ });
        if (!settled) {
          settled = true;
          clearTimeout(bound);
          resolve();
        }
      });
      channel.bind('pusher:subscription_error', (e: unknown) => {
        const err = new Error(`subscription to channel "${this.opts.stream}" refused: ${JSON.stringify(e).slice(0, 200)}`);
        this.events.emit('error', err);
        fail(err);
      });
      // pusher-js reports a server's pusher:error as { type: 'WebSocketError', error: { type: 'PusherError', data } } and a close as { type: 'PusherError', data }.
      p.connection.bind('error', (e: { type?: string; error?: unknown; data?: { code?: number; message?: string } }) => {
        const inner = e?.error as { data?: { code?: number; message?: string } } | string | undefined;
        const data = e?.data ?? (typeof inner === 'object' ? inner?.data : undefined);
        if (data?.code === 4001) return fail(new ReboundError('RR_ERR_PUSHER_APP_KEY', `${keyAdvice(key)} (pusher:error 4001 from ${host}:${port}: ${String(data.message ?? '').slice(0, 120)})`, { details: { option: 'PUSHER_APP_KEY' } }));
        if (e?.type === 'HandshakeError') return fail(notPusher(wsUrl, 'its first frame was not pusher:connection_established'));
        if (typeof data?.code === 'number' && data.code >= 4000 && data.code < 4100 && !settled) return fail(new Error(`the Pusher server refused the connection (pusher:error ${data.code}: ${String(data.message ?? '').slice(0, 120)})`));
        // A close pusher-js reports (1006 for a cut, 4xxx for the server's own reasons) comes just before the state change.
        if (e?.type === 'PusherError' && typeof data?.code === 'number') this.lastClose = { code: data.code, ...(data.message ? { reason: String(data.message) } : {}) };
        if (this.pusher === p) this.events.emit('error', new Error(`pusher-js: ${JSON.stringify(e).slice(0, 200)}`));
      });
      p.connection.bind('state_change', ({ previous, current }: { previous: string; current: string }) => {
        if (this.pusher !== p) return;
        if (current === 'connected') this.hook(p);
        if (current === 'unavailable' && !settled) {
          void listening(host, port).then((up) => fail(up ? notPusher(wsUrl, 'no pusher:connection_established within 10 s') : new Error(`nothing listens at ${host}:${port} (connection refused or unreachable)`)));
          return;
        }
        if (previous === 'connected' && current !== 'connected' && !this.dropping) {
          // No error before it: a clean close (1000/1001), which pusher-js does not report as one.
          const code = this.lastClose?.code;
          const reason: DisconnectReason = code === 1006 ? 'transport_error' : 'server_closed';
          this.wentAway(reason, code === undefined ? current : `close ${code}${this.lastClose?.reason ? ` ${this.lastClose.reason.slice(0, 80)}` : ''}`);
          // Manual: the runner brings the client back, never the library.
          if (this.mode === 'manual') this.retire(p);
        }
      });
    });
  }

  /** Read arrivals and close codes off this connection's transport (once per transport). */
  private hook(p: Pusher): void {
    const t = transportOf(p);
    if (!t || this.bound.has(t)) return;
    this.bound.add(t);
    this.lastClose = undefined;
    t.bind('message', (e) => {
      const at = Date.now();
      if (this.pusher !== p || typeof e?.data !== 'string') return;
      const f = parseJson(e.data) as { event?: unknown; channel?: unknown; data?: unknown } | undefined;
      if (f?.event === PUSHER_EVENT && f.channel === this.opts.stream && typeof f.data === 'string') this.events.emit('message', { data: f.data, at });
    });
  }

  private retire(p: Pusher): void {
    if (this.pusher === p) this.pusher = undefined;
    p.disconnect();
  }

  drop(): boolean {
    const p = this.pusher;
    const stream = p && transportOf(p)?.socket?._stream;
    if (!p || this.state !== 'open' || typeof stream?.destroy !== 'function') return false;
    this.state = 'offline';
    this.dropping = true;
    this.events.emit('disconnected', { reason: 'dropped' });
    if (this.mode === 'manual') this.pusher = undefined;
    stream.destroy();
    if (this.mode === 'manual') p.disconnect();
    return true;
  }

  reconnect(): Promise<void> {
    if (this.mode === 'library') {
      this.pusher?.connect(); // an attempt now; a no-op while connected or connecting
      return Promise.resolve();
    }
    if (this.pusher) this.retire(this.pusher);
    return this.connect();
  }

  close(): void {
    this.state = 'closed';
    this.pusher?.disconnect();
    this.pusher = undefined;
  }
}

/**
 * The lean client's wire: Pusher's JSON over a bare socket. `/app/<key>?protocol=7...` →
 * `pusher:connection_established` (its `data` a JSON string with socket_id and activity_timeout)
 * → `pusher:subscribe {channel}` → `pusher_internal:subscription_succeeded`; `pusher:ping` is
 * answered with `pusher:pong`; a delivery is `{event, channel, data}` with `data` the published text.
 */
const PING = Buffer.from('{"event":"pusher:ping"');
export const leanPusher: LeanProtocol = {
  url(base) {
    const { key, host, port, tls } = pusherApp(base);
    return `${tls ? 'wss' : 'ws'}://${host.includes(':') ? `[${host}]` : host}:${port}/app/${encodeURIComponent(key)}?${LEAN_QUERY}`;
  },
  onMessage(p, stream, send) {
    if (p.length >= PING.length && p.subarray(0, PING.length).equals(PING)) {
      send('{"event":"pusher:pong","data":{}}');
      return undefined;
    }
    const f = parseJson(p.toString()) as { event?: unknown; channel?: unknown; data?: unknown } | undefined;
    if (typeof f?.event !== 'string') return { error: 'the server did not speak the Pusher protocol (a frame without an event)' };
    switch (f.event) {
      case 'pusher:connection_established':
        send(JSON.stringify({ event: 'pusher:subscribe', data: { channel: stream } }));
        return { stage: LeanStage.Welcomed };
      case 'pusher_internal:subscription_succeeded':
        return f.channel === stream ? { stage: LeanStage.Subscribed } : undefined;
      case 'pusher:ping':
        send('{"event":"pusher:pong","data":{}}');
        return undefined;
      case 'pusher:error': {
        const d = (typeof f.data === 'string' ? parseJson(f.data) : f.data) as { code?: unknown; message?: unknown } | undefined;
        const why = `pusher:error ${String(d?.code ?? '?')}: ${String(d?.message ?? '').slice(0, 120)}`;
        return { error: d?.code === 4001 ? `app key refused (${why}): set PUSHER_APP_KEY` : why, notice: why };
      }
      default:
        return f.event === PUSHER_EVENT && f.channel === stream && typeof f.data === 'string' ? { data: f.data } : undefined;
    }
  },
};

/** Network errors raised before a request reached the server: the message cannot have been stored. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

/** One SDK instance (and keep-alive pool) per app and address; bounded, the runs use one or two. */
const SDKS = new Map<string, PusherServer>();
function sdkFor(app: PusherApp): PusherServer {
  const id = JSON.stringify(app);
  let s = SDKS.get(id);
  if (!s) {
    if (SDKS.size >= 16) SDKS.delete(SDKS.keys().next().value!);
    const agent = app.tls ? new HttpsAgent({ keepAlive: true, maxSockets: 64 }) : new HttpAgent({ keepAlive: true, maxSockets: 64 });
    s = new PusherServer({ appId: app.appId, key: app.key, secret: app.secret, host: app.host, port: String(app.port), useTLS: app.tls, agent });
    SDKS.set(id, s);
  }
  return s;
}

/** A refusal the server put in its answer: an HTTP status ≥ 400, or soketi's 200 whose JSON body carries `{error, code}`. */
function refusal(app: PusherApp, status: number, body: string): Error {
  const b = parseJson(body) as { error?: unknown; code?: unknown } | undefined;
  const code = typeof b?.code === 'number' ? b.code : status;
  const said = (typeof b?.error === 'string' ? b.error : body).slice(0, 160);
  if (code === 401 || code === 403) return new ReboundError('RR_ERR_PUSHER_SECRET', `the Pusher HTTP API refused the signed request (${code}: ${said}): check PUSHER_APP_SECRET (or the password in --url) and PUSHER_APP_KEY`, { details: { option: 'PUSHER_APP_SECRET' } });
  if (code === 404) return new ReboundError('RR_ERR_PUSHER_APP_ID', `the Pusher HTTP API does not know app id "${app.appId}" (404: ${said}): set PUSHER_APP_ID (or /apps/<app_id> in --url)`, { details: { option: 'PUSHER_APP_ID' } });
  if (code === 413) return new ReboundError('RR_ERR_PUSHER_EVENT_TOO_LARGE', `the Pusher server refused the event's size (413: ${said})`);
  return Object.assign(new Error(`the Pusher HTTP API refused the event (${code}: ${said})`), { code: `HTTP ${code}` });
}

/** Pusher's batch_events takes at most 10 events (Pusher Channels and soketi's default app). */
export const PUSHER_MAX_BATCH = 10;

/** One signed SDK call for `ms`: `trigger` for one, `triggerBatch` for several; see pusherPublish. */
async function triggerAll(ms: readonly PublishMessage[], ctx: PublishContext): Promise<void> {
  const app = pusherApp(ctx.url);
  for (const m of ms) {
    if (Buffer.byteLength(m.data) > PUSHER_MAX_EVENT_BYTES) {
      throw new ReboundError('RR_ERR_PUSHER_EVENT_TOO_LARGE', `message ${m.seq} is ${Buffer.byteLength(m.data)} bytes; Pusher takes events of at most ${PUSHER_MAX_EVENT_BYTES} bytes: use a smaller payload`);
    }
    checkChannelName(m.stream);
  }
  let res: { status: number; text(): Promise<string> };
  try {
    const sdk = sdkFor(app);
    res = ms.length === 1 ? await sdk.trigger(ms[0]!.stream, PUSHER_EVENT, ms[0]!.data) : await sdk.triggerBatch(ms.map((m) => ({ channel: m.stream, name: PUSHER_EVENT, data: m.data })));
  } catch (err) {
    const e = err as { status?: number; body?: string; error?: { code?: string; message?: string } };
    if (typeof e.status === 'number') throw refusal(app, e.status, e.body ?? '');
    const code = e.error?.code ?? 'PUSHER_REQUEST_FAILED';
    // node-fetch names the signed URL in its message: its query (auth_signature) is cut.
    throw Object.assign(new Error(`the Pusher HTTP API request failed: ${String(e.error?.message ?? err).replace(/\?\S*/g, '').slice(0, 160)}`), { code, mayBeStored: !NOT_SENT.has(code) });
  }
  const body = await res.text();
  const b = parseJson(body) as { error?: unknown; code?: unknown } | undefined;
  if (b && typeof b.error === 'string') throw refusal(app, res.status, body);
}

/**
 * Publishing through the official server SDK: one signed `trigger` per message, or `triggerBatch`
 * (batch_events, up to 10) when capacity's batch publisher sends several. Accepted: the server
 * answered 2xx without an error. A refusal names what to fix (secret, app id, size); a network
 * error once the request may have reached the server carries `mayBeStored` (the outcome is unknown).
 */
export const pusherPublish: FunctionPublish = {
  send: (m, ctx) => triggerAll([m], ctx),
  sendBatch: (ms, ctx) => triggerAll(ms, ctx),
  maxBatch: PUSHER_MAX_BATCH,
};

/** Why the library-driven targets take no tuned backoff (TargetBase.ownBackoff). */
const PUSHER_OWN_BACKOFF = 'pusher-js reconnects on its own backoff, which cannot be replaced (pusher-manual takes the runner\'s tuned backoff)';

/** What the two targets share; only who reconnects differs. */
const pusherWire = (reconnect: 'library' | 'manual') =>
  ({
    capabilities: { reconnect, resume: 'none', offsets: false, epochs: false, whispers: false, library: 'pusher-js' },
    createClient: (o: ClientOptions) => new PusherClient(o, reconnect),
    createLeanClient: (o: ClientOptions) => new LeanClient(o, leanPusher),
    publish: pusherPublish,
    // pusher-js's own reconnect brings its own backoff; the manual mode's is the runner's.
    ...(reconnect === 'library' ? { ownBackoff: PUSHER_OWN_BACKOFF } : {}),
  }) satisfies Partial<TargetDeclaration>;

/** Any Pusher-protocol server at `--url`, driven by pusher-js with its own reconnect. */
export const pusherTarget = defineTarget({
  ...pusherWire('library'),
  name: 'pusher',
  description: 'a Pusher-protocol server (soketi, Reverb, Pusher Channels) at the given URL, driven by the unmodified pusher-js; library reconnect, at-most-once',
  offlineFloorMs: 0,
});

/** The same client with the runner reconnecting it (after the 2 s offline floor, like socketio). */
export const pusherManualTarget = defineTarget({
  ...pusherWire('manual'),
  name: 'pusher-manual',
  description: 'a Pusher-protocol server at the given URL, driven by pusher-js; the runner reconnects after a 2 s offline floor, at-most-once',
  offlineFloorMs: 2000,
});

/**
 * soketi (services/soketi, installed on demand) started locally, driven like `pusher`: the method's
 * (seeds/000) own subject. Its default app (app-id / app-key / app-secret, or SOKETI_DEFAULT_APP_*
 * for the server and PUSHER_APP_* for the client) is what the client and publisher sign with.
 */
export const soketiTarget = defineTarget({
  ...pusherWire('library'),
  name: 'soketi',
  description: 'soketi 1.6.1 started locally (npm run install:soketi), driven by the unmodified pusher-js; library reconnect, at-most-once',
  offlineFloorMs: 0,
  service: { name: 'soketi', args: [] },
  unavailable: () => soketiAvailability().reason,
  noWorkers: SOKETI_NO_WORKERS,
});

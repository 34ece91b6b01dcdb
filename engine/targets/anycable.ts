import { createCable, type Cable, type Channel } from '@anycable/core';
import WebSocket from 'ws';
import { Emitter } from '../../lib/emitter.ts';
import { broadcastPublish, defineTarget, LeanClient, LeanStage, ParsedArrival, parseJson, type ClientCapabilities, type ClientEvents, type ClientOptions, type DisconnectReason, type LeanProtocol, type TargetClient } from './contract.ts';
import { checkStrategyName, fullJitter, tunedSpec, type ReconnectStrategyFn } from './reconnect.ts';
import { seededBackoffWithJitter } from './seeded-jitter.ts';

/**
 * `@anycable/core` (unmodified, Node + `ws`) as a Rebound target client: the extended protocol,
 * the library's own reconnect (Monitor) and its own resume (session restore, history by offset).
 * Works against Rebound's replay server (`replay`) and a real anycable-go (`anycable`).
 */

/**
 * The tuned strategy for `@anycable/core`: full jitter under min(5 s, baseMs × 2^attempt) (baseMs
 * 500 unless the benchmark's reconnectBaseMs says otherwise), from the one definition in
 * reconnect.ts. `rng` is injectable for tests.
 */
export function tunedReconnect(rng: () => number = Math.random, baseMs?: number): ReconnectStrategyFn {
  return fullJitter(tunedSpec(baseMs), rng);
}

/** @anycable/core's default ping interval (createCable's `pingInterval`), which its default backoff starts from. */
const ANYCABLE_PING_INTERVAL_MS = 3000;

/**
 * `undefined` → the library default (`backoffWithJitter(pingInterval)`, Math.random). With `rng`,
 * the same strategies draw from it: tuned's full jitter (from `baseMs`, the benchmark's
 * reconnectBaseMs), or the library's default formula (seeded-jitter.ts) from `pingIntervalMs`.
 */
export function reconnectStrategyFor(
  name: string | undefined,
  rng?: () => number,
  pingIntervalMs = ANYCABLE_PING_INTERVAL_MS,
  baseMs?: number,
): ReconnectStrategyFn | undefined {
  if (checkStrategyName(name) === 'tuned') return tunedReconnect(rng, baseMs);
  return rng ? seededBackoffWithJitter(pingIntervalMs, rng) : undefined;
}

/** ws URL for a target base URL: ws(s):// is used as is, http(s)://host:port becomes ws://host:port/cable. */
export function cableUrl(base: string): string {
  if (/^wss?:\/\//.test(base)) return base;
  const u = new URL(base);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  if (u.pathname === '' || u.pathname === '/') u.pathname = '/cable';
  return u.toString();
}

/** Transient transport errors vs. the server telling us to go (disconnect frame reasons). */
const TRANSPORT_REASONS = new Set(['transport_closed', 'stale_connection', 'recovery_failed']);

export interface AnyCableClientOptions extends ClientOptions {
  /** Extra `createCable` options (tests: pingInterval, logLevel...). */
  cableOptions?: Record<string, unknown>;
}

export function createAnyCableClient(opts: AnyCableClientOptions): TargetClient {
  const events = new Emitter<ClientEvents>();
  const emit = events.emit.bind(events);
  const ping = opts.cableOptions?.pingInterval;
  const strategy = reconnectStrategyFor(opts.reconnectStrategy, opts.reconnectRng, typeof ping === 'number' ? ping : undefined, opts.reconnectBaseMs);
  let cable: Cable | undefined;
  let channel: Channel | undefined;
  let dropping = false;
  let connects = 0;
  /** Rejections come from the wire (with their reason), not from the library's info event. */
  let wireReasons = false;

  const reasonOf = (err: unknown) => (err as { reason?: string } | undefined)?.reason;
  /** The library's disconnect or close, with its reason as the detail when it gave one. */
  const gone = (reason: DisconnectReason, r: string | undefined) => emit('disconnected', { reason, ...(r ? { detail: r } : {}) });

  const build = (): Cable => {
    const c = createCable(cableUrl(opts.url), {
      protocol: 'actioncable-v1-ext-json',
      websocketImplementation: WebSocket,
      ...(opts.localAddress ? { websocketOptions: { localAddress: opts.localAddress } } : {}),
      ...(strategy ? { reconnectStrategy: strategy } : {}),
      logLevel: 'error',
      ...(opts.cableOptions ?? {}),
    });
    // `connected` is the channel's (subscription confirmed or restored with the session), not the
    // cable's: after a missed restore the cable is open well before the channel is subscribed again.
    c.on('connect', () => {
      dropping = false;
    });
    c.on('disconnect', (err) => {
      const r = reasonOf(err);
      gone(dropping ? 'dropped' : r && TRANSPORT_REASONS.has(r) ? 'transport_error' : 'server_closed', r);
    });
    // The library reports a rejected history without its reason; the reason (`epoch_changed`: the
    // broker came back empty) decides how the runner books the loss, so read it off the wire.
    const transport = c.transport as { on?: (ev: 'data', fn: (raw: unknown) => void) => unknown } | undefined;
    if (typeof transport?.on === 'function') {
      wireReasons = true;
      transport.on('data', (raw) => {
        if (typeof raw !== 'string' || !raw.includes('"reject_history"')) return;
        const f = parseJson(raw) as { type?: string; reason?: unknown } | undefined;
        if (!f) emit('history', { ok: false });
        else if (f.type === 'reject_history') emit('history', typeof f.reason === 'string' ? { ok: false, reason: f.reason } : { ok: false });
      });
    }
    c.on('close', (err) => gone('closed', reasonOf(err)));
    return c;
  };

  return {
    index: opts.index,
    async connect() {
      cable ??= build();
      if (!channel) {
        channel = cable.streamFrom(opts.stream);
        channel.on('message', (msg, meta) => {
          const m = meta as { offset?: number; epoch?: string } | undefined;
          const pos = m?.offset === undefined ? {} : { offset: m.offset, ...(m.epoch ? { epoch: m.epoch } : {}) };
          // The library parsed the JSON frame: hand the value over and serialize `data` only if
          // someone reads it (the run's decoder reads `value`; a second stringify+parse per
          // delivery was the adapter's largest cost at high fan-out).
          if (typeof msg === 'string') emit('message', { data: msg, at: Date.now(), ...pos });
          else emit('message', Object.assign(new ParsedArrival(msg, Date.now()), pos));
        });
        channel.on('connect', (ev) => emit('connected', { resumed: ev.restored === true, attempt: connects++ }));
        channel.on('info', (ev) => {
          if (ev.type === 'history_received') emit('history', { ok: true });
          else if (ev.type === 'history_not_found' && !wireReasons) emit('history', { ok: false });
        });
      }
      await channel.ensureSubscribed();
    },
    drop() {
      const ws = (cable?.transport as { ws?: WebSocket } | undefined)?.ws;
      if (!ws || ws.readyState === WebSocket.CLOSED || ws.readyState === WebSocket.CLOSING) return false;
      dropping = true;
      ws.terminate();
      return true;
    },
    async reconnect() {
      // The library reconnects by itself; this only forces an immediate attempt.
      if (cable) await cable.connect();
    },
    close() {
      cable?.disconnect();
    },
    whisper(data) {
      // `$pubsub` streams relay whispers to the stream's other subscribers (never the sender).
      void channel?.whisper(data);
    },
    on: (event, fn) => events.on(event, fn),
  };
}

const PING = Buffer.from('{"type":"ping"');
const IDENT = Buffer.from('{"identifier"');
const startsWith = (b: Buffer, prefix: Buffer) => b.length >= prefix.length && b.subarray(0, prefix.length).equals(prefix);

/**
 * The lean client's wire: AnyCable's extended protocol, subscribing to the public `$pubsub`
 * stream after `welcome` like the benchmark's raw idle probe. Pings are recognised by their first
 * bytes and never parsed.
 */
export const leanAnyCable: LeanProtocol = {
  url: (base) => cableUrl(base),
  subprotocol: 'actioncable-v1-ext-json',
  onMessage(p, stream, send) {
    if (startsWith(p, PING)) return undefined;
    const f = parseJson(p.toString()) as { type?: string; identifier?: string; message?: unknown; reason?: string } | undefined;
    if (!f) return undefined;
    if (startsWith(p, IDENT) && f.message !== undefined && f.type === undefined) {
      return typeof f.message === 'string' ? { data: f.message } : { value: f.message };
    }
    switch (f.type) {
      case 'welcome':
        send(JSON.stringify({ command: 'subscribe', identifier: JSON.stringify({ channel: '$pubsub', stream_name: stream }) }));
        return { stage: LeanStage.Welcomed };
      case 'confirm_subscription':
        return { stage: LeanStage.Subscribed };
      case 'reject_subscription':
        return { error: 'subscription rejected' };
      case 'disconnect':
        return { error: `disconnected by the server (${f.reason ?? '?'})`, notice: `disconnect ${f.reason ?? '?'}` };
      default:
        return undefined;
    }
  },
};

/**
 * What replay and anycable share: @anycable/core (its own reconnect, session restore and history
 * by offset, frames carry offset and epoch, whispers on `$pubsub`) and the lean AnyCable wire.
 */
const ANYCABLE_WIRE = {
  offlineFloorMs: 0,
  capabilities: { reconnect: 'library', resume: 'history', offsets: true, epochs: true, whispers: true, library: '@anycable/core' } satisfies ClientCapabilities,
  createClient: (o: ClientOptions) => createAnyCableClient(o),
  createLeanClient: (o: ClientOptions) => new LeanClient(o, leanAnyCable),
  publish: broadcastPublish,
};

/** Rebound's replay server (services/replay-server), started locally by the runner. */
export const replayTarget = defineTarget({
  ...ANYCABLE_WIRE,
  name: 'replay',
  description: "Rebound's replay server (AnyCable ext protocol, memory broker) driven by the unmodified @anycable/core client",
  service: { name: 'replay', args: [] },
});

/** An external anycable-go (`--url ws://host:8080/cable` or http://host:8080), same client. */
export const anycableTarget = defineTarget({ ...ANYCABLE_WIRE, name: 'anycable', description: 'an external anycable-go (--broker=memory --public) at the given URL, driven by @anycable/core' });

import WebSocket from 'ws';
import { uwsAvailability } from '../../services/uws/load.ts';
import { broadcastPublish, ClientBase, defineTarget, LeanClient, LeanStage, parseJson, type ClientCapabilities, type ClientOptions, type LeanProtocol, type TargetClient } from './contract.ts';

/**
 * Raw-topics client for services/ws and services/uws (one wire): manual reconnect (the runner
 * decides when), no replay. Whispers: `{"type":"whisper","stream","data":"<string>"}` out; the
 * others receive `{"type":"whisper","stream","data"}`, which carries `data` like a broadcast.
 */
class WsClient extends ClientBase implements TargetClient {
  private ws: WebSocket | undefined;
  private readonly url = this.opts.url.replace(/^http/, 'ws') + '/ws';

  connect(): Promise<void> {
    if (this.state === 'closed') return Promise.reject(new Error('client closed'));
    this.state = 'connecting';
    this.ws?.terminate(); // a handshake still pending from an earlier attempt
    const ws = new WebSocket(this.url, { perMessageDeflate: false, handshakeTimeout: 10_000, ...(this.opts.localAddress ? { localAddress: this.opts.localAddress } : {}) });
    this.ws = ws;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        if (this.ws === ws) this.state = 'offline';
        reject(err);
      };
      ws.on('open', () => ws.send(JSON.stringify({ type: 'subscribe', stream: this.opts.stream })));
      ws.on('message', (raw) => {
        const at = Date.now();
        const msg = parseJson(raw.toString()) as { type?: string; stream?: string; data?: string } | undefined;
        if (!msg) return;
        if (msg.type === 'subscribed' && !settled) {
          settled = true;
          this.state = 'open';
          this.events.emit('connected', { resumed: false, attempt: this.attempt++ });
          resolve();
        } else if (typeof msg.data === 'string') {
          this.events.emit('message', { data: msg.data, at });
        }
      });
      ws.on('error', (err) => {
        fail(err);
        if (this.ws === ws) this.events.emit('error', err);
      });
      ws.on('close', (code, reason) => {
        fail(new Error(`closed before subscribe (${code})`));
        if (this.ws === ws) this.wentAway('server_closed', `${code} ${reason.toString()}`);
      });
    });
  }

  drop(): boolean {
    const ws = this.ws;
    if (!ws || this.state !== 'open') return false;
    this.state = 'offline';
    this.ws = undefined;
    ws.terminate();
    this.events.emit('disconnected', { reason: 'dropped' });
    return true;
  }

  reconnect(): Promise<void> {
    return this.connect();
  }

  close(): void {
    this.state = 'closed';
    this.ws?.terminate();
    this.ws = undefined;
  }

  whisper(data: Record<string, unknown>): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'whisper', stream: this.opts.stream, data: JSON.stringify(data) }));
  }
}

/** The lean client's wire: `{"type":"welcome","sid"}` on connect, `{"type":"subscribe","stream":s}` → `{"type":"subscribed"}`; data frames carry `data`. */
const leanWs: LeanProtocol = {
  url: (base) => `${base.replace(/^http/, 'ws').replace(/\/+$/, '')}/ws`,
  onOpen: (stream) => [JSON.stringify({ type: 'subscribe', stream })],
  onMessage(p) {
    const f = parseJson(p.toString()) as { type?: string; data?: unknown; reason?: string } | undefined;
    if (!f) return undefined;
    if (f.type === 'welcome') return { stage: LeanStage.Welcomed };
    if (f.type === 'subscribed') return { stage: LeanStage.Subscribed };
    if (f.type === 'error') return { error: `server error ${f.reason ?? ''}` };
    return typeof f.data === 'string' ? { data: f.data } : undefined;
  },
};

/** What ws and uws share (one wire, one full and one lean client). At-most-once: the runner reconnects, a reconnect restores nothing. */
const WS_WIRE = {
  offlineFloorMs: 0,
  capabilities: { reconnect: 'manual', resume: 'none', offsets: false, epochs: false, whispers: true, library: 'ws' } satisfies ClientCapabilities,
  createClient: (opts: ClientOptions) => new WsClient(opts),
  createLeanClient: (opts: ClientOptions) => new LeanClient(opts, leanWs),
  publish: broadcastPublish,
};

export const wsTarget = defineTarget({ ...WS_WIRE, name: 'ws', description: 'raw ws server with topics, at-most-once (the uWS protocol on the ws library)', service: { name: 'ws', args: [] } });

/**
 * uWebSockets.js (services/uws): the benchmark's uWS row, on the ws server's wire, so the same
 * client drives it unchanged. Where uWS's binary does not load it is "not installed here".
 */
export const uwsTarget = defineTarget({
  ...WS_WIRE,
  name: 'uws',
  description: 'uWebSockets.js server with topics, at-most-once (the benchmark\'s uWS row)',
  service: { name: 'uws', args: [] },
  unavailable: () => uwsAvailability().reason,
});

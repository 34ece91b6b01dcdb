import WebSocket from 'ws';
import { ClientBase, defineTarget, LeanClient, LeanStage, parseJson, type ClientOptions, type LeanProtocol, type TargetClient } from '../../target.ts';

/**
 * Worked example 1 (docs/targets.md): a team's own JSON-over-WebSocket server. Its wire:
 * `ws://host/live`, the client sends {"op":"join","room"} and gets {"op":"joined","room"}; each
 * message arrives as {"op":"msg","room","body"}. It publishes with POST /api/rooms/<room>/messages
 * {"body"} (202). No resume: the runner reconnects and a reconnect restores nothing.
 */
const wsUrl = (base: string) => `${base.replace(/^http/, 'ws').replace(/\/+$/, '')}/live`;
type Frame = { op?: string; body?: unknown };

class JsonWsClient extends ClientBase implements TargetClient {
  private ws: WebSocket | undefined;

  connect(): Promise<void> {
    this.ws?.terminate();
    const ws = new WebSocket(wsUrl(this.opts.url), { handshakeTimeout: 10_000, ...(this.opts.localAddress ? { localAddress: this.opts.localAddress } : {}) });
    this.ws = ws;
    this.state = 'connecting';
    return new Promise((resolve, reject) => {
      ws.on('open', () => ws.send(JSON.stringify({ op: 'join', room: this.opts.stream })));
      ws.on('message', (raw) => {
        const at = Date.now();
        const f = parseJson(raw.toString()) as Frame | undefined;
        if (f?.op === 'joined' && this.state === 'connecting') {
          this.state = 'open';
          this.events.emit('connected', { resumed: false, attempt: this.attempt++ });
          resolve();
        } else if (f?.op === 'msg' && typeof f.body === 'string') this.events.emit('message', { data: f.body, at });
      });
      ws.on('error', (err) => reject(err));
      ws.on('close', (code) => {
        reject(new Error(`closed before joined (${code})`));
        if (this.ws === ws) this.wentAway('server_closed', String(code));
      });
    });
  }

  drop(): boolean {
    if (!this.ws || this.state !== 'open') return false;
    this.state = 'offline';
    this.ws.terminate(); // no close handshake: what a network cut looks like to the server
    this.ws = undefined;
    this.events.emit('disconnected', { reason: 'dropped' });
    return true;
  }

  reconnect(): Promise<void> {
    return this.connect();
  }

  close(): void {
    this.state = 'closed';
    this.ws?.terminate();
  }
}

/** The same wire for tens of thousands of sockets per process (idle, capacity S1). */
const lean: LeanProtocol = {
  url: wsUrl,
  onOpen: (room) => [JSON.stringify({ op: 'join', room })],
  onMessage(payload) {
    const f = parseJson(payload.toString()) as Frame | undefined;
    if (f?.op === 'joined') return { stage: LeanStage.Subscribed };
    return f?.op === 'msg' && typeof f.body === 'string' ? { data: f.body } : undefined;
  },
};

export default defineTarget({
  name: 'json-ws',
  description: 'a JSON-over-ws server of our own: join a room, POST to publish',
  offlineFloorMs: 0,
  capabilities: { reconnect: 'manual', resume: 'none', offsets: false, epochs: false, whispers: false, library: 'ws' },
  createClient: (opts: ClientOptions) => new JsonWsClient(opts),
  createLeanClient: (opts: ClientOptions) => new LeanClient(opts, lean),
  publish: { request: (m, ctx) => ({ url: `${ctx.url.replace(/\/+$/, '')}/api/rooms/${encodeURIComponent(m.stream)}/messages`, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ body: m.data }) }) },
});

import { request } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { EventSource, type FetchLike, type FetchLikeResponse } from 'eventsource';
import { ClientBase, defineTarget, type ClientOptions, type TargetClient } from '../../target.ts';

/**
 * Worked example 2 (docs/targets.md): Server-Sent Events with `Last-Event-ID`, through the
 * `eventsource` package, which reconnects by itself. The server's wire: GET <url>/sse/<stream>
 * (text/event-stream); each message is an event whose id is its offset in the stream. A connection
 * ends its opening with `event: ready` whose id is the stream's latest offset, so a client holds a
 * position before its first message. On a reconnect the library sends that position as
 * Last-Event-ID: the server replays what its history still holds after it, first saying
 * `event: reset` (data `evicted`: the id is older than its history; else an id it never gave) when
 * it cannot fill the gap. It publishes with POST <url>/sse/<stream> (the data as the body, 202).
 */
const streamUrl = (base: string, stream: string) => `${base.replace(/\/+$/, '')}/sse/${encodeURIComponent(stream)}`;

class SseClient extends ClientBase implements TargetClient {
  private es: EventSource | undefined;
  private socket: Socket | undefined;
  private lastId: string | undefined;
  private resuming = false;
  private reset: string | undefined;

  /**
   * The library's requests go through node:http with no pool, so each client owns one socket that
   * drop() can destroy (an AbortSignal would not do: the library takes an abort for its own close()
   * and never reconnects), bound to `localAddress`.
   */
  private readonly fetch: FetchLike = (url, init) =>
    new Promise<FetchLikeResponse>((resolve, reject) => {
      // A fresh EventSource (reconnect()) keeps the position the last one had.
      const headers = { ...init.headers, ...(this.lastId !== undefined && !init.headers['Last-Event-ID'] ? { 'Last-Event-ID': this.lastId } : {}) };
      this.resuming = headers['Last-Event-ID'] !== undefined;
      this.reset = undefined;
      const local = this.opts.localAddress ? { localAddress: this.opts.localAddress } : {};
      const req = request(url, { headers, agent: false, ...local }, (res) => {
        const get = (name: string) => (typeof res.headers[name.toLowerCase()] === 'string' ? (res.headers[name.toLowerCase()] as string) : null);
        resolve({ status: res.statusCode ?? 0, url: String(url), redirected: false, headers: { get }, body: Readable.toWeb(res) as ReadableStream<Uint8Array> });
      });
      req.on('socket', (s) => (this.socket = s));
      req.on('error', reject);
      (init.signal as AbortSignal | undefined)?.addEventListener('abort', () => req.destroy());
      req.end();
    });

  connect(): Promise<void> {
    this.es?.close();
    const es = new EventSource(streamUrl(this.opts.url, this.opts.stream), { fetch: this.fetch });
    this.es = es;
    this.state = 'connecting';
    return new Promise((resolve, reject) => {
      es.onmessage = (e) => {
        this.lastId = e.lastEventId;
        this.events.emit('message', { data: String(e.data), at: Date.now(), ...(/^\d{1,15}$/.test(e.lastEventId) ? { offset: Number(e.lastEventId) } : {}) });
      };
      es.addEventListener('reset', (e) => (this.reset = e.data === 'evicted' ? 'offset_evicted' : 'unknown_offset'));
      es.addEventListener('ready', (e) => {
        this.lastId = e.lastEventId;
        // The answer to Last-Event-ID: the history filled the gap, or the server said it could not.
        if (this.resuming) this.events.emit('history', this.reset ? { ok: false, reason: this.reset } : { ok: true });
        this.state = 'open';
        this.events.emit('connected', { resumed: false, attempt: this.attempt++ });
        resolve();
      });
      es.onerror = (e) => {
        if (this.es !== es) return;
        if (this.state === 'connecting' && this.attempt === 0) return void (es.close(), reject(new Error(`first connect failed: ${e.message ?? e.code ?? '?'}`)));
        // A stream that ended is the server's doing; a failed read or request is the transport's.
        this.wentAway(e.message ? 'transport_error' : 'server_closed', e.message ?? 'stream ended');
      };
    });
  }

  drop(): boolean {
    if (!this.socket || this.state !== 'open') return false;
    this.state = 'offline';
    this.socket.destroy(); // no goodbye: the library's read fails and it reconnects with Last-Event-ID
    this.events.emit('disconnected', { reason: 'dropped' });
    return true;
  }

  reconnect(): Promise<void> {
    return this.state === 'open' ? Promise.resolve() : this.connect();
  }

  close(): void {
    this.state = 'closed';
    this.es?.close();
    this.socket?.destroy();
  }
}

export default defineTarget({
  name: 'sse',
  description: 'Server-Sent Events with Last-Event-ID (eventsource): ids are offsets, a reconnect is filled from the server history',
  offlineFloorMs: 0,
  capabilities: { reconnect: 'library', resume: 'history', offsets: true, epochs: false, whispers: false, library: 'eventsource' },
  createClient: (opts: ClientOptions) => new SseClient(opts),
  leanUnsupported: 'SSE is a long HTTP response, not a WebSocket: the lean client speaks only WebSocket wires',
  publish: { request: (m, ctx) => ({ url: streamUrl(ctx.url, m.stream), headers: { 'content-type': 'text/plain' }, body: m.data }), acceptStatus: [202] },
});

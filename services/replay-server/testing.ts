import WebSocket from 'ws';
import { createReplayServer, type ReplayServer, type ReplayServerDeps, type ReplayServerOptions } from './index.ts';
import { MemoryBroker } from './broker/memory.ts';
import type { PublishItem } from './broker/types.ts';
import { SUBPROTOCOL_EXT } from './protocol/types.ts';

/** A real redis-server per suite (--broker redis tests). */
export { startTestRedis, type TestRedis } from '../common/redis-testing.ts';

/** Test helpers shared by the replay-server suites: a real server on port 0 and a raw frame-level client. */

export type Frame = Record<string, unknown>;

export interface TestServer {
  srv: ReplayServer;
  wsUrl: string;
  httpUrl: string;
  broadcast(body: unknown, key?: string): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The transport the suites run on: REPLAY_TRANSPORT (vitest.config.ts runs the replay-server
 * suites once per transport), else the option's default. Spawned servers read the same variable.
 */
export const testTransport = (): ReplayServerOptions['transport'] | undefined => {
  const t = process.env.REPLAY_TRANSPORT;
  return t === 'ws' || t === 'uws' || t === 'auto' ? t : undefined;
};

export async function startTestServer(opts: Partial<ReplayServerOptions> = {}, deps: ReplayServerDeps = {}): Promise<TestServer> {
  const srv = createReplayServer({ port: 0, transport: testTransport(), ...opts }, deps);
  const port = await srv.listen(0, '127.0.0.1');
  const httpUrl = `http://127.0.0.1:${port}`;
  return {
    srv,
    wsUrl: `ws://127.0.0.1:${port}/cable`,
    httpUrl,
    broadcast: (body, key) =>
      fetch(`${httpUrl}/_broadcast`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    close: () => srv.stop(),
  };
}

export const pubsubId = (stream: string): string => JSON.stringify({ channel: '$pubsub', stream_name: stream });

/**
 * A raw WebSocket client that buffers every received frame (parsed JSON) so tests can wait for
 * frames that may already have arrived. `take()` consumes frames in order.
 */
export class RawClient {
  readonly frames: Frame[] = [];
  readonly raw: string[] = [];
  private cursor = 0;
  private waiters: Array<() => void> = [];
  closed: { code: number; reason: string } | undefined;
  readonly opened: Promise<void>;

  constructor(
    url: string,
    protocol: string | string[] | undefined = SUBPROTOCOL_EXT,
    opts: WebSocket.ClientOptions = {},
    readonly ws = new WebSocket(url, protocol, opts),
  ) {
    this.opened = new Promise((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.on('error', () => {});
    ws.on('message', (d) => {
      const text = d.toString();
      this.raw.push(text);
      try {
        this.frames.push(JSON.parse(text) as Frame);
      } catch {
        this.frames.push({ unparseable: text });
      }
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  send(obj: unknown): void {
    this.ws.send(typeof obj === 'string' ? obj : JSON.stringify(obj));
  }

  /** Wait for any (not yet consumed) frame matching `pred`; returns it without consuming others. */
  async waitFor(pred: (f: Frame) => boolean, timeoutMs = 3000, what = 'frame'): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const f = this.frames.slice(this.cursor).find(pred);
      if (f) return f;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.frames.slice(this.cursor))}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** Consume and return the next `n` frames, skipping pings. */
  async take(n = 1, timeoutMs = 3000): Promise<Frame[]> {
    const out: Frame[] = [];
    const deadline = Date.now() + timeoutMs;
    while (out.length < n) {
      const f = this.frames[this.cursor];
      if (f) {
        this.cursor++;
        if (f.type !== 'ping') out.push(f);
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out: wanted ${n} frames, got ${JSON.stringify(out)}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    return out;
  }

  /** Frames received so far that are not pings and not yet consumed; consumes them. */
  drain(): Frame[] {
    const rest = this.frames.slice(this.cursor).filter((f) => f.type !== 'ping');
    this.cursor = this.frames.length;
    return rest;
  }

  async waitClosed(timeoutMs = 3000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error('timed out waiting for close');
      await new Promise<void>((r) => {
        const t = setTimeout(r, 20);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    return this.closed;
  }

  close(): void {
    this.ws.terminate();
  }
}

/** Open, and consume the welcome. */
export async function connectRaw(url: string, protocol?: string | string[], opts?: WebSocket.ClientOptions): Promise<{ c: RawClient; welcome: Frame }> {
  const c = new RawClient(url, protocol, opts);
  await c.opened;
  const [welcome] = await c.take(1);
  return { c, welcome: welcome! };
}

export const sleepMs = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A broker that stores and fans out one message, then loses its answer (a Redis killed between
 * running the publish script and replying), and refuses every retry of it: the replay server
 * answers 503 "may have been stored", then "not stored". The clients get the message anyway.
 * A run must say so (UNCONFIRMED_DELIVERED) and stay valid: the count is right, the publisher
 * just could not know. `seq`: the run's message whose answer is lost.
 */
export class LosesOneAnswer extends MemoryBroker {
  private lostKey: string | undefined;
  constructor(private readonly seq: number) {
    super({ historyLimit: 500, historyTtlSec: 300, sessionTtlSec: 300 });
  }
  override async publish(items: readonly PublishItem[]): Promise<void> {
    const key = items[0]?.idempotencyKey;
    if (key !== undefined && key === this.lostKey) throw new Error('Redis is down');
    await super.publish(items);
    if (key?.endsWith(`:${this.seq}`) && this.lostKey === undefined) {
      this.lostKey = key;
      throw Object.assign(new Error('the connection to Redis was lost mid-command, so the batch may have been stored'), { maybeStored: true });
    }
  }
}

/**
 * Test fixtures for chaos suites: real TCP servers on port 0 over loopback, socket helpers with
 * deadlines (never bare sleeps), and the Toxiproxy target (ours in-process, or a real server
 * when TOXIPROXY_URL is set).
 */
import { EventEmitter, once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { waitUntil } from '../lib/time.ts';
import { connectHost } from './toxiproxy/client.ts';
import { createToxiproxyServer, type ToxiproxyServer } from './toxiproxy/index.ts';

/**
 * Where a real Toxiproxy reaches the servers our tests start. Default loopback works for a local
 * toxiproxy-server; set TOXIPROXY_UPSTREAM_HOST (e.g. host.docker.internal) otherwise.
 */
const UPSTREAM_HOST = process.env.TOXIPROXY_UPSTREAM_HOST ?? '127.0.0.1';

/** A TCP server on port 0. `onSocket` decides what to do with each connection (echo, blast, hold...). */
export async function startTcpServer(onSocket: (s: Socket) => void = () => {}) {
  const sockets: Socket[] = [];
  const received: Buffer[][] = [];
  const server = createServer((s) => {
    s.on('error', () => {});
    const mine: Buffer[] = [];
    sockets.push(s);
    received.push(mine);
    s.on('data', (d) => mine.push(d));
    onSocket(s);
  });
  const bindHost = UPSTREAM_HOST === '127.0.0.1' ? '127.0.0.1' : '0.0.0.0';
  await new Promise<void>((resolve) => server.listen(0, bindHost, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    /** Host as a Toxiproxy upstream should name it. */
    upstream: `${UPSTREAM_HOST}:${port}`,
    port,
    /** Server-side sockets, in accept order. */
    sockets,
    /** Bytes each server-side socket received, by accept order. */
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export type TestTcpServer = Awaited<ReturnType<typeof startTcpServer>>;

/** Echo server: every byte comes back on the same connection. */
export const startEchoServer = () => startTcpServer((s) => s.pipe(s));

/** Parse `host:port` / `[v6]:port` as reported in a proxy's `listen`; wildcards become loopback. */
export const listenAddress = (listen: string) => connectHost(listen, '127.0.0.1');

/** Connect and resolve once connected (`once` rejects on an error first). */
export async function connect(listen: string): Promise<Socket> {
  const s = createConnection({ ...listenAddress(listen), noDelay: true });
  await once(s, 'connect');
  return s;
}

/** Collects everything a socket receives, so reads can wait for a byte count with a deadline. */
export class Reader {
  private chunks: Buffer[] = [];
  private total = 0;
  /** Arrival time (performance.now) and size of each chunk. */
  readonly arrivals: Array<{ at: number; size: number }> = [];
  ended = false;
  error: NodeJS.ErrnoException | undefined;
  /** Emits 'change' on every arrival, error and close: what `until` re-checks its predicate on. */
  private readonly changes = new EventEmitter();

  constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.chunks.push(d);
      this.total += d.length;
      this.arrivals.push({ at: performance.now(), size: d.length });
      this.changes.emit('change');
    });
    socket.on('error', (e) => {
      this.error = e;
      this.changes.emit('change');
    });
    socket.on('close', () => {
      this.ended = true;
      this.changes.emit('change');
    });
  }

  get length(): number {
    return this.total;
  }

  data(): Buffer {
    return Buffer.concat(this.chunks);
  }

  /** Resolve when `n` bytes arrived; reject on close first or after `timeoutMs`. */
  async bytes(n: number, timeoutMs = 5000): Promise<Buffer> {
    await this.until(() => this.total >= n || this.ended, timeoutMs, `${n} bytes (have ${this.total})`);
    if (this.total < n) throw new Error(`socket closed after ${this.total} of ${n} bytes${this.error ? ` (${this.error.code})` : ''}`);
    return this.data().subarray(0, n);
  }

  /** Resolve when the socket is closed; with the error code if it closed on an error (ECONNRESET). */
  async closed(timeoutMs = 5000): Promise<{ code: string | undefined }> {
    await this.until(() => this.ended, timeoutMs, 'close');
    return { code: this.error?.code };
  }

  async until(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      while (!pred()) await once(this.changes, 'change', { signal });
    } catch {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
  }
}

/** Connect through `listen` and attach a Reader. */
export async function open(listen: string): Promise<Reader> {
  return new Reader(await connect(listen));
}

/** Wait until `pred` holds (polling); for state the test cannot subscribe to. */
export async function eventually(pred: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  await waitUntil(pred, timeoutMs, what, 10);
}

export interface ToxiproxyTarget {
  url: string;
  /** Our in-process server, or undefined when the suite runs against TOXIPROXY_URL. */
  server: ToxiproxyServer | undefined;
  /** The target is Rebound's proxy (embedded, or standalone at TOXIPROXY_URL: it answers /health). */
  rebound: boolean;
  close(): Promise<void>;
}

/** The server under test: TOXIPROXY_URL if set (a real Toxiproxy), else our embedded one on port 0. */
export async function startToxiproxyTarget(): Promise<ToxiproxyTarget> {
  const external = process.env.TOXIPROXY_URL;
  if (external) {
    const url = external.replace(/\/$/, '');
    // Toxiproxy has no /health (404); Rebound's standalone proxy answers it with its service name.
    const health = await fetch(`${url}/health`).then((r) => (r.ok ? (r.json() as Promise<{ service?: string }>) : {}), () => ({}));
    return { url, server: undefined, rebound: (health as { service?: string }).service === 'chaos-proxy', close: async () => {} };
  }
  const server = await createToxiproxyServer({ port: 0 });
  return { url: server.url, server, rebound: true, close: () => server.close() };
}

/** True when the suite targets our embedded proxy (tests of our own extensions use `it.runIf(ours)`). */
export const targetsEmbedded = !process.env.TOXIPROXY_URL;

let seq = 0;
/** A proxy name unique across files and runs, so suites can share one real Toxiproxy. */
export const uniqueName = (base: string) => `${base}_${process.pid}_${++seq}`;

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../lib/time.ts';
import { startService, type ServiceHandle } from './spawn.ts';
import { broadcast, ioClient, metrics, wsClient } from './test-clients.ts';

/**
 * For test files only (it declares suites): the bounds every reference server shares, written
 * once so ws and Socket.IO are held to the same rules by the same test — a SIGTERM with stalled
 * readers stops within the grace period, and the too-slow rule at the default buffer bound.
 */

/** A protocol's test client as the shared suites drive it: one stream per client. */
export interface ContractClient {
  subscribe(stream: string): Promise<void>;
  /** Messages received on the stream it subscribed to. */
  received(): number;
  /** Their data, in arrival order. */
  data(): string[];
  /** Whisper to the stream's other subscribers; `whispers()` is what this client heard. */
  whisper(data: string): void;
  whispers(): string[];
  /** Stop reading from the socket (the kernel's buffers then fill). */
  pause(): void;
  close(): void;
}

/** The reference servers these contracts hold: uws speaks the ws server's protocol. */
export type ReferenceServer = 'ws' | 'uws' | 'socketio';

export async function contractClient(name: ReferenceServer, svc: ServiceHandle): Promise<ContractClient> {
  if (name === 'ws' || name === 'uws') {
    const c = await wsClient(svc);
    let stream = '';
    return {
      async subscribe(s) {
        stream = s;
        c.send({ type: 'subscribe', stream: s });
        await c.next('subscribed');
      },
      received: () => c.frames.filter((f) => f.stream === stream && f.type === undefined).length,
      data: () => c.frames.filter((f) => f.stream === stream && f.type === undefined).map((f) => String(f.data)),
      whisper: (data) => c.send({ type: 'whisper', stream, data }),
      whispers: () => c.frames.filter((f) => f.type === 'whisper').map((f) => String(f.data)),
      pause: c.pause,
      close: c.close,
    };
  }
  const c = await ioClient(svc);
  const got: string[] = [];
  const heard: string[] = [];
  let stream = '';
  c.socket.on('message', (d: unknown) => got.push(String(d)));
  c.socket.on('whisper', (d: unknown) => heard.push(String(d)));
  return {
    async subscribe(s) {
      stream = s;
      await c.socket.timeout(5000).emitWithAck('subscribe', s);
    },
    received: () => got.length,
    data: () => got,
    whisper: (data) => c.socket.emit('whisper', stream, data),
    whispers: () => heard,
    pause: c.pause,
    close: c.close,
  };
}

export function describeSharedBounds(name: ReferenceServer, opts: { stopArgs?: string[] } = {}): void {
  const client = (svc: ServiceHandle) => contractClient(name, svc);

  describe(`${name} stop`, () => {
    it('SIGTERM with clients that do not read stops within the grace period and exits 0', async () => {
      const svc = await startService(name, { args: opts.stopArgs ?? [] });
      const clients = await Promise.all(Array.from({ length: 20 }, () => client(svc)));
      for (const c of clients.slice(0, 5)) c.pause();
      const ms = await svc.stop(10_000);
      expect({ code: svc.child.exitCode, signal: svc.child.signalCode }).toEqual({ code: 0, signal: null });
      expect(ms).toBeLessThan(3000);
      for (const c of clients) c.close();
    });
  });

  describe(`${name} too-slow rule at the default buffer bound (1 MiB)`, () => {
    let svc: ServiceHandle;
    beforeAll(async () => {
      svc = await startService(name, { args: ['--slow-consumer-ms', '300'] });
    });
    afterAll(async () => {
      await svc.stop();
    });

    it('a reading client is not cut by one accepted 2 x 4 MiB batch (a burst the server created)', async () => {
      const fast = await client(svc);
      await fast.subscribe('big');
      const data = 'b'.repeat(4 * 1024 * 1024);
      expect((await broadcast(svc, [{ stream: 'big', data }, { stream: 'big', data }])).status).toBe(201);
      await waitUntil(() => fast.received() >= 2, 20_000, 'both 4 MiB messages');
      expect((await metrics(svc)).tooSlowDisconnects).toBe(0);
      fast.close();
    });

    it('a client over the bound for --slow-consumer-ms without draining is dropped below the hard cap', async () => {
      const [slow, reader] = await Promise.all([client(svc), client(svc)]);
      for (const c of [slow, reader]) await c.subscribe('stall');
      slow.pause();
      const data = 's'.repeat(100_000);
      // 100 KB every 10 ms: the kernel's buffers fill, then the server's queue grows past 1 MiB and stays there.
      let sent = 0;
      while (sent < 150 && ((await metrics(svc)).tooSlowDisconnects ?? 0) === 0) {
        await broadcast(svc, { stream: 'stall', data });
        sent++;
        await new Promise((r) => setTimeout(r, 10));
      }
      const m = await metrics(svc);
      expect(m.tooSlowDisconnects).toBe(1);
      // Dropped by the time rule: less than the 16 MiB hard cap was ever sent to it.
      expect(sent * data.length).toBeLessThan(16 * 1024 * 1024);
      await waitUntil(() => reader.received() >= 1, 5000, 'reader still served');
      expect(m.connections).toBe(1);
      slow.close();
      reader.close();
    });
  });
}

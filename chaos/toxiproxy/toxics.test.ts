/**
 * Data-path conformance: bytes through real loopback TCP with toxics added, changed and removed
 * on live connections, mirroring Toxiproxy's link_test.go / toxics/*_test.go. Timing is asserted
 * as invariants with generous bounds (lower bounds tight, upper bounds loose).
 */
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { Toxiproxy, type Proxy } from 'toxiproxy-node-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, eventually, open, Reader, startEchoServer, startTcpServer, startToxiproxyTarget, targetsEmbedded, uniqueName, type TestTcpServer, type ToxiproxyTarget } from '../testing.ts';

let target: ToxiproxyTarget;
let echo: TestTcpServer;
let client: Toxiproxy;
const cleanup: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  target = await startToxiproxyTarget();
  echo = await startEchoServer();
  client = new Toxiproxy(target.url);
});
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => {});
  await echo.close();
  await target.close();
});

async function proxyTo(upstream: string): Promise<Proxy> {
  const p = await client.createProxy({ name: uniqueName('data'), listen: '127.0.0.1:0', upstream });
  cleanup.push(() => p.remove());
  return p;
}

async function server(onSocket?: (s: Socket) => void): Promise<TestTcpServer> {
  const s = await startTcpServer(onSocket);
  cleanup.push(() => s.close());
  return s;
}

type Attrs = Record<string, number>;
const add = (p: Proxy, type: string, stream: 'upstream' | 'downstream', attributes: Attrs, extra: { name?: string; toxicity?: number } = {}) =>
  p.addToxic<Attrs>({ name: extra.name ?? `${type}_${stream}`, type: type as 'latency', stream, toxicity: extra.toxicity ?? 1, attributes });
const removeToxic = async (p: Proxy, name: string) => (await p.getToxic(name)).remove();

/** One echo round trip of `msg`, in ms. */
async function roundTrip(r: Reader, msg = 'ping'): Promise<number> {
  const want = r.length + msg.length;
  const t0 = performance.now();
  r.socket.write(msg);
  await r.bytes(want, 10_000);
  return performance.now() - t0;
}

describe('plain forwarding', () => {
  it('64 KiB each way arrives byte-exact; two-part messages stay in order', async () => {
    const p = await proxyTo(echo.upstream);
    const r = await open(p.listen);
    const payload = randomBytes(64 * 1024);
    r.socket.write(payload.subarray(0, 1000));
    r.socket.write(payload.subarray(1000));
    expect((await r.bytes(payload.length)).equals(payload)).toBe(true);
    r.socket.destroy();
  });

  it('upstream down: the client is accepted, then closed without data', async () => {
    const dead = await startTcpServer();
    await dead.close();
    const p = await proxyTo(dead.upstream);
    const r = await open(p.listen);
    await r.closed();
    expect(r.length).toBe(0);
  });

  it('client FIN closes the upstream connection too (no half-open)', async () => {
    const srv = await server();
    const p = await proxyTo(srv.upstream);
    const r = await open(p.listen);
    r.socket.write('bye');
    await eventually(() => srv.received[0]?.length === 1, 5000, 'upstream data');
    r.socket.end();
    const up = new Reader(srv.sockets[0]!);
    await up.closed();
    await r.closed();
  });
});

describe('latency', () => {
  it('downstream latency 100 ± 20: every round trip within [80, 120 + slack] ms', async () => {
    const p = await proxyTo(echo.upstream);
    await add(p, 'latency', 'downstream', { latency: 100, jitter: 20 });
    const r = await open(p.listen);
    for (let i = 0; i < 8; i++) {
      const rtt = await roundTrip(r);
      expect(rtt, `round trip ${i}`).toBeGreaterThanOrEqual(79);
      expect(rtt, `round trip ${i}`).toBeLessThan(120 + 150);
    }
    r.socket.destroy();
  });

  it('latency in both directions and two toxics in one direction add up', async () => {
    const p = await proxyTo(echo.upstream);
    await add(p, 'latency', 'upstream', { latency: 60, jitter: 0 });
    await add(p, 'latency', 'downstream', { latency: 60, jitter: 0 }, { name: 'a' });
    await add(p, 'latency', 'downstream', { latency: 60, jitter: 0 }, { name: 'b' });
    const r = await open(p.listen);
    const rtt = await roundTrip(r);
    expect(rtt).toBeGreaterThanOrEqual(178);
    expect(rtt).toBeLessThan(180 + 250);
    r.socket.destroy();
  });

  it('a toxic added to a live connection applies at once; updating and removing it too', async () => {
    const p = await proxyTo(echo.upstream);
    const r = await open(p.listen);
    expect(await roundTrip(r)).toBeLessThan(140);
    const t = await add(p, 'latency', 'downstream', { latency: 150, jitter: 0 });
    expect(await roundTrip(r)).toBeGreaterThanOrEqual(148);
    await t.update({ ...t.toJson(), attributes: { latency: 300, jitter: 0 } });
    expect(await roundTrip(r)).toBeGreaterThanOrEqual(298);
    await t.remove();
    expect(await roundTrip(r)).toBeLessThan(200);
    r.socket.destroy();
  });
});

describe('toxicity', () => {
  it('toxicity 0 never applies, 1 always applies', async () => {
    const p = await proxyTo(echo.upstream);
    await add(p, 'latency', 'downstream', { latency: 300, jitter: 0 }, { toxicity: 0 });
    const r0 = await open(p.listen);
    expect(await roundTrip(r0)).toBeLessThan(200);
    await (await p.getToxic('latency_downstream')).update({ name: 'latency_downstream', type: 'latency', stream: 'downstream', toxicity: 1, attributes: { latency: 300, jitter: 0 } });
    const r1 = await open(p.listen);
    expect(await roundTrip(r1)).toBeGreaterThanOrEqual(298);
    r0.socket.destroy();
    r1.socket.destroy();
  });

  it('toxicity 0.5 is rolled per connection: over 40 connections some are delayed and some are not', async () => {
    const p = await proxyTo(echo.upstream);
    await add(p, 'latency', 'downstream', { latency: 250, jitter: 0 }, { toxicity: 0.5 });
    const readers = await Promise.all(Array.from({ length: 40 }, () => open(p.listen)));
    const rtts = await Promise.all(readers.map((r) => roundTrip(r)));
    // A delayed link cannot answer in under 248 ms; an undelayed one can only be that slow on a stalled machine.
    const delayed = rtts.filter((t) => t >= 248).length;
    // Binomial(40, 0.5) falls outside [5, 35] with probability < 1e-6.
    expect(delayed).toBeGreaterThanOrEqual(5);
    expect(40 - delayed).toBeGreaterThanOrEqual(5);
    for (const r of readers) r.socket.destroy();
  });
});

describe('bandwidth, slicer, limit_data, slow_close', () => {
  it('bandwidth 1000 KB/s: 480 KB arrive intact in about 480 ms', async () => {
    const payload = randomBytes(480_000);
    const srv = await server((s) => s.once('data', () => s.write(payload)));
    const p = await proxyTo(srv.upstream);
    await add(p, 'bandwidth', 'downstream', { rate: 1000 });
    const r = await open(p.listen);
    const t0 = performance.now();
    r.socket.write('go');
    const got = await r.bytes(payload.length, 10_000);
    const elapsed = performance.now() - t0;
    expect(got.equals(payload)).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(440);
    expect(elapsed).toBeLessThan(2000);
    r.socket.destroy();
  });

  it('bandwidth rate 0 stalls the stream; removing it delivers everything held', async () => {
    const p = await proxyTo(echo.upstream);
    await add(p, 'bandwidth', 'downstream', { rate: 0 });
    const r = await open(p.listen);
    r.socket.write('held-back');
    await expect(r.bytes(1, 300)).rejects.toThrow(/timed out/);
    await removeToxic(p, 'bandwidth_downstream');
    expect((await r.bytes(9)).toString()).toBe('held-back');
    r.socket.destroy();
  });

  it('slicer splits data into small pieces without changing it', async () => {
    const p = await proxyTo(echo.upstream);
    await add(p, 'slicer', 'downstream', { average_size: 10, size_variation: 5, delay: 2000 });
    const r = await open(p.listen);
    const payload = randomBytes(500);
    r.socket.write(payload);
    expect((await r.bytes(500)).equals(payload)).toBe(true);
    expect(r.arrivals.length).toBeGreaterThan(5);
    r.socket.destroy();
  });

  it('limit_data 100 bytes: exactly 100 bytes arrive, then the connection closes', async () => {
    const srv = await server((s) => s.once('data', () => s.write(Buffer.alloc(150, 7))));
    const p = await proxyTo(srv.upstream);
    await add(p, 'limit_data', 'downstream', { bytes: 100 });
    const r = await open(p.listen);
    r.socket.write('go');
    await r.closed();
    expect(r.length).toBe(100);
  });

  it('slow_close 300 ms: the client sees the server close at least 300 ms late', async () => {
    const srv = await server((s) => s.once('data', () => s.end()));
    const p = await proxyTo(srv.upstream);
    await add(p, 'slow_close', 'downstream', { delay: 300 });
    const r = await open(p.listen);
    const t0 = performance.now();
    r.socket.write('close please');
    await r.closed();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(295);
  });
});

describe('timeout and reset_peer', () => {
  it('timeout 0 drops data and holds the connection; removing it closes both ends', async () => {
    const srv = await server();
    const p = await proxyTo(srv.upstream);
    await add(p, 'timeout', 'upstream', { timeout: 0 });
    const r = await open(p.listen);
    r.socket.write('into the void');
    await eventually(() => srv.sockets.length === 1, 5000, 'upstream connection');
    const up = new Reader(srv.sockets[0]!);
    await expect(r.closed(300)).rejects.toThrow(/timed out/);
    expect(srv.received[0]!.length).toBe(0);
    await removeToxic(p, 'timeout_upstream');
    await r.closed();
    await up.closed();
  });

  it('timeout 200 closes the connection after about 200 ms', async () => {
    const p = await proxyTo(echo.upstream);
    await add(p, 'timeout', 'downstream', { timeout: 200 });
    const t0 = performance.now();
    const r = await open(p.listen);
    r.socket.write('x');
    await r.closed();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
    expect(r.length).toBe(0);
  });

  it('timeout 400 with a write every 100 ms closes about 400 ms after the last write, not the first', async () => {
    const srv = await server();
    const p = await proxyTo(srv.upstream);
    await add(p, 'timeout', 'upstream', { timeout: 400 });
    const r = await open(p.listen);
    let lastWrite = 0;
    for (let i = 0; i < 8; i++) {
      r.socket.write('still here');
      lastWrite = performance.now();
      await new Promise((res) => setTimeout(res, 100));
    }
    // 800 ms of writes: a timer fixed at the first write would have closed at ~400 ms.
    await r.closed(5000);
    const sinceLast = performance.now() - lastWrite;
    expect(sinceLast).toBeGreaterThanOrEqual(390);
    expect(sinceLast).toBeLessThan(1000);
    expect(srv.received[0]?.length ?? 0).toBe(0);
  });

  it('reset_peer: the client gets ECONNRESET (immediately, and after its timeout)', async () => {
    for (const timeout of [0, 200]) {
      const p = await proxyTo(echo.upstream);
      await add(p, 'reset_peer', 'upstream', { timeout });
      const r = await open(p.listen);
      const t0 = performance.now();
      r.socket.write('reset me');
      const { code } = await r.closed();
      expect(code, `timeout ${timeout}`).toBe('ECONNRESET');
      expect(performance.now() - t0).toBeGreaterThanOrEqual(timeout - 10);
      expect(r.length).toBe(0);
    }
  });
});

describe('disable and delete', () => {
  it('disabling a proxy closes live connections at both ends and refuses new ones; enabling accepts again', async () => {
    const srv = await server((s) => s.pipe(s));
    const p = await proxyTo(srv.upstream);
    const r = await open(p.listen);
    await roundTrip(r);
    const up = new Reader(srv.sockets[0]!);
    await p.update({ enabled: false, listen: p.listen, upstream: p.upstream });
    await r.closed();
    await up.closed();
    await expect(connect(p.listen)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await p.update({ enabled: true, listen: p.listen, upstream: p.upstream });
    const again = await open(p.listen);
    await roundTrip(again);
    again.socket.destroy();
  });

  it('deleting a proxy closes its connections', async () => {
    const p = await client.createProxy({ name: uniqueName('del'), listen: '127.0.0.1:0', upstream: echo.upstream });
    const r = await open(p.listen);
    await roundTrip(r);
    await p.remove();
    await r.closed();
  });
});

describe('live changes under load', () => {
  it('no byte lost or reordered while toxics are added, updated and removed in both directions', async () => {
    const p = await proxyTo(echo.upstream);
    const r = await open(p.listen);
    const total = 20_000;
    const sent: Buffer[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < total; i++) {
        const b = Buffer.alloc(64);
        b.writeUInt32BE(i, 0);
        randomBytes(60).copy(b, 4);
        sent.push(b);
        if (!r.socket.write(b)) await new Promise((res) => r.socket.once('drain', res));
        if (i % 50 === 0) await new Promise((res) => setTimeout(res, 1));
      }
      writing = false;
    })();
    const types: Array<[string, Attrs]> = [
      ['latency', { latency: 20, jitter: 5 }],
      ['bandwidth', { rate: 500 }],
      ['slicer', { average_size: 16, size_variation: 8, delay: 100 }],
      ['noop', {}],
    ];
    let round = 0;
    while (writing) {
      const [type, attributes] = types[round % types.length]!;
      const stream = round % 2 === 0 ? 'downstream' : 'upstream';
      const name = `churn${round}`;
      const t = await add(p, type, stream, attributes, { name });
      if (type === 'latency') await t.update({ ...t.toJson(), attributes: { latency: 5, jitter: 0 } });
      await new Promise((res) => setTimeout(res, 5));
      await t.remove();
      round++;
    }
    await writer;
    const got = await r.bytes(total * 64, 20_000);
    expect(round, 'toxic churn rounds during the transfer').toBeGreaterThan(8);
    expect(got.equals(Buffer.concat(sent))).toBe(true);
    r.socket.destroy();
  });

  it('300 short-lived connections racing toxic churn: every echo intact, the server keeps serving', async () => {
    const p = await proxyTo(echo.upstream);
    let churning = true;
    const churn = (async () => {
      for (let i = 0; churning; i++) {
        const t = await add(p, i % 2 ? 'latency' : 'reset_peer', i % 3 ? 'downstream' : 'upstream', i % 2 ? { latency: 5, jitter: 0 } : { timeout: 0 }, { name: `race${i}`, toxicity: i % 2 ? 1 : 0 });
        await t.remove();
      }
    })();
    let ok = 0;
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(
        Array.from({ length: 30 }, async () => {
          const r = await open(p.listen);
          const msg = randomBytes(32);
          r.socket.write(msg);
          if ((await r.bytes(32)).equals(msg)) ok++;
          r.socket.destroy();
        }),
      );
    }
    churning = false;
    await churn;
    expect(ok).toBe(300);
    if (target.server) await eventually(() => target.server!.stats().connections === 0, 5000, 'all connections closed');
  });

  it.runIf(targetsEmbedded)('ours: reset_peer added to an already-open connection still RSTs it (Toxiproxy: FIN)', async () => {
    const p = await proxyTo(echo.upstream);
    const r = await open(p.listen);
    await roundTrip(r);
    await add(p, 'reset_peer', 'upstream', { timeout: 0 });
    r.socket.write('reset me');
    expect((await r.closed()).code).toBe('ECONNRESET');
  });

  it.runIf(targetsEmbedded)('ours: reset_peer at toxicity 0 leaves an ordinary server close a FIN (Toxiproxy #603: RST)', async () => {
    const srv = await server((s) => s.once('data', () => s.end('bye')));
    const p = await proxyTo(srv.upstream);
    await add(p, 'reset_peer', 'downstream', { timeout: 0 }, { toxicity: 0 });
    const r = await open(p.listen);
    r.socket.write('close please');
    expect((await r.closed()).code).toBeUndefined();
    expect(r.data().toString()).toBe('bye');
  });

  it.runIf(targetsEmbedded)('ours: idle connections arm no timers, even with toxics configured', async () => {
    const p = await proxyTo(echo.upstream);
    await add(p, 'latency', 'downstream', { latency: 50, jitter: 10 });
    await add(p, 'bandwidth', 'upstream', { rate: 100 });
    const readers = await Promise.all(Array.from({ length: 200 }, () => open(p.listen)));
    await roundTrip(readers[0]!);
    await eventually(() => target.server!.stats().connections >= 200, 5000, '200 connections');
    await eventually(() => target.server!.stats().timers === 0, 2000, 'no timers');
    for (const r of readers) r.socket.destroy();
    await eventually(() => target.server!.stats().connections === 0, 5000, 'connections to close');
  });

  it.runIf(targetsEmbedded)('ours: a reader that never reads pushes back over TCP; the proxy buffers a bounded amount', async () => {
    const srv = await server((s) => s.pause());
    const p = await proxyTo(srv.upstream);
    const r = await open(p.listen);
    const chunk = Buffer.alloc(64 * 1024);
    let accepted = 0;
    const deadline = performance.now() + 1500;
    while (performance.now() < deadline) {
      accepted += chunk.length;
      if (!r.socket.write(chunk)) await drainOrTimeout(r.socket, 100);
    }
    const inFlight = accepted - r.socket.writableLength;
    // Kernel buffers on two sockets plus the proxy's 1 MiB bound: tens of MB at most, not "everything written".
    expect(inFlight).toBeLessThan(48 * 1024 * 1024);
    expect(r.socket.writableLength).toBeGreaterThan(0);
    r.socket.destroy();
  });
});

function drainOrTimeout(s: Socket, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      s.off('drain', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    s.once('drain', done);
  });
}

import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { sleep } from '../../lib/time.ts';
import { respawn, startService } from '../../services/common/spawn.ts';
import { startTestServer } from '../../services/replay-server/testing.ts';
import { withTarget } from '../../engine/measure/local-target.ts';
import type { LossCause } from '../../engine/measure/loss-causes.ts';
import { lossSections, lossInputOf } from '../../engine/pages/loss.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { parseJitterOptions } from './options.ts';
import type { JitterResult } from './result.ts';
import { comparisonRows } from './table.ts';
import { runJitter } from './run.ts';

/**
 * The broken-server goals that runners/jitter/loss-causes.test.ts does not run as stated:
 * a server that cuts slow consumers (too_slow), one that drops 1% of live frames, Socket.IO
 * sessions kept 1 s. Each is the real jitter runner with real clients against a real server on
 * port 0, and each run must book >= 99% of its loss to the cause the server was broken for.
 */
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const opts = (values: Record<string, unknown>) => parseJitterOptions({ values, origin: 'test' });

/** Share of the run's loss booked to `cause`, %, after checking the books balance. */
function share(r: JitterResult, cause: LossCause): number {
  const by = r.lossByCause ?? {};
  expect(Object.values(by).reduce((a, b) => a + b, 0), JSON.stringify(by)).toBe(r.lostDeliveries);
  if (process.env.LOSS_FIGURES) console.log('FIGURE', r.target, cause, r.lostDeliveries, JSON.stringify(by), JSON.stringify(r.resumeOutcomes), JSON.stringify(r.lateDeliveries));
  return r.lostDeliveries > 0 ? ((by[cause] ?? 0) / r.lostDeliveries) * 100 : 0;
}

interface Relay {
  url: string;
  /** Stop reading from the server on every open connection (the client stops consuming). */
  stall(): number;
  /** Read again on every stalled connection. */
  unstall(): void;
}

/**
 * A WebSocket relay in front of a real server (same path, query and subprotocol) that can stop
 * reading the server's side: the server's writes then back up in the kernel and in its own
 * buffer exactly as behind a client that stopped reading. Closes are passed on with their code
 * and after the frames already relayed, so a server's last word (a disconnect frame) arrives.
 */
async function stallingRelay(upstreamHttp: string, path: string): Promise<Relay> {
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server, path, handleProtocols: (protocols) => [...protocols][0] ?? false });
  const ups = new Set<WebSocket>();
  const stalled = new Set<Socket>();
  wss.on('connection', (client, req) => {
    const target = upstreamHttp.replace(/^http/, 'ws') + (req.url ?? path);
    const up = client.protocol ? new WebSocket(target, client.protocol) : new WebSocket(target);
    ups.add(up);
    const early: WebSocket.RawData[] = [];
    up.on('open', () => early.splice(0).forEach((m) => up.send(m, { binary: false })));
    client.on('message', (m) => (up.readyState === WebSocket.OPEN ? up.send(m, { binary: false }) : early.push(m)));
    up.on('message', (m) => client.readyState === WebSocket.OPEN && client.send(m, { binary: false }));
    // A close code the ws library may not send itself (1005/1006: no code) becomes a plain 1000.
    const pass = (to: WebSocket, code: number) => to.readyState === WebSocket.OPEN && to.close(code >= 3000 || [1000, 1001, 1008, 1011, 1012, 1013].includes(code) ? code : 1000);
    up.on('close', (code) => (ups.delete(up), pass(client, code)));
    client.on('close', (code) => pass(up, code));
    up.on('error', () => client.terminate());
    client.on('error', () => up.terminate());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise<void>((r) => (wss.clients.forEach((c) => c.terminate()), ups.forEach((u) => u.terminate()), server.close(() => r()))));
  const sockOf = (ws: WebSocket) => (ws as unknown as { _socket?: Socket })._socket;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stall() {
      for (const u of ups) {
        const s = sockOf(u);
        if (s && u.readyState === WebSocket.OPEN) (s.pause(), stalled.add(s));
      }
      return stalled.size;
    },
    unstall() {
      for (const s of stalled) s.resume();
      stalled.clear();
    },
  };
}

/** The ws service behind a relay that drops the data frames of every seq divisible by `every`. */
async function liveFrameDropper(upstreamHttp: string, every: number): Promise<{ url: string; dropped: () => number }> {
  let dropped = 0;
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server, path: '/ws' });
  wss.on('connection', (client, req) => {
    const up = new WebSocket(upstreamHttp.replace(/^http/, 'ws') + (req.url ?? '/ws'));
    up.on('message', (raw) => {
      const m = raw.toString();
      const f = JSON.parse(m) as { data?: string };
      if (typeof f.data === 'string' && (JSON.parse(f.data) as { seq: number }).seq % every === 0) return void dropped++;
      client.send(m);
    });
    // What the client says before the upstream is open (its subscribe) waits for it.
    const early: string[] = [];
    up.on('open', () => early.splice(0).forEach((m) => up.send(m)));
    client.on('message', (m) => (up.readyState === WebSocket.OPEN ? up.send(m.toString()) : early.push(m.toString())));
    const end = () => (client.terminate(), up.terminate());
    for (const s of [client, up]) (s.on('close', end), s.on('error', end));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise<void>((r) => (wss.clients.forEach((c) => c.terminate()), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, dropped: () => dropped };
}

describe('loss by cause: the broken servers of the goals', () => {
  it('replay server cutting slow consumers (100 ms without progress), clients that stop reading: too slow (server cut the client)', async () => {
    // Small buffers and a 100 ms progress rule: a client that stops reading is cut within
    // seconds. A history of 2 messages cannot make up what the cut client missed, so the loss
    // stays loss, booked to the server's reason for the cut.
    const t = await startTestServer({ maxBufferedBytes: 16_384, slowConsumerMs: 100, maxBodyBytes: 262_144, maxQueuedBytes: 524_288, historyLimit: 2 });
    cleanup.push(() => t.close());
    const relay = await stallingRelay(t.httpUrl, '/cable');
    const clients = 4;
    // 64 KB messages at 20/s: about 1.3 MB/s per client, so the kernel's buffers fill in a few seconds.
    const o = opts({ target: 'replay', clients, msgs: 140, interval: 50, payloadBytes: 65_000, jitter: 0, settle: 3000, seed: 11, reconnectStrategy: 'tuned', broadcastUrl: `${t.httpUrl}/_broadcast` });
    const run = runJitter(o, relay.url);
    let publishing = false;
    run.events.on('phase', (p) => void (p === 'publish' && (publishing = true)));
    for (let i = 0; !publishing && i < 400; i++) await sleep(25);
    await sleep(800);
    expect(relay.stall()).toBe(clients);
    // Read again once the server has cut them (or after 10 s): at once, so the disconnect frame
    // the server wrote behind the backlog reaches the client before the server's 1 s grace ends.
    const cutAtStart = t.srv.counters.disconnects.too_slow;
    for (let i = 0; i < 1000 && t.srv.counters.disconnects.too_slow - cutAtStart < clients; i++) await sleep(10);
    const cut = t.srv.counters.disconnects.too_slow - cutAtStart;
    relay.unstall();
    const r = await run.result;
    expect(cut).toBe(clients);
    expect(r.disconnectReasons.server_closed).toBeGreaterThanOrEqual(clients);
    expect(r.lostDeliveries).toBeGreaterThan(0);
    expect(share(r, 'too_slow'), JSON.stringify(r.lossByCause)).toBeGreaterThanOrEqual(99);
    // Every cut client came back, and its history could not fill the gap.
    expect(r.offlineAtEnd!.clients).toBe(0);
    expect(r.resumeOutcomes?.['rejected:history_evicted']).toBeGreaterThanOrEqual(clients);
    // Late deliveries split by cause: what sat in the stalled socket came late, while connected
    // (before the cut) or inside the cut's span (booked to the outcome of the resume that ended it).
    expect(r.lateDeliveries!.late).toBeGreaterThan(0);
    expect(Object.values(r.lateDeliveries!.byPath).reduce((a, b) => a + b, 0)).toBe(r.lateDeliveries!.late);
    // The report says it in words.
    expect(comparisonRows([r])).toContainEqual(['Lost: offline, cut as too slow', expect.stringMatching(/^[\d,]+ \((99(\.\d)?|100)%\)$/)]);
    const section = lossSections([lossInputOf(r.target, r)]).find((s) => s.title === 'Lost by cause')!;
    expect(section.tables![0]!.rows).toContainEqual(['offline, cut as too slow', expect.stringMatching(/%\)$/)]);
  }, 90_000);

  it('a server that drops 1% of live frames: lost while connected', async () => {
    await withTarget(getTarget('ws'), undefined, async (url) => {
      const relay = await liveFrameDropper(url, 100);
      const o = opts({ target: 'ws', clients: 6, msgs: 300, interval: 15, jitter: 0, settle: 500, seed: 9, broadcastUrl: `${url}/_broadcast` });
      const r = await runJitter(o, relay.url).result;
      expect(relay.dropped()).toBe(6 * 3);
      expect(r.lostDeliveries).toBe(6 * 3);
      expect(share(r, 'lost_while_connected')).toBeGreaterThanOrEqual(99);
      expect(r.resumeOutcomes).toEqual({});
    });
  }, 60_000);

  it('Socket.IO CSR with sessions kept 1 s, clients back after 1-3 s (the library\'s default backoff): the sessions expired', async () => {
    const o = opts({ target: 'socketio-csr', clients: 8, msgs: 100, interval: 60, jitter: 1, jitterMs: 600, settle: 5000, seed: 5 });
    const r = await withTarget(getTarget('socketio-csr'), undefined, (url) => runJitter(o, url).result, { SOCKETIO_CSR_MAX_MS: '1000' });
    expect(r.lostDeliveries).toBeGreaterThan(0);
    expect(share(r, 'session_expired'), JSON.stringify(r.lossByCause)).toBeGreaterThanOrEqual(99);
    expect(r.resumeOutcomes?.['rejected:session_expired']).toBe(r.reconnects);
  }, 60_000);

  it('Socket.IO CSR with its sessions kept: nothing lost, and the late deliveries are the ones the restored sessions brought', async () => {
    const o = opts({ target: 'socketio-csr', clients: 8, msgs: 100, interval: 60, jitter: 1, jitterMs: 600, settle: 5000, seed: 5 });
    const r = await withTarget(getTarget('socketio-csr'), undefined, (url) => runJitter(o, url).result);
    expect(r.reconnects).toBeGreaterThan(0);
    expect(r.lostDeliveries).toBe(0);
    expect(r.resumeOutcomes).toEqual({ session_restored: r.reconnects });
    expect(r.replayedDeliveries).toBeGreaterThan(0);
    // Late split by cause: a restored session delivers what the client missed seconds late.
    const late = r.lateDeliveries!;
    expect(late.byPath.session_restored).toBeGreaterThan(0);
    expect(late.byPath.session_restored!).toBeGreaterThanOrEqual(late.late / 2);
    expect(Object.values(late.byPath).reduce((a, b) => a + b, 0)).toBe(late.late);
    const table = lossSections([lossInputOf(r.target, r)]).find((s) => s.title === 'Lost by cause')!.tables!.find((t) => t.id === 'late-by-path')!;
    expect(table.rows).toContainEqual(['session restored', late.byPath.session_restored!.toLocaleString('en-US')]);
  }, 60_000);
});

describe('loss by cause: a replay server (memory broker, no Redis) killed without a word', () => {
  it('SIGKILL mid-run and started again on its port: server_restarted', async () => {
    let svc = await startService('replay');
    cleanup.push(() => svc.stop(2000).then(() => undefined));
    const o = opts({ target: 'replay', clients: 6, msgs: 80, interval: 60, jitter: 0, settle: 5000, seed: 4, reconnectStrategy: 'tuned', allowPublishFailures: true });
    const run = runJitter(o, svc.httpUrl);
    let publishing = false;
    run.events.on('phase', (p) => void (p === 'publish' && (publishing = true)));
    for (let i = 0; !publishing && i < 200; i++) await sleep(50);
    await sleep(1500);
    await svc.kill('SIGKILL');
    await sleep(300);
    svc = (await respawn(svc)).handle;
    const r = await run.result;
    expect(r.lostDeliveries).toBeGreaterThan(0);
    expect(share(r, 'server_restarted'), JSON.stringify(r.lossByCause)).toBeGreaterThanOrEqual(99);
  }, 90_000);
});

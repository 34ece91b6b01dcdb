import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { startTestServer } from '../../services/replay-server/testing.ts';
import { withTarget } from '../core/local-target.ts';
import type { LossCause } from '../core/loss-causes.ts';
import { getTarget } from '../targets/index.ts';
import { parseJitterOptions } from './options.ts';
import type { JitterResult } from './result.ts';
import { runJitter } from './run.ts';

/**
 * Broken servers, one per loss cause, each run by the real jitter runner with real clients at
 * small scale: the run must book (nearly) all of its loss to the cause the server was broken for,
 * and the causes must sum to lostDeliveries.
 */
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const opts = (values: Record<string, unknown>) => parseJitterOptions({ values, origin: 'test' });

/** Share of the run's loss booked to `cause`, %, after checking the books balance. */
function share(r: JitterResult, cause: LossCause): number {
  const by = r.lossByCause ?? {};
  const total = Object.values(by).reduce((a, b) => a + b, 0);
  expect(total, JSON.stringify(by)).toBe(r.lostDeliveries);
  return r.lostDeliveries > 0 ? ((by[cause] ?? 0) / r.lostDeliveries) * 100 : 0;
}

/**
 * A WebSocket relay in front of the ws service that forwards everything but drops the data frames
 * of every seq divisible by `every`: a server that loses live frames while the client is connected.
 */
async function liveFrameDropper(upstreamHttp: string, every: number): Promise<{ url: string; dropped: () => number }> {
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server, path: '/ws' });
  let dropped = 0;
  wss.on('connection', (client) => {
    const up = new WebSocket(upstreamHttp.replace(/^http/, 'ws') + '/ws');
    const early: WebSocket.RawData[] = [];
    up.on('open', () => early.splice(0).forEach((m) => up.send(m.toString())));
    client.on('message', (m) => (up.readyState === WebSocket.OPEN ? up.send(m.toString()) : early.push(m)));
    up.on('message', (raw) => {
      const text = raw.toString();
      const f = JSON.parse(text) as { data?: string };
      if (typeof f.data === 'string' && (JSON.parse(f.data) as { seq: number }).seq % every === 0) return void dropped++;
      client.send(text);
    });
    const end = () => (client.terminate(), up.terminate());
    client.on('close', end);
    up.on('close', end);
    client.on('error', end);
    up.on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise<void>((r) => (wss.clients.forEach((c) => c.terminate()), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, dropped: () => dropped };
}

describe('loss by cause: broken servers', () => {
  it('ws (at-most-once) with drops: all loss is offline with nothing to resume; every reconnect had nothing to resume', async () => {
    const o = opts({ target: 'ws', clients: 8, msgs: 100, interval: 60, jitter: 1, jitterMs: 600, settle: 2000, seed: 5 });
    const r = await withTarget(getTarget('ws'), undefined, (url) => runJitter(o, url).result);
    expect(r.lostDeliveries).toBeGreaterThan(0);
    expect(share(r, 'offline_nothing_to_resume')).toBe(100);
    expect(r.resumeOutcomes).toEqual({ nothing_to_resume: r.reconnects });
    expect(r.replayedDeliveries).toBe(0);
  }, 60_000);

  it('a server that drops 10% of live frames: lost while connected', async () => {
    await withTarget(getTarget('ws'), undefined, async (url) => {
      const relay = await liveFrameDropper(url, 10);
      const o = opts({ target: 'ws', clients: 6, msgs: 50, interval: 40, jitter: 0, settle: 500, seed: 9, broadcastUrl: `${url}/_broadcast` });
      const r = await runJitter(o, relay.url).result;
      expect(r.lostDeliveries).toBe(6 * 5);
      expect(relay.dropped()).toBe(6 * 5);
      expect(share(r, 'lost_while_connected')).toBe(100);
      expect(r.resumeOutcomes).toEqual({});
    });
  }, 60_000);

  it('replay server with a history of 1 message: the resumes are rejected as evicted, and the loss is history_evicted', async () => {
    const t = await startTestServer({ historyLimit: 1 });
    cleanup.push(() => t.close());
    const o = opts({ target: 'replay', clients: 8, msgs: 100, interval: 60, jitter: 1, jitterMs: 600, settle: 3000, seed: 5, reconnectStrategy: 'tuned' });
    const r = await runJitter(o, t.httpUrl).result;
    expect(r.lostDeliveries).toBeGreaterThan(0);
    expect(share(r, 'history_evicted'), JSON.stringify(r.lossByCause)).toBeGreaterThanOrEqual(99);
    expect(r.resumeOutcomes?.['rejected:history_evicted']).toBeGreaterThan(0);
  }, 60_000);

  it('replay server with full history: resumes fill the gap, nothing is lost, and the made-up messages count as replayed', async () => {
    const t = await startTestServer({});
    cleanup.push(() => t.close());
    const o = opts({ target: 'replay', clients: 8, msgs: 100, interval: 60, jitter: 1, jitterMs: 600, settle: 3000, seed: 5, reconnectStrategy: 'tuned' });
    const r = await runJitter(o, t.httpUrl).result;
    expect(r.reconnects).toBeGreaterThan(0);
    expect(r.lostDeliveries).toBe(0);
    expect(r.lossByCause).toEqual({});
    expect(r.resumeOutcomes?.history_filled).toBe(r.reconnects);
    expect(r.replayedDeliveries).toBeGreaterThan(0);
  }, 60_000);
});

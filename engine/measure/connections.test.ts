import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { ConnectionBook, rampConnect } from './connections.ts';
import { DeliveryLedger } from './ledger.ts';

describe('ConnectionBook', () => {
  it('counts a client whose connect timed out and that connected later as connected (a late connect), not failed', () => {
    const b = new ConnectionBook(3);
    b.connected(0);
    b.failed(1, 'target'); // e.g. the 20 s connect timeout fired
    b.failed(2, 'fd_limit');
    b.connected(1); // ...and the library got through afterwards
    expect(b.summary()).toEqual({ connectedClients: 2, connectFailures: 1, connectFailureCauses: { fd_limit: 1 }, lateConnects: 1 });
  });

  it('keeps the delivery rate of connected clients at or below 100% when a late client receives', () => {
    const b = new ConnectionBook(2);
    const l = new DeliveryLedger(2, 4);
    l.acceptAll();
    b.connected(0);
    b.failed(1, 'target');
    b.connected(1);
    for (const c of [0, 1]) for (const s of [1, 2, 3, 4]) l.record(c, s, 1);
    const { connectedClients } = b.summary();
    expect(l.totals().receivedDeliveries / (connectedClients * l.acceptedMessages)).toBe(1);
  });

  it('a client never seen and never failed counts as a target failure; repeated events count once; a failure after connecting is no late connect', () => {
    const b = new ConnectionBook(2);
    b.connected(0);
    b.connected(0);
    b.failed(0, 'target');
    expect(b.connectedCount).toBe(1);
    expect(b.summary()).toEqual({ connectedClients: 1, connectFailures: 1, connectFailureCauses: { target: 1 }, lateConnects: 0 });
  });
});

/** A real ws server on port 0: `/slow` handshakes wait `slowMs`; counts handshakes begun. */
async function wsServer(slowMs: number) {
  let begun = 0;
  const wss = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    verifyClient: (info, done) => {
      begun++;
      if (info.req.url === '/slow') setTimeout(() => done(true), slowMs);
      else done(true);
    },
  });
  await new Promise((r) => wss.once('listening', r));
  return { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, begun: () => begun, close: () => new Promise((r) => wss.close(r)) };
}

const sockets: WebSocket[] = [];
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.terminate();
  for (const c of closers.splice(0)) await c();
});

/** Opens a real WebSocket; resolves on open, rejects on error. */
function open(url: string, opts: WebSocket.ClientOptions = {}): Promise<void> {
  const ws = new WebSocket(url, opts);
  sockets.push(ws);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
}

describe('rampConnect', () => {
  it('starts client i at i/perSec and books every connect', async () => {
    const s = await wsServer(0);
    closers.push(s.close);
    const t0 = Date.now();
    const book = await rampConnect({ count: 5, perSec: 40, connect: () => open(s.url) });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(95); // 4 gaps of 25 ms
    expect(book.summary()).toEqual({ connectedClients: 5, connectFailures: 0, connectFailureCauses: {}, lateConnects: 0 });
  });

  it('counts a connect past its timeout as failed, then as a late connect when it lands', async () => {
    const s = await wsServer(300);
    closers.push(s.close);
    const book = await rampConnect({ count: 2, perSec: 1000, timeoutMs: 100, connect: (i) => open(i === 1 ? `${s.url}/slow` : s.url) });
    expect(book.summary()).toEqual({ connectedClients: 1, connectFailures: 1, connectFailureCauses: { target: 1 }, lateConnects: 0 });
    await new Promise((r) => setTimeout(r, 400));
    expect(book.summary()).toEqual({ connectedClients: 2, connectFailures: 0, connectFailureCauses: {}, lateConnects: 1 });
  });

  it("tells the runner's own limit (no such source address: port exhaustion's code) from the target's refusal", async () => {
    const s = await wsServer(0);
    const url = s.url;
    await s.close(); // nothing listens there any more: refused
    const book = await rampConnect({ count: 2, perSec: 1000, connect: (i) => open(url, i === 0 ? { localAddress: '10.255.255.1' } : {}) });
    expect(book.summary().connectFailureCauses).toEqual({ port_exhaustion: 1, target: 1 });
  });

  it('stops starting connects on abort and returns at once', async () => {
    const s = await wsServer(0);
    closers.push(s.close);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 120);
    const t0 = Date.now();
    const book = await rampConnect({ count: 20, perSec: 10, connect: () => open(s.url), signal: ac.signal });
    expect(Date.now() - t0).toBeLessThan(600);
    expect(s.begun()).toBeLessThanOrEqual(3);
    expect(book.connectedCount).toBeLessThanOrEqual(3);
  });
});

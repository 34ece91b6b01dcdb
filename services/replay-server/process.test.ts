import { afterEach, describe, expect, it } from 'vitest';
import { startService, type ServiceHandle } from '../common/spawn.ts';
import { waitUntil } from '../../lib/time.ts';
import { pubsubId, RawClient, sleepMs, type Frame } from './testing.ts';

/** The real entry point as a child process: --workers via node:cluster, and SIGTERM. */

const handles: ServiceHandle[] = [];
afterEach(async () => {
  for (const h of handles.splice(0)) await h.kill();
});

async function open(port: number, query = ''): Promise<{ c: RawClient; pid: string; welcome: Frame }> {
  const c = new RawClient(`ws://127.0.0.1:${port}/cable${query}`);
  const pid = new Promise<string>((r) => c.ws.once('upgrade', (res) => r(String(res.headers['x-rebound-pid']))));
  await c.opened;
  const [welcome] = await c.take(1);
  return { c, pid: await pid, welcome: welcome! };
}

/**
 * `n` clients with both workers among them. node:cluster deals connections round-robin; with
 * --transport uws the kernel spreads them by a hash (SO_REUSEPORT), so a few more may be opened
 * (and the extras closed) until both workers hold one.
 */
async function openOnBoth(port: number, n: number, query = ''): Promise<Array<Awaited<ReturnType<typeof open>>>> {
  const got = await Promise.all(Array.from({ length: n }, () => open(port, query)));
  for (let i = 0; i < 40 && new Set(got.map((x) => x.pid)).size < 2; i++) {
    const x = await open(port, query);
    if (x.pid === got[0]!.pid) {
      x.c.close();
      continue;
    }
    got.shift()!.c.close();
    got.push(x);
  }
  return got;
}

describe('--workers 2 (node:cluster)', () => {
  it('clients on different workers see one offset sequence, one epoch, and sessions restore across workers', async () => {
    const h = await startService('replay', { args: ['--workers', '2'] });
    handles.push(h);
    const clients = await openOnBoth(h.port, 6);
    const pids = new Set(clients.map((x) => x.pid));
    expect(pids.size).toBe(2);
    const id = pubsubId('cluster/1');
    for (const x of clients) {
      x.c.send({ command: 'subscribe', identifier: id });
      await x.c.take(1);
    }
    // Six POSTs: round-robin puts them on both workers; the primary still numbers them 1..6.
    for (let i = 1; i <= 6; i++) {
      const r = await fetch(`${h.httpUrl}/_broadcast`, { method: 'POST', body: JSON.stringify({ stream: 'cluster/1', data: JSON.stringify({ i }) }) });
      expect(r.status).toBe(201);
    }
    const seen = await Promise.all(clients.map((x) => x.c.take(6)));
    const epoch = seen[0]![0]!.epoch;
    for (const frames of seen) {
      expect(frames.map((f) => f.offset)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(frames.every((f) => f.epoch === epoch)).toBe(true);
      expect(frames.map((f) => (f.message as { i: number }).i)).toEqual([1, 2, 3, 4, 5, 6]);
    }
    // History is shared too: any worker serves the backlog.
    const late = await open(h.port);
    late.c.send({ command: 'subscribe', identifier: id, history: { streams: { 'cluster/1': { epoch, offset: 3 } } } });
    expect((await late.c.take(5)).map((f) => f.offset ?? f.type)).toEqual(['confirm_subscription', 4, 5, 6, 'confirm_history']);
    // Session committed by one worker restores on whichever worker takes the reconnect.
    const a = clients[0]!;
    a.c.close();
    await sleepMs(100);
    const restored = await openOnBoth(h.port, 2, `?sid=${a.welcome.sid}`);
    expect(new Set(restored.map((x) => x.pid)).size).toBe(2);
    for (const r of restored) expect(r.welcome).toMatchObject({ restored: true, restored_ids: [id] });
    for (const x of [...clients, late, ...restored]) x.c.close();
  });
});

describe('--workers 2 /metrics', () => {
  it('reports the whole cluster (every worker), whichever worker answers', async () => {
    const h = await startService('replay', { args: ['--workers', '2'] });
    handles.push(h);
    const clients = await openOnBoth(h.port, 6);
    expect(new Set(clients.map((x) => x.pid)).size).toBe(2);
    for (const x of clients) {
      x.c.send({ command: 'subscribe', identifier: pubsubId('m/1') });
      await x.c.take(1);
    }
    type Metrics = { connections: number; cluster?: { workers: number; connections: number; subscriptions: number; perWorker: { pid: number; connections: number }[] } };
    let m: Metrics | undefined;
    // Workers report every second; poll until both reports include the new clients.
    for (let i = 0; i < 40 && !(m?.cluster?.connections === 6 && m.cluster.subscriptions === 6); i++) {
      m = (await (await fetch(`${h.httpUrl}/metrics`)).json()) as Metrics;
      await sleepMs(250);
    }
    expect(m?.cluster).toMatchObject({ workers: 2, connections: 6, subscriptions: 6 });
    expect(m!.cluster!.perWorker).toHaveLength(2);
    expect(m!.cluster!.perWorker.reduce((n, w) => n + w.connections, 0)).toBe(6);
    // The answering worker's own share is part of the total, not the total.
    expect(m!.connections).toBeLessThan(6);
    for (const x of clients) x.c.close();
  });
});

describe('SIGTERM', () => {
  it.each([
    ['single process', []],
    ['--workers 2', ['--workers', '2']],
  ])('%s: every client gets server_restart and the process exits promptly', async (_name, args) => {
    const h = await startService('replay', { args });
    handles.push(h);
    const clients = await Promise.all(Array.from({ length: 200 }, () => open(h.port)));
    for (const x of clients) x.c.send({ command: 'subscribe', identifier: pubsubId('bye') });
    await Promise.all(clients.map((x) => x.c.take(1)));
    const exitCode = new Promise<number | null>((r) => h.child.once('exit', (code) => r(code)));
    const tookMs = await h.stop(10_000);
    expect(tookMs).toBeLessThan(5000);
    expect(await exitCode).toBe(0);
    await waitUntil(() => clients.every((x) => x.c.closed !== undefined), 3000, 'all closed');
    for (const x of clients) expect(x.c.raw.at(-1)).toBe('{"type":"disconnect","reason":"server_restart","reconnect":true}');
  });
});

import { createCable, type Cable } from '@anycable/core';
import { Agent, request } from 'node:http';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../lib/time.ts';
import { childPids, isAlive } from '../common/process-info.ts';
import { startService, type ServiceHandle } from '../common/spawn.ts';
import { postFresh } from '../common/test-clients.ts';
import { acceptQueueMigration } from '../uws/server.ts';
import { pubsubId, RawClient, sleepMs, testTransport, type Frame } from './testing.ts';

/**
 * The real entry point with --workers: the primary survives workers dying before they listen
 * (issue 8, item 5), and the rolling reload (SIGUSR2, POST /_admin/reload) loses and repeats
 * nothing for clients that restore on another worker.
 */

const handles: ServiceHandle[] = [];
const cables: Cable[] = [];
const raws: RawClient[] = [];
const resuming: ResumingClient[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) a.destroy();
  for (const r of resuming.splice(0)) r.stop();
  for (const c of cables.splice(0)) c.disconnect();
  for (const c of raws.splice(0)) c.close();
  for (const h of handles.splice(0)) await h.kill();
});

type ClusterMetrics = { cluster?: { workers: number; spawnFailures?: number; respawns?: number; reloads?: number; perWorker: { pid: number }[] } };
const metrics = async (h: ServiceHandle) => (await (await fetch(`${h.httpUrl}/metrics`)).json()) as ClusterMetrics;

describe('--workers: respawn (item 5)', () => {
  it('a replacement that dies before it listens does not take the primary down; it retries with back-off and reports it', async () => {
    const h = await startService('replay', { args: ['--workers', '2'] });
    handles.push(h);
    const first = childPids(h.pid);
    expect(first).toHaveLength(2);
    process.kill(first[0]!, 'SIGKILL');
    let fresh: number | undefined;
    const t0 = Date.now();
    while (!fresh && Date.now() - t0 < 5000) {
      fresh = childPids(h.pid).find((p) => !first.includes(p));
      if (!fresh) await sleepMs(5);
    }
    expect(fresh).toBeDefined();
    process.kill(fresh!, 'SIGKILL'); // long before a tsx worker can listen
    await sleepMs(300);
    expect(isAlive(h.pid)).toBe(true);
    let m: ClusterMetrics | undefined;
    for (let i = 0; i < 60 && !(m?.cluster?.workers === 2 && (m.cluster.spawnFailures ?? 0) >= 1); i++) {
      m = await metrics(h).catch(() => undefined);
      await sleepMs(250);
    }
    expect(m?.cluster).toMatchObject({ workers: 2, spawnFailures: 1 });
    expect(m!.cluster!.respawns).toBeGreaterThanOrEqual(2);
    expect((m!.cluster as { lastSpawnError?: string }).lastSpawnError).toMatch(/exited before listening/);
    expect(isAlive(h.pid)).toBe(true);
  });
});

/**
 * A raw client that behaves like a careful app: on `disconnect` it reconnects with its sid and
 * asks for history from the last offset it saw. Records every data frame's offset.
 */
class ResumingClient {
  offsets: number[] = [];
  epoch: string | undefined;
  restarts = 0;
  private c!: RawClient;
  private sid = '';
  private stopped = false;
  private reconnecting = false;

  constructor(
    private readonly port: number,
    private readonly stream: string,
  ) {
    resuming.push(this);
  }

  async start(): Promise<void> {
    await this.connect('');
    this.c.send({ command: 'subscribe', identifier: pubsubId(this.stream) });
    await this.c.waitFor((f) => f.type === 'confirm_subscription');
  }

  private async connect(query: string): Promise<void> {
    const c = new RawClient(`ws://127.0.0.1:${this.port}/cable${query}`);
    raws.push(c);
    this.c = c;
    c.ws.on('message', (d) => this.onFrame(JSON.parse(d.toString()) as Frame));
    c.ws.on('close', () => {
      if (!this.stopped && !this.reconnecting && c === this.c) void this.reconnect();
    });
    await c.opened;
  }

  private onFrame(f: Frame): void {
    if (f.type === 'welcome') {
      this.sid = f.sid as string;
      if (f.restored && this.epoch) {
        this.c.send({ command: 'history', identifier: pubsubId(this.stream), history: { streams: { [this.stream]: { epoch: this.epoch, offset: this.offsets.at(-1) ?? 0 } } } });
      }
    } else if (f.type === 'disconnect') this.restarts++;
    else if (typeof f.offset === 'number') {
      this.epoch = f.epoch as string;
      this.offsets.push(f.offset);
    }
  }

  private async reconnect(): Promise<void> {
    this.reconnecting = true;
    try {
      for (let i = 0; i < 50 && !this.stopped; i++) {
        try {
          await this.connect(`?sid=${this.sid}`);
          return;
        } catch {
          await sleepMs(100);
        }
      }
    } finally {
      this.reconnecting = false;
    }
  }

  stop(): void {
    this.stopped = true;
    this.c.close();
  }
}

function officialClient(port: number, stream: string) {
  const cable = createCable(`ws://127.0.0.1:${port}/cable`, {
    protocol: 'actioncable-v1-ext-json',
    websocketImplementation: WebSocket,
    reconnectStrategy: () => 50,
    logLevel: 'error',
  });
  cables.push(cable);
  const seqs: number[] = [];
  const ch = cable.streamFrom(stream);
  ch.on('message', (msg) => seqs.push((msg as { seq: number }).seq));
  return { cable, seqs, ready: ch.ensureSubscribed() };
}

/**
 * Under the uws transport a worker that stops closes its SO_REUSEPORT listener, and Linux resets
 * the connections still queued on it unless net.ipv4.tcp_migrate_req is 1 (docs/replay-server.md,
 * rolling reload): there, and only there, a publish whose connection is reset before any answer
 * was never read by a server and is sent again. Anywhere else a reset fails the test.
 */
const resetsExpected = testTransport() === 'uws' && acceptQueueMigration() !== 'on';

const isReset = (err: unknown) => (err as { code?: string }).code === 'ECONNRESET';

/** Publish seq 1.. one by one until `until()` holds, then `extra` more; returns the last seq and the connections reset. */
async function publishWhile(h: ServiceHandle, stream: string, until: () => boolean, extra = 10): Promise<{ last: number; resets: number }> {
  let seq = 0;
  let after = -1;
  let resets = 0;
  while (seq < 2000 && after < extra) {
    seq++;
    const body = JSON.stringify({ stream, data: JSON.stringify({ seq }) });
    let status: number | undefined;
    for (let tries = 0; status === undefined; tries++) {
      status = await postFresh(h.port, '/_broadcast', body).catch((err: unknown) => {
        if (!resetsExpected || !isReset(err) || tries >= 5) throw err;
        resets++;
        return undefined;
      });
    }
    expect(status).toBe(201);
    if (after >= 0) after++;
    else if (until()) after = 0;
    await sleepMs(5);
  }
  return { last: seq, resets };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('--workers: rolling reload', () => {
  it('POST /_admin/reload replaces every worker one at a time; restoring clients see each message exactly once, in order', async () => {
    const h = await startService('replay', { args: ['--workers', '2'] });
    handles.push(h);
    const before = childPids(h.pid);
    const rawClients = Array.from({ length: 4 }, () => new ResumingClient(h.port, 'roll'));
    for (const r of rawClients) await r.start();
    const official = Array.from({ length: 2 }, () => officialClient(h.port, 'roll'));
    await Promise.all(official.map((o) => o.ready));
    let answer: { status: number; body: { workers: { oldPid: number; newPid: number; startedAt: number; endedAt: number }[] } } | undefined;
    let conflict: { status: number; body: unknown } | undefined;
    const reload = (async () => {
      await sleepMs(100);
      const post = () => fetch(`${h.httpUrl}/_admin/reload`, { method: 'POST' }).then(async (r) => ({ status: r.status, body: (await r.json()) as never }));
      const first = post();
      await sleepMs(50);
      conflict = await post();
      answer = await first;
    })();
    const { last, resets } = await publishWhile(h, 'roll', () => answer !== undefined, 20);
    await reload;
    if (resets > 0) console.log(`rolling reload: ${resets} publish connection(s) reset at a closing listener, sent again (tcp_migrate_req off)`);
    expect(conflict).toMatchObject({ status: 409, body: { statusCode: 409, error: 'Conflict', code: 'RR_ERR_RELOAD_IN_PROGRESS' } });
    expect(answer!.status).toBe(200);
    const ws = answer!.body.workers;
    expect(ws).toHaveLength(2);
    expect(new Set(ws.map((w) => w.oldPid))).toEqual(new Set(before));
    for (const w of ws) {
      expect(before).not.toContain(w.newPid);
      expect(w.endedAt).toBeGreaterThanOrEqual(w.startedAt);
    }
    expect(ws[1]!.startedAt).toBeGreaterThanOrEqual(ws[0]!.endedAt); // one at a time
    await waitUntil(() => rawClients.every((r) => r.offsets.at(-1) === last) && official.every((o) => o.seqs.at(-1) === last), 15_000, 'every client caught up');
    for (const r of rawClients) {
      // Once or twice: a client bounced by the first old worker may reconnect to the second.
      expect(r.restarts).toBeGreaterThanOrEqual(1);
      expect(r.restarts).toBeLessThanOrEqual(2);
      expect(r.offsets).toEqual(range(last));
    }
    for (const o of official) expect(o.seqs).toEqual(range(last));
    // The requesting worker retires after it answered: its clients may catch up elsewhere first.
    await waitUntil(() => childPids(h.pid).every((p) => !before.includes(p)), 5000, 'old workers gone');
    const after = childPids(h.pid);
    expect(after.sort()).toEqual(ws.map((w) => w.newPid).sort());
    for (const r of rawClients) r.stop();
  });

  // uws only: on ws a stopping worker closes its idle keep-alive connections at once (node's
  // server.close), so a client's next request reaches a worker that stays.
  it.runIf(testTransport() === 'uws')('a reload asked of a worker that is stopping is answered (400), not left to its exit: the connection would close unanswered', async () => {
    const h = await startService('replay', { args: ['--workers', '2'] });
    handles.push(h);
    // Keep-alive connections pinned to workers (the kernel or the primary spreads them), each
    // opened with a harmless request that says which worker took it.
    const pinned = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        agents.push(agent);
        const post = (path: string) =>
          new Promise<{ status: number; pid: string; body: string }>((resolve, reject) => {
            const req = request({ host: '127.0.0.1', port: h.port, path, method: 'POST', agent }, (res) => {
              let body = '';
              res.on('data', (d: Buffer) => (body += d.toString()));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, pid: String(res.headers['x-rebound-pid'] ?? ''), body }));
            });
            req.on('error', reject);
            req.end();
          });
        return { post, pid: (await post('/nothing-here')).pid };
      }),
    );
    const answer = await fetch(`${h.httpUrl}/_admin/reload`, { method: 'POST' });
    expect(answer.status).toBe(200);
    // The worker that answered goes last and is told to stop right after its answer.
    const requester = answer.headers.get('x-rebound-pid')!;
    const onRequester = pinned.filter((p) => p.pid === requester);
    expect(onRequester.length).toBeGreaterThan(0);
    const again = await Promise.all(onRequester.map((p) => p.post('/_admin/reload')));
    for (const a of again) {
      expect(a.status).toBe(400);
      expect(JSON.parse(a.body)).toMatchObject({ code: 'RR_ERR_RELOAD_UNAVAILABLE' });
    }
  });

  it('SIGUSR2 to the primary reloads too; the admin route answers only loopback or the broadcast key', async () => {
    const h = await startService('replay', { args: ['--workers', '2', '--broadcast-key', 'k'] });
    handles.push(h);
    const before = childPids(h.pid);
    const denied = await fetch(`${h.httpUrl}/_admin/reload`, { method: 'POST' });
    expect(denied.status).toBe(401);
    expect(await denied.json()).toMatchObject({ code: 'RR_ERR_AUTH_MISSING' });
    process.kill(h.pid, 'SIGUSR2');
    await waitUntil(() => {
      const now = childPids(h.pid);
      return now.length === 2 && now.every((p) => !before.includes(p));
    }, 20_000, 'both workers replaced', 100);
    const ok = await fetch(`${h.httpUrl}/_admin/reload`, { method: 'POST', headers: { authorization: 'Bearer k' } });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { workers: unknown[] }).workers).toHaveLength(2);
  });

  it('publishes on fresh connections across reloads: each is answered 201, or (uws, tcp_migrate_req off) reset before any answer', { timeout: 60_000 }, async () => {
    const h = await startService('replay', { args: ['--workers', '2'] });
    handles.push(h);
    const tally = { answered: 0, resets: 0, other: [] as string[] };
    let stop = false;
    const publisher = async () => {
      while (!stop) {
        await postFresh(h.port, '/_broadcast', JSON.stringify({ stream: 'hammer', data: '{}' })).then(
          (status) => (status === 201 ? tally.answered++ : tally.other.push(`status ${status}`)),
          (err: unknown) => (isReset(err) ? tally.resets++ : tally.other.push(String(err))),
        );
      }
    };
    const publishers = Array.from({ length: 16 }, publisher);
    for (let i = 0; i < 3; i++) expect((await fetch(`${h.httpUrl}/_admin/reload`, { method: 'POST' })).status).toBe(200);
    stop = true;
    await Promise.all(publishers);
    expect(tally.other).toEqual([]);
    expect(tally.answered).toBeGreaterThan(100);
    if (!resetsExpected) expect(tally.resets).toBe(0);
  });

  it('the worker that asked for a reload stops accepting before it answers, and its answer says Connection: close: the next requests reach workers that stay', { timeout: 60_000 }, async () => {
    const h = await startService('replay', { args: ['--workers', '2'] });
    handles.push(h);
    // A new connection per request, and which process answered it.
    const freshPid = () =>
      new Promise<string>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: h.port, path: '/health', agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.headers['x-rebound-pid'] ?? '')));
        });
        req.on('error', reject);
        req.end();
      });
    for (let i = 0; i < 2; i++) {
      // fetch keeps its connection alive unless the answer says otherwise.
      const answer = await fetch(`${h.httpUrl}/_admin/reload`, { method: 'POST' });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('connection')).toBe('close');
      const requester = answer.headers.get('x-rebound-pid');
      const next = await Promise.all(Array.from({ length: 20 }, freshPid));
      expect(next).not.toContain(requester);
    }
  });

  it('a second cluster on a port in use fails to start, saying why; the first keeps serving (uws: its workers would share the port)', { timeout: 60_000 }, async () => {
    const args = ['--workers', '2']; // the transport: REPLAY_TRANSPORT, as every spawned server here
    const first = await startService('replay', { args });
    try {
      const second = startService('replay', { args, port: first.port });
      await expect(second).rejects.toMatchObject({ code: 'RR_ERR_SERVICE_START' });
      await expect(second).rejects.toThrow(`replay: RR_ERR_SERVICE_START: port ${first.port} on 127.0.0.1 is already in use`);
      expect((await fetch(`${first.httpUrl}/health`)).status).toBe(200);
    } finally {
      await first.stop();
    }
  });

  it.runIf(testTransport() === 'uws')('the primary warns at start when the kernel would reset a retiring worker\'s queued connections, and only then', { timeout: 60_000 }, async () => {
    const h = await startService('replay', { args: ['--workers', '2', '--transport', 'uws'] });
    await h.stop(); // the primary stops its workers
    // One pipe keeps the primary's lines in order: once its goodbye arrived, every start-up line had.
    await waitUntil(() => h.stderr().includes('SIGTERM, stopping'), 5000, 'the primary\'s goodbye on stderr');
    const warned = h.stderr().includes('net.ipv4.tcp_migrate_req is not 1');
    expect(warned, h.stderr()).toBe(acceptQueueMigration() !== 'on');
  });
});

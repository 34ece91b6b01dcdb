import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../services/replay-server/testing.ts';
import { idempotencyKey, startPublisher } from './publisher.ts';
import { readPayload } from '../targets/payload.ts';

/**
 * A real HTTP endpoint that refuses chosen messages: 500 for `refuse`, a torn-down socket for
 * `hangUp`, 201 otherwise. It records every seq it saw, in arrival order.
 */
async function refusingServer(refuse: Set<number>, hangUp: Set<number>): Promise<{ url: string; seen: number[]; server: Server }> {
  const seen: number[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const seq = (JSON.parse(JSON.parse(body).data) as { seq: number }).seq;
      seen.push(seq);
      if (hangUp.has(seq)) return req.socket.destroy();
      res.statusCode = refuse.has(seq) ? 500 : 201;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

const servers: { close(): unknown }[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe('publisher', () => {
  it('reports refused and failed messages by cause, per seq, without stopping', async () => {
    const t = await refusingServer(new Set([3, 7]), new Set([5]));
    servers.push(t.server);
    const outcomes: [number, boolean][] = [];
    const unknown: number[] = [];
    const pub = startPublisher({ url: t.url, stream: 's', runId: 'r', messages: 10, intervalMs: 5, onPublished: (seq, ok, _c, _a, u) => void (outcomes.push([seq, ok]), u && unknown.push(seq)) });
    const r = await pub.done;
    expect(r.published).toBe(7);
    expect(r.failed).toBe(3);
    expect(r.failureCauses).toEqual({ 'HTTP 500': 2, ECONNRESET: 1 });
    expect(r.failures).toEqual(['seq 3: HTTP 500', 'seq 5: ECONNRESET (socket hang up)', 'seq 7: HTTP 500']);
    expect(outcomes.filter(([, ok]) => !ok).map(([s]) => s)).toEqual([3, 5, 7]);
    expect(outcomes.filter(([, ok]) => ok).map(([s]) => s)).toEqual([1, 2, 4, 6, 8, 9, 10]);
    expect(t.seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // A 500 is a definite refusal; a connection cut after the request was written may have been stored.
    expect(unknown).toEqual([5]);
  });

  it('a message is of unknown outcome once any attempt may have stored it, even if a retry is refused outright', async () => {
    const tries = new Map<number, number>();
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const seq = (JSON.parse(JSON.parse(body).data) as { seq: number }).seq;
        const n = (tries.get(seq) ?? 0) + 1;
        tries.set(seq, n);
        // seq 2: "may have been stored", then refused; seq 3: refused at once; the rest accepted.
        const text = seq === 2 && n === 1 ? 'broadcast not acknowledged: may have been stored' : seq === 2 || seq === 3 ? 'broadcast not stored' : '';
        res.statusCode = text ? 503 : 201;
        res.end(text);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const failed: [number, boolean | undefined][] = [];
    const r = await startPublisher({ url, stream: 's', runId: 'r', messages: 4, intervalMs: 1, onPublished: (seq, ok, _c, _a, u) => void (ok || failed.push([seq, u])) }).done;
    expect(r).toMatchObject({ published: 2, failed: 2, retried: 1, failureCauses: { 'HTTP 503': 2 } });
    expect(failed).toEqual([[3, false], [2, true]]);
    expect(tries.get(2)).toBe(2);
    expect(tries.get(3)).toBe(1);
  });

  it('names a refused connection by its error code', async () => {
    const t = await refusingServer(new Set(), new Set());
    await new Promise((r) => t.server.close(r)); // nothing listens on that port any more
    const r = await startPublisher({ url: t.url, stream: 's', runId: 'r', messages: 3, intervalMs: 1 }).done;
    expect(r).toMatchObject({ published: 0, failed: 3, failureCauses: { ECONNREFUSED: 3 } });
  });

  it('publishes on a stream named outside Latin-1 (✓, Cyrillic) and on the longest one, to the replay server', async () => {
    const t: TestServer = await startTestServer({});
    servers.push(t);
    const runId = 'r'.repeat(128);
    for (const stream of ['✓', 'комната 1', 'é%#', 'x'.repeat(256), '✓'.repeat(256)]) {
      const r = await startPublisher({ url: t.httpUrl, stream, runId, messages: 3, intervalMs: 1 }).done;
      expect(r, stream.slice(0, 12)).toMatchObject({ published: 3, failed: 0, failureCauses: {} });
    }
  });

  it('idempotency keys are header-safe, bounded, and one per run, stream and seq', () => {
    expect(idempotencyKey('run-1', 'bench-7', 4)).toBe('run-1:bench-7:4');
    expect(idempotencyKey('r', '✓', 1)).toBe('r:%E2%9C%93:1');
    // `%` and `#` are encoded too, so no raw name collides with an encoded or a hashed one.
    expect(idempotencyKey('r', '%E2%9C%93', 1)).toBe('r:%25E2%259C%2593:1');
    expect(idempotencyKey('r', 'a b#', 1)).toBe('r:a%20b%23:1');
    const keys = new Set<string>();
    for (const runId of ['r', 'r'.repeat(128), 'r'.repeat(127) + 's']) {
      for (const stream of ['✓', '✓'.repeat(256), '✓'.repeat(255) + 'x', 'x'.repeat(256)]) {
        for (const seq of [1, 1_000_000]) {
          const k = idempotencyKey(runId, stream, seq);
          expect(k).toMatch(/^[\x21-\x7e]{1,256}$/);
          keys.add(k);
        }
      }
    }
    expect(keys.size).toBe(3 * 4 * 2);
  });

  it('against the replay server: a wrong broadcast key is refused with 401, the right one accepted', async () => {
    const t: TestServer = await startTestServer({ broadcastKey: 'sekret' });
    servers.push(t);
    const wrong = await startPublisher({ url: t.httpUrl, stream: 's', runId: 'r', messages: 4, intervalMs: 1, broadcastKey: 'nope' }).done;
    expect(wrong).toMatchObject({ published: 0, failed: 4, failureCauses: { 'HTTP 401': 4 } });
    const right = await startPublisher({ url: t.httpUrl, stream: 's', runId: 'r', messages: 4, intervalMs: 1, broadcastKey: 'sekret' }).done;
    expect(right).toMatchObject({ published: 4, failed: 0, failureCauses: {} });
  });
});

/** A real endpoint that holds every answer `holdMs` (or forever for `never`) and records how many requests it held at once. */
async function slowServer(holdMs: number, never: Set<number> = new Set()): Promise<{ url: string; peak: () => number; server: Server }> {
  let open = 0;
  let peak = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const seq = (JSON.parse(JSON.parse(body).data) as { seq: number }).seq;
      if (never.has(seq)) return;
      peak = Math.max(peak, ++open);
      setTimeout(() => {
        open--;
        res.statusCode = 201;
        res.end();
      }, holdMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, peak: () => peak, server };
}

describe('publisher concurrency (the pool publisher)', () => {
  it('keeps one request in flight by default and up to `concurrency` with a pool', async () => {
    const serial = await slowServer(60);
    servers.push(serial.server);
    expect(await startPublisher({ url: serial.url, stream: 's', runId: 'r', messages: 6, intervalMs: 1 }).done).toMatchObject({ published: 6, failed: 0 });
    expect(serial.peak()).toBe(1);
    const pool = await slowServer(60);
    servers.push(pool.server);
    expect(await startPublisher({ url: pool.url, stream: 's', runId: 'r', messages: 6, intervalMs: 1, concurrency: 3 }).done).toMatchObject({ published: 6, failed: 0 });
    expect(pool.peak()).toBeGreaterThan(1);
    expect(pool.peak()).toBeLessThanOrEqual(3);
  });

  it('a pool counts refusals and failures by the same causes and samples as the serial publisher', async () => {
    const t = await refusingServer(new Set([3, 7]), new Set([5]));
    servers.push(t.server);
    const outcomes: [number, boolean][] = [];
    const r = await startPublisher({ url: t.url, stream: 's', runId: 'r', messages: 10, intervalMs: 5, concurrency: 4, onPublished: (seq, ok) => outcomes.push([seq, ok]) }).done;
    expect(r).toMatchObject({ published: 7, failed: 3, failureCauses: { 'HTTP 500': 2, ECONNRESET: 1 } });
    expect([...r.failures].sort()).toEqual(['seq 3: HTTP 500', 'seq 5: ECONNRESET (socket hang up)', 'seq 7: HTTP 500']);
    expect(outcomes.filter(([, ok]) => !ok).map(([s]) => s).sort((a, b) => a - b)).toEqual([3, 5, 7]);
  });

  for (const concurrency of [1, 3]) {
    it(`an unanswered request is a TIMEOUT after timeoutMs (concurrency ${concurrency}) and the rest still go out`, async () => {
      const t = await slowServer(0, new Set([2]));
      servers.push(t.server);
      const r = await startPublisher({ url: t.url, stream: 's', runId: 'r', messages: 4, intervalMs: 1, timeoutMs: 150, concurrency }).done;
      expect(r).toMatchObject({ published: 3, failed: 1, failureCauses: { TIMEOUT: 1 }, failures: ['seq 2: TIMEOUT (no answer within 150 ms)'] });
    });
  }

  it('a publisher resuming past its last message publishes nothing', async () => {
    const t = await slowServer(0);
    servers.push(t.server);
    expect(await startPublisher({ url: t.url, stream: 's', runId: 'r', messages: 4, firstSeq: 5, intervalMs: 1 }).done).toMatchObject({ published: 0, failed: 0 });
    expect(t.peak()).toBe(0);
  });
});

describe('readPayload', () => {
  it("keeps this run's payloads and refuses everything else (another run, bad JSON, null, missing fields)", () => {
    expect(readPayload(JSON.stringify({ seq: 3, sentAt: 1000, runId: 'r1', pad: 'xx' }), 'r1')).toEqual({ seq: 3, sentAt: 1000 });
    expect(readPayload(JSON.stringify({ seq: 3, sentAt: 1000, runId: 'r2' }), 'r1')).toBeUndefined();
    expect(readPayload('{not json', 'r1')).toBeUndefined();
    expect(readPayload('null', 'r1')).toBeUndefined();
    expect(readPayload('42', 'r1')).toBeUndefined();
    expect(readPayload(JSON.stringify({ seq: '3', sentAt: 1000, runId: 'r1' }), 'r1')).toBeUndefined();
    // A value the client already parsed is used as is; `data` is not parsed again.
    expect(readPayload({ data: '{not json', value: { seq: 4, sentAt: 1000, runId: 'r1' } }, 'r1')).toEqual({ seq: 4, sentAt: 1000 });
    expect(readPayload({ data: '{}', value: 42 }, 'r1')).toBeUndefined();
    expect(readPayload({ data: JSON.stringify({ seq: 5, sentAt: 1000, runId: 'r1' }) }, 'r1')).toEqual({ seq: 5, sentAt: 1000 });
  });
});

describe("publisher: a target's own publish (engine/targets/publish.ts)", () => {
  it("sends the target's own request (path, method, body) and counts any 2xx as accepted", async () => {
    const got: { method?: string; url?: string; body: string; header?: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        got.push({ method: req.method, url: req.url, body, header: req.headers['x-key'] as string });
        res.statusCode = 200;
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const pub = startPublisher({ url, stream: 'room', runId: 'r', messages: 3, intervalMs: 1, publish: { request: (m, ctx) => ({ url: `${ctx.url}/api/rooms/${m.stream}`, method: 'PUT', headers: { 'x-key': m.idempotencyKey }, body: m.data }) } });
    const r = await pub.done;
    expect(r.published).toBe(3);
    expect(got.map((g) => [g.method, g.url, readPayload(g.body, 'r')?.seq, g.header])).toEqual([1, 2, 3].map((n) => ['PUT', '/api/rooms/room', n, `r:room:${n}`]));
  });

  it('a function publish: resolved is accepted, a rejection fails that message with its code', async () => {
    const seen: number[] = [];
    const pub = startPublisher({ url: 'http://127.0.0.1:1', stream: 's', runId: 'r', messages: 4, intervalMs: 1, publish: { send: async (m) => void (seen.push(m.seq), m.seq === 2 && (() => { throw Object.assign(new Error('quota'), { code: 'QUOTA' }); })()) } });
    const r = await pub.done;
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(r).toMatchObject({ published: 3, failed: 1, failureCauses: { QUOTA: 1 } });
  });

  it('a function publish rejected with mayBeStored books the message failed with an unknown outcome, not retried', async () => {
    const seen: number[] = [];
    const outcomes: Array<[number, boolean, string | undefined, boolean | undefined]> = [];
    const cut = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET', mayBeStored: true });
    const refused = () => Object.assign(new Error('no'), { code: 'NOPE' });
    const pub = startPublisher({
      url: 'http://127.0.0.1:1', stream: 's', runId: 'r', messages: 3, intervalMs: 1,
      publish: { send: async (m) => { seen.push(m.seq); if (m.seq === 2) throw cut(); if (m.seq === 3) throw refused(); } },
      onPublished: (seq, ok, cause, _at, unknown) => outcomes.push([seq, ok, cause, unknown]),
    });
    const r = await pub.done;
    expect(seen).toEqual([1, 2, 3]);
    expect(r).toMatchObject({ published: 1, failed: 2, failureCauses: { ECONNRESET: 1, NOPE: 1 }, retried: 0 });
    expect(outcomes.find((o) => o[0] === 2)).toEqual([2, false, 'ECONNRESET', true]);
    expect(outcomes.find((o) => o[0] === 3)).toEqual([3, false, 'NOPE', false]);
  });

  it("a target's request hook that throws or builds garbage fails its message with the hook's name; the publisher goes on", async () => {
    const t = await refusingServer(new Set(), new Set());
    servers.push(t.server);
    const pub = startPublisher({
      url: t.url, stream: 's', runId: 'r', messages: 4, intervalMs: 1,
      publish: { request: (m, ctx) => {
        if (m.seq === 2) throw new Error('boom');
        if (m.seq === 3) return { url: 'not a url', body: m.data };
        return { url: `${ctx.url}/_broadcast`, body: JSON.stringify({ stream: m.stream, data: m.data }) };
      } },
    });
    const r = await pub.done;
    expect(r.failureCauses).toEqual({ 'publish.request() threw': 1, 'publish.request() built a bad request': 1 });
    expect(r).toMatchObject({ published: 2, failed: 2 });
    expect(r.failures.join('\n')).toContain('boom');
  });
});

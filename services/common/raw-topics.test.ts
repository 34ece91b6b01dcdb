/**
 * The raw-topics protocol contract (services/common/topic-hub.ts), one file for both servers that
 * speak it: the ws server and the uWebSockets.js server, each on a real process (port 0) with
 * real ws clients over loopback: welcome sid, `meta.exclude_socket`, whispers, the bounds shared
 * with the replay server, the too-slow rule and SIGTERM. uws runs where its binary loads
 * (services/uws/load.ts); elsewhere its suites are skipped, saying why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../lib/time.ts';
import { uwsAvailability } from '../uws/load.ts';
import { startService, type ServiceHandle } from './spawn.ts';
import { describeSharedBounds } from './reference-contract.ts';
import { broadcast, metrics, wsClient } from './test-clients.ts';

const uws = uwsAvailability();
if (!uws.available) console.warn(`raw-topics contract: uws suites skipped: ${uws.reason}`);
const SERVERS = [{ name: 'ws' as const, runs: true }, { name: 'uws' as const, runs: uws.available }];

for (const { name, runs } of SERVERS) describe.skipIf(!runs)(`${name} raw-topics protocol`, () => {
let svc: ServiceHandle;
beforeAll(async () => {
  svc = await startService(name, { args: ['--max-buffered-bytes', '65536', '--max-subscriptions', '3', '--max-stream-length', '16'] });
});
afterAll(async () => {
  await svc.stop();
});

describe(`${name} reference server`, () => {
  it('welcomes each socket with its sid; meta.exclude_socket skips that socket only', async () => {
    const [a, b] = await Promise.all([wsClient(svc), wsClient(svc)]);
    expect(a.sid).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.sid).not.toBe(b.sid);
    for (const c of [a, b]) {
      c.send({ type: 'subscribe', stream: 'excl' });
      await c.next('subscribed');
    }
    expect((await broadcast(svc, [{ stream: 'excl', data: '1', meta: { exclude_socket: a.sid } }, { stream: 'excl', data: '2', meta: { exclude_socket: b.sid } }, { stream: 'excl', data: '3' }])).status).toBe(201);
    const data = (c: typeof a) => c.frames.filter((f) => f.stream === 'excl' && f.type === undefined).map((f) => f.data);
    await waitUntil(() => data(a).length >= 2 && data(b).length >= 2, 5000, 'deliveries');
    await new Promise((r) => setTimeout(r, 100));
    expect(data(a)).toEqual(['2', '3']);
    expect(data(b)).toEqual(['1', '3']);
    a.close();
    b.close();
  });

  it('whisper frames reach the topic\'s other subscribers; non-subscribers and bad data are refused', async () => {
    const [a, b, outsider] = await Promise.all([wsClient(svc), wsClient(svc), wsClient(svc)]);
    for (const c of [a, b]) {
      c.send({ type: 'subscribe', stream: 'w' });
      await c.next('subscribed');
    }
    a.send({ type: 'whisper', stream: 'w', data: '{"from":"a"}' });
    expect(await b.next('whisper')).toEqual({ type: 'whisper', stream: 'w', data: '{"from":"a"}' });
    outsider.send({ type: 'whisper', stream: 'w', data: 'x' });
    expect(await outsider.next('error')).toMatchObject({ reason: 'not_subscribed' });
    a.send({ type: 'whisper', stream: 'w', data: { not: 'a string' } });
    expect(await a.next('error')).toMatchObject({ reason: 'invalid_whisper' });
    expect(a.frames.some((f) => f.type === 'whisper')).toBe(false);
    for (const c of [a, b, outsider]) c.close();
  });

  it('topics per socket and topic-name length are bounded', async () => {
    const c = await wsClient(svc);
    for (const s of ['t1', 't2', 't3']) {
      c.send({ type: 'subscribe', stream: s });
      await c.next('subscribed');
    }
    c.send({ type: 'subscribe', stream: 't4' });
    expect(await c.next('error')).toMatchObject({ reason: 'too_many_subscriptions', stream: 't4' });
    c.send({ type: 'subscribe', stream: 'x'.repeat(17) });
    expect(await c.next('error')).toMatchObject({ reason: 'invalid_stream' });
    c.send({ type: 'subscribe', stream: 't1' });
    expect(await c.next('subscribed')).toMatchObject({ stream: 't1' });
    const m = await metrics(svc);
    expect(m.refusedSubscriptions).toBe(1);
    c.close();
  });

  it('a client that stops reading is dropped as too slow; a reading one gets everything', async () => {
    const before = (await metrics(svc)).tooSlowDisconnects ?? 0;
    const [slow, fast] = await Promise.all([wsClient(svc), wsClient(svc)]);
    for (const c of [slow, fast]) {
      c.send({ type: 'subscribe', stream: 'slow' });
      await c.next('subscribed');
    }
    slow.pause();
    const data = 'z'.repeat(50_000);
    for (let p = 0; p < 20; p++) expect((await broadcast(svc, Array.from({ length: 10 }, () => ({ stream: 'slow', data })))).status).toBe(201);
    const got = () => fast.frames.filter((f) => f.stream === 'slow').length;
    await waitUntil(() => got() >= 200, 10_000, 'fast reader got all 200');
    const m = await metrics(svc);
    expect(m.tooSlowDisconnects! - before).toBe(1);
    expect(m.connections).toBe(1);
    fast.close();
    slow.close();
  });

  it('unknown types, bad JSON and binary frames are answered with errors; the socket stays up', async () => {
    const c = await wsClient(svc);
    c.send('{not json');
    expect(await c.next('error')).toMatchObject({ reason: 'invalid_json' });
    c.send({ type: 'subscribe' });
    expect(await c.next('error')).toMatchObject({ reason: 'invalid_command' });
    c.send({ type: 'nope', stream: 's' });
    expect(await c.next('error')).toMatchObject({ reason: 'unknown_type' });
    c.ws.send(Buffer.from('{"type":"subscribe","stream":"b"}'), { binary: true });
    expect(await c.next('error')).toMatchObject({ reason: 'invalid_json' });
    c.send({ type: 'subscribe', stream: 'u' });
    await c.next('subscribed');
    c.send({ type: 'unsubscribe', stream: 'u' });
    expect(await c.next('unsubscribed')).toMatchObject({ stream: 'u' });
    expect((await broadcast(svc, { stream: 'u', data: 'gone' })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 100));
    expect(c.frames.some((f) => f.data === 'gone')).toBe(false);
    c.close();
  });
});
});

// The stop and too-slow rules shared with the Socket.IO server.
for (const { name, runs } of SERVERS) describe.skipIf(!runs)(`${name} shared bounds`, () => describeSharedBounds(name));

import { describe, expect, it } from 'vitest';
import { waitUntil } from '../../lib/time.ts';
import { pubsubId, sleepMs, type Frame } from './testing.ts';
import { useTestServers } from './test-fixture.ts';

/**
 * Topic fan-out (hub/subscription.ts Group, the uWS transport's topics): a subscription that has
 * caught up gets its stored frames through one publish per group, and everything that reads or
 * moves its position (history, exclusion, slow consumers) first takes it back to one-by-one
 * delivery. On ws there are no topics: the same tests then check the one-by-one path alone.
 */

const { start, open } = useTestServers();
const offsets = (fs: Frame[]) => fs.map((f) => f.offset);
type Client = Awaited<ReturnType<typeof open>>;
/** `n` raw clients subscribed to `stream`, each past its confirmation. */
async function subscribed(url: string, stream: string, n: number): Promise<Client[]> {
  const xs: Client[] = [];
  for (let i = 0; i < n; i++) {
    const x = await open(url);
    x.c.send({ command: 'subscribe', identifier: pubsubId(stream) });
    await x.c.take(1);
    xs.push(x);
  }
  return xs;
}

describe('topic members', () => {
  it('a caught-up subscription is a member; a history request inside what it got reads nothing twice, and live frames go on exactly once', async () => {
    const t = await start();
    const { c, welcome } = await open(t.wsUrl);
    void welcome;
    const id = pubsubId('tp/1');
    c.send({ command: 'subscribe', identifier: id });
    await c.take(1);
    for (let i = 1; i <= 5; i++) await t.broadcast({ stream: 'tp/1', data: String(i) });
    const first = await c.take(5);
    expect(offsets(first)).toEqual([1, 2, 3, 4, 5]);
    const epoch = first[0]!.epoch;
    if (t.srv.transport === 'uws') expect(t.srv.hub.topicSubscriptionCount).toBe(1);
    c.send({ command: 'history', identifier: id, history: { streams: { 'tp/1': { epoch, offset: 2 } } } });
    expect(await c.take(1)).toEqual([{ type: 'confirm_history', identifier: id }]);
    for (let i = 6; i <= 8; i++) await t.broadcast({ stream: 'tp/1', data: String(i) });
    expect(offsets(await c.take(3))).toEqual([6, 7, 8]);
    await sleepMs(100);
    expect(c.drain()).toEqual([]);
    if (t.srv.transport === 'uws') expect(t.srv.hub.topicSubscriptionCount).toBe(1); // back in after the history
  });

  it('every subscription joins after its first frame, though uWS answers a send waiting in its cork buffer as backpressure', async () => {
    const t = await start();
    const clients = [];
    for (let i = 0; i < 200; i++) {
      const { c } = await open(t.wsUrl);
      c.send({ command: 'subscribe', identifier: pubsubId(`tp/j${i % 20}`) });
      clients.push(c);
    }
    for (const c of clients) await c.take(1);
    await t.broadcast(Array.from({ length: 20 }, (_, k) => ({ stream: `tp/j${k}`, data: '1' })));
    for (const c of clients) expect(offsets(await c.take(1))).toEqual([1]);
    expect(t.srv.hub.topicSubscriptionCount).toBe(t.srv.transport === 'uws' ? 200 : 0);
  });

  it('a batch published while members hand over to history: every offset once, in order', async () => {
    const t = await start();
    const [a, b] = (await subscribed(t.wsUrl, 'tp/2', 2)) as [Client, Client];
    const id = pubsubId('tp/2');
    await t.broadcast({ stream: 'tp/2', data: '0' });
    const [f1] = await a.c.take(1);
    await b.c.take(1);
    // a asks for history from 1 while 40 more frames are published in batches
    const sent = (async () => {
      for (let k = 0; k < 4; k++) await t.broadcast(Array.from({ length: 10 }, (_, i) => ({ stream: 'tp/2', data: String(k * 10 + i) })));
    })();
    a.c.send({ command: 'history', identifier: id, history: { streams: { 'tp/2': { epoch: f1!.epoch, offset: 1 } } } });
    await sent;
    const got = await a.c.take(41, 5000);
    const data = got.filter((f) => f.offset !== undefined);
    expect(offsets(data)).toEqual(Array.from({ length: 40 }, (_, i) => i + 2));
    expect(got.filter((f) => f.type === 'confirm_history')).toHaveLength(1);
    expect(offsets(await b.c.take(40, 5000))).toEqual(Array.from({ length: 40 }, (_, i) => i + 2));
  });

  it('exclude_socket on a stored frame skips one member; both go on exactly once', async () => {
    const t = await start();
    const [a, b] = (await subscribed(t.wsUrl, 'tp/3', 2)) as [Client, Client];
    await t.broadcast({ stream: 'tp/3', data: '1' });
    await t.broadcast({ stream: 'tp/3', data: '2', meta: { exclude_socket: a.welcome.sid } });
    for (let i = 3; i <= 6; i++) await t.broadcast({ stream: 'tp/3', data: String(i) });
    expect(offsets(await a.c.take(5))).toEqual([1, 3, 4, 5, 6]);
    expect(offsets(await b.c.take(6))).toEqual([1, 2, 3, 4, 5, 6]);
    await sleepMs(100);
    expect([...a.c.drain(), ...b.c.drain()]).toEqual([]);
    if (t.srv.transport === 'uws') expect(t.srv.hub.topicSubscriptionCount).toBe(2);
  });

  it('a member that stops reading is found by the sweep and cut after slowConsumerMs, its buffer bounded', async () => {
    const t = await start({ maxBufferedBytes: 16 * 1024, slowConsumerMs: 400 });
    const { c } = await open(t.wsUrl);
    c.send({ command: 'subscribe', identifier: pubsubId('tp/4') });
    await c.take(1);
    await t.broadcast({ stream: 'tp/4', data: '"small"' });
    await c.take(1);
    if (t.srv.transport === 'uws') expect(t.srv.hub.topicSubscriptionCount).toBe(1);
    (c.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    // Well over what the kernel's socket buffers take, well under maxQueuedBytes (32 MiB).
    const data = JSON.stringify('s'.repeat(256 * 1024));
    for (let i = 0; i < 40 && t.srv.counters.slowConsumerStalls === 0; i++) {
      await t.broadcast({ stream: 'tp/4', data });
      await sleepMs(20);
    }
    await waitUntil(() => t.srv.counters.disconnects.too_slow === 1, 3000, 'too_slow');
    expect(t.srv.counters.slowConsumerStalls).toBe(1);
    expect(t.srv.counters.queueOverflows).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { Hub, Subscription, type SubscriberConnection } from './index.ts';

/** A connection that records what the hub did to it, in order (the real Hub and Subscription). */
function recorder(sid: string, log: string[]): SubscriberConnection {
  return {
    sid,
    closing: false,
    send: (f) => log.push(`${sid} send ${f.length}`),
    sendFrame: (f) => log.push(`${sid} frame ${/"offset":(\d+)/.exec(f.toString())?.[1] ?? '?'}`),
    overflow: () => log.push(`${sid} overflow`),
    maxHeldFrames: 100,
    cork: () => log.push(`${sid} cork`),
    uncork: () => log.push(`${sid} uncork`),
  };
}

const msg = (stream: string, offset: number) => ({ stream, message: '{"n":1}', epoch: 'e1', offset });

describe('Hub.deliver', () => {
  it("corks a subscriber for a batch that holds several of its stream's messages, so its frames leave in one write", () => {
    const log: string[] = [];
    const hub = new Hub();
    hub.add(new Subscription(recorder('x', log), 'ix', 'hot', false));
    hub.add(new Subscription(recorder('y', log), 'iy', 'cold', false));
    hub.deliver([msg('hot', 1), msg('cold', 1), msg('hot', 2), msg('hot', 3)]);
    // x: corked before its first frame, uncorked once after the batch; y (one message) is never corked.
    expect(log).toEqual(['x cork', 'x frame 1', 'y frame 1', 'x frame 2', 'x frame 3', 'x uncork']);
    expect(hub.deliveries).toBe(4);
  });

  it('leaves single-message streams and single-message batches uncorked', () => {
    const log: string[] = [];
    const hub = new Hub();
    hub.add(new Subscription(recorder('x', log), 'ix', 'a', false));
    hub.add(new Subscription(recorder('y', log), 'iy', 'b', false));
    hub.deliver([msg('a', 1), msg('b', 1)]);
    hub.deliver([msg('a', 2)]);
    expect(log).toEqual(['x frame 1', 'y frame 1', 'x frame 2']);
  });
});

describe('Hub data frames', () => {
  it("carry each message's stream, epoch and offset: a new epoch of a stream (evicted, restarted) is framed with the new epoch, and a transient message has no position", () => {
    const frames: string[] = [];
    const conn: SubscriberConnection = { ...recorder('x', []), sendFrame: (f) => frames.push(f.toString()) };
    const hub = new Hub((payload) => Buffer.from(payload));
    hub.add(new Subscription(conn, '{"channel":"c"}', 'st"1', false));
    hub.deliver([{ stream: 'st"1', message: '{"n":1}', epoch: 'e1', offset: 7 }]);
    hub.deliver([{ stream: 'st"1', message: '"two"', epoch: 'e2', offset: 1 }]);
    hub.deliver([{ stream: 'st"1', message: '3' }]);
    hub.deliver([{ stream: 'st"1', message: '4', epoch: 'e2', offset: 2 }]);
    const id = JSON.stringify('{"channel":"c"}');
    expect(frames).toEqual([
      `{"identifier":${id},"message":{"n":1},"stream_id":"st\\"1","epoch":"e1","offset":7}`,
      `{"identifier":${id},"message":"two","stream_id":"st\\"1","epoch":"e2","offset":1}`,
      `{"identifier":${id},"message":3}`,
      `{"identifier":${id},"message":4,"stream_id":"st\\"1","epoch":"e2","offset":2}`,
    ]);
    for (const f of frames) expect(() => JSON.parse(f)).not.toThrow();
  });
});

describe('Hub.queue (SocketOps.deferFanOut: uWS)', () => {
  it("delivers nothing inside the caller's callback; the batches of one loop iteration go out as one, in order, in a setImmediate", async () => {
    const log: string[] = [];
    const hub = new Hub();
    hub.add(new Subscription(recorder('x', log), 'ix', 'hot', false));
    hub.add(new Subscription(recorder('y', log), 'iy', 'cold', false));
    const first = [msg('hot', 1)];
    hub.queue(first);
    hub.queue([msg('cold', 1), msg('hot', 2)]);
    first.push(msg('hot', 9)); // the caller's array is not kept
    expect(log).toEqual([]);
    await new Promise((r) => setImmediate(r));
    // one batch: x has two messages in it, so its frames leave in one corked write
    expect(log).toEqual(['x cork', 'x frame 1', 'y frame 1', 'x frame 2', 'x uncork']);
    hub.queue([msg('hot', 3)]);
    await new Promise((r) => setImmediate(r));
    expect(log.slice(5)).toEqual(['x frame 3']);
    expect(hub.deliveries).toBe(4);
  });
});

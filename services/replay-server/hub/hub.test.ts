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

/** A topic-capable connection (the uWS transport's shape): joins and leaves are logged in order. */
function member(sid: string, log: string[], ready = () => true): SubscriberConnection {
  // As Connection.topicReady: never inside a batch (its frames wait for the uncork).
  let corks = 0;
  return {
    ...recorder(sid, log),
    cork: () => void (corks++, log.push(`${sid} cork`)),
    uncork: () => void (corks--, log.push(`${sid} uncork`)),
    topicReady: () => corks === 0 && ready(),
    joinTopic: (t) => log.push(`${sid} join ${t}`),
    leaveTopic: (t) => log.push(`${sid} leave ${t}`),
    pingAlong: () => log.push(`${sid} ping along`),
  };
}
/** The transport's topics as the hub sees them: each publish and batch end, in order. */
function topicLog(log: string[]) {
  return {
    publish: (topic: string, f: Buffer) => log.push(`publish ${topic} ${/"offset":(\d+)/.exec(f.toString())?.[1] ?? '-'}`),
    endBatch: () => log.push('end'),
  };
}

/** A hub with topics and one subscription per sid in one group ('i' on stream 's'), all logging to `log`. */
function topicHub(sids: string[], ready?: () => boolean) {
  const log: string[] = [];
  const hub = new Hub((p) => Buffer.from(p), topicLog(log));
  const subs = sids.map((sid) => {
    const sub = new Subscription(member(sid, log, ready), 'i', 's', false);
    hub.add(sub);
    return sub;
  });
  return { hub, log, subs };
}

/** Subscriptions x and y of one group, both members after offset 1; the log starts empty. */
function twoMembers() {
  const t = topicHub(['x', 'y']);
  t.hub.deliver([msg('s', 1)]);
  t.log.length = 0;
  return t;
}

describe('Hub topics (SocketOps.topics: uWS)', () => {
  it('a subscription joins its group topic after a live delivery at the group position; each stored frame is then published once per group, duplicates never', () => {
    const { hub, log } = topicHub(['x', 'y']);
    hub.deliver([msg('s', 1)]);
    hub.deliver([msg('s', 2), msg('s', 2), msg('s', 3)]);
    expect(log).toEqual(['x frame 1', 'x join t1', 'y frame 1', 'y join t1', 'end', 'publish t1 2', 'publish t1 3', 'end']);
    expect(hub.topicSubscriptionCount).toBe(2);
    expect(hub.deliveries).toBe(8);
  });

  it("a member leaving takes the group's position: a history request inside what it got reads nothing twice, and it rejoins at the next frame", () => {
    const { hub, log, subs } = topicHub(['x']);
    const x = subs[0]!;
    hub.deliver([msg('s', 1)]);
    hub.deliver([msg('s', 2), msg('s', 3)]);
    expect(x.startAfter({ epoch: 'e1', offset: 1 })).toEqual({ epoch: 'e1', offset: 3 });
    expect(x.nat).toBe(false);
    expect(x.wouldGap({ stream: 's', message: '1', epoch: 'e1', offset: 1 })).toBe(false);
    hub.deliver([msg('s', 3), msg('s', 4)]);
    // 3 again is a duplicate; x is in a batch (corked) until its end, so it rejoins at the next one
    expect(log.slice(log.indexOf('x leave t1'))).toEqual(['x leave t1', 'x cork', 'x frame 4', 'x uncork', 'end']);
    hub.deliver([msg('s', 5)]);
    expect(log.slice(-3)).toEqual(['x frame 5', 'x join t1', 'end']);
  });

  it('an epoch that changes while subscriptions are members starts their contiguous run at its first published offset', () => {
    const { hub, log, subs } = topicHub(['x']);
    const x = subs[0]!;
    hub.deliver([msg('s', 5)]);
    hub.deliver([{ stream: 's', message: '1', epoch: 'e2', offset: 3 }, { stream: 's', message: '1', epoch: 'e2', offset: 4 }]);
    expect(log).toContain('publish t1 3');
    x.beginHold();
    expect([x.lastEpoch, x.lastOffset, x.floor]).toEqual(['e2', 4, 3]);
    // offsets below 3 of e2 never reached it: a backlog from 2 would be a gap
    expect(x.wouldGap({ stream: 's', message: '1', epoch: 'e2', offset: 2 })).toBe(true);
  });

  it('a stored frame with exclude_socket sends every member back to one-by-one delivery, where the excluded one is skipped', () => {
    const { hub, log } = twoMembers();
    hub.deliver([{ ...msg('s', 2), exclude: 'x' }]);
    // x, first in the loop, rejoins the emptied group at its own position (1: 2 was not for it);
    // y, at 2, stays out until the group is where it is
    expect(log).toEqual(['x leave t1', 'y leave t1', 'x join t1', 'y frame 2', 'end']);
    log.length = 0;
    hub.deliver([msg('s', 3)]);
    expect(log).toEqual(['publish t1 3', 'y frame 3', 'y join t1', 'end']);
  });

  it('a transient frame (whisper) reaches members one by one, sender excluded, and moves no position', () => {
    const { hub, log } = twoMembers();
    hub.deliver([{ stream: 's', message: '"w"', exclude: 'x' }]);
    hub.deliver([msg('s', 2)]);
    expect(log).toEqual(['y frame ?', 'end', 'publish t1 2', 'end']);
  });

  it("a member whose ping is due (Group.pingDue) takes it along with the group's next publish", () => {
    const { hub, log, subs } = topicHub(['x']);
    const x = subs[0]!;
    hub.deliver([msg('s', 1)]);
    (x.group!.pingDue ??= new Set()).add(x);
    log.length = 0;
    hub.deliver([msg('s', 2), msg('s', 3)]);
    expect(log).toEqual(['publish t1 2', 'x ping along', 'publish t1 3', 'end']);
  });

  it('a connection that is not ready (outbox, batch, pressure) never joins', () => {
    const { hub, log } = topicHub(['x'], () => false);
    hub.deliver([msg('s', 1)]);
    hub.deliver([msg('s', 2)]);
    expect(log).toEqual(['x frame 1', 'end', 'x frame 2', 'end']);
    expect(hub.topicSubscriptionCount).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { DeliveryLedger } from '../../measure/ledger.ts';
import { deliveredToAll } from './settle.ts';

describe('deliveredToAll: the settle predicate every runner ends its wait on', () => {
  it('an arrival outside the wanted set fills nobody\'s hole: a refused publish that went out anyway does not end the wait while an accepted one is in flight', () => {
    // What ended CI's avalanche settle early: seq 2 was refused (its answer lost as the node died)
    // yet reached every client, seq 3 was accepted and had reached one client of three.
    const l = new DeliveryLedger(3, 3);
    l.accept(1);
    l.accept(3);
    for (const c of [0, 1, 2]) {
      l.record(c, 1);
      l.record(c, 2);
    }
    l.record(0, 3);
    const done = deliveredToAll(l, () => true);
    // A count of arrivals (7) already reached clients × accepted (6) here.
    expect(done()).toBe(false);
    l.record(1, 3);
    expect(done()).toBe(false);
    l.record(2, 3);
    expect(done()).toBe(true);
  });

  it('waits only for the clients named, each for what is wanted of it (a publisher per node)', () => {
    const l = new DeliveryLedger(3, 4);
    const acceptedBy = [new Set([1, 2]), new Set([3, 4])];
    const done = deliveredToAll(l, (c) => c !== 2, (c, seq) => acceptedBy[c % 2]!.has(seq));
    l.record(0, 1);
    l.record(0, 2);
    l.record(1, 3);
    expect(done()).toBe(false);
    l.record(1, 4);
    // Client 2 got nothing and is not waited for.
    expect(done()).toBe(true);
  });

  it('a hole below later arrivals holds the wait until it is filled (a replay landing after live frames)', () => {
    const l = new DeliveryLedger(1, 5);
    l.acceptAll();
    for (const seq of [1, 2, 4, 5]) l.record(0, seq);
    const done = deliveredToAll(l, () => true);
    expect(done()).toBe(false);
    expect(done()).toBe(false);
    l.record(0, 3);
    expect(done()).toBe(true);
  });

  it('nothing accepted: nothing to wait for', () => {
    const l = new DeliveryLedger(2, 3);
    expect(deliveredToAll(l, () => true)()).toBe(true);
  });
});

describe('DeliveryLedger.firstMissing', () => {
  it('the first accepted seq a client lacks from a position on; messages + 1 when none, or for a client out of range', () => {
    const l = new DeliveryLedger(2, 5);
    for (const seq of [1, 2, 3, 5]) l.accept(seq);
    l.record(0, 1);
    l.record(0, 3);
    expect(l.firstMissing(0)).toBe(2);
    expect(l.firstMissing(0, 3)).toBe(5);
    // Seq 4 was never accepted: not missing.
    l.record(0, 2);
    l.record(0, 5);
    expect(l.firstMissing(0)).toBe(6);
    expect(l.firstMissing(7)).toBe(6);
    expect(l.firstMissing(1, 1, (_c, seq) => seq === 4)).toBe(4);
  });
});

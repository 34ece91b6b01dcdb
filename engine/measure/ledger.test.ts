import { describe, expect, it } from 'vitest';
import { DeliveryLedger } from './ledger.ts';

describe('DeliveryLedger', () => {
  it('counts loss per client against every expected message', () => {
    const l = new DeliveryLedger(2, 5);
    l.acceptAll();
    for (const s of [1, 2, 3, 4, 5]) l.record(0, s, 1);
    for (const s of [1, 2, 5]) l.record(1, s, 1);
    expect(l.tally(1)).toMatchObject({ received: 3, lost: 2, duplicates: 0, outOfOrder: 0 });
    expect(l.totals()).toMatchObject({ expectedDeliveries: 10, receivedDeliveries: 8, lostDeliveries: 2, perfectClients: 1 });
  });

  it('counts duplicates without counting them as deliveries', () => {
    const l = new DeliveryLedger(1, 3);
    l.acceptAll();
    expect(l.record(0, 1)).toBe('new');
    expect(l.record(0, 1)).toBe('duplicate');
    expect(l.record(0, 1)).toBe('duplicate');
    expect(l.tally(0)).toMatchObject({ received: 1, lost: 2, duplicates: 2 });
  });

  it('counts a first arrival below the highest seen as out of order', () => {
    const l = new DeliveryLedger(1, 5);
    for (const s of [1, 3, 2, 5, 4]) l.record(0, s);
    expect(l.tally(0)).toMatchObject({ received: 5, lost: 0, outOfOrder: 2, duplicates: 0 });
    expect(l.totals().perfectClients).toBe(0);
  });

  it('treats seqs outside 1..M and bad clients as foreign', () => {
    const l = new DeliveryLedger(1, 3);
    expect(l.record(0, 0)).toBe('foreign');
    expect(l.record(0, 4)).toBe('foreign');
    expect(l.record(0, 1.5)).toBe('foreign');
    expect(l.record(7, 1)).toBe('foreign');
    expect(l.tally(0)).toMatchObject({ received: 0, foreign: 3 });
  });

  it('names the worst client', () => {
    const l = new DeliveryLedger(3, 4);
    l.acceptAll();
    for (const c of [0, 1, 2]) for (const s of [1, 2, 3, 4]) if (!(c === 2 && s > 1)) l.record(c, s, c * 10);
    expect(l.worstClient()).toMatchObject({ index: 2, lost: 3 });
  });

  it('expects only the messages the target accepted: a refused message is not the target\'s loss', () => {
    const l = new DeliveryLedger(2, 5);
    for (const s of [1, 2, 4, 5]) l.accept(s); // seq 3 was refused by the target
    for (const s of [1, 2, 4, 5]) l.record(0, s, 1);
    for (const s of [1, 2]) l.record(1, s, 1);
    expect(l.acceptedMessages).toBe(4);
    expect(l.tally(0)).toMatchObject({ received: 4, lost: 0, unaccepted: 0 });
    expect(l.tally(1)).toMatchObject({ received: 2, lost: 2 });
    expect(l.totals()).toMatchObject({ expectedDeliveries: 8, receivedDeliveries: 6, lostDeliveries: 2, unacceptedDeliveries: 0, perfectClients: 1 });
  });

  it('counts deliveries of messages the publisher saw fail, so received can exceed expected', () => {
    const l = new DeliveryLedger(1, 2);
    l.accept(1); // seq 2's request failed (e.g. its answer was lost) but the target broadcast it anyway
    l.record(0, 1, 1);
    l.record(0, 2, 1);
    expect(l.tally(0)).toMatchObject({ received: 2, lost: 0, unaccepted: 1 });
    expect(l.totals()).toMatchObject({ expectedDeliveries: 1, receivedDeliveries: 2, unacceptedDeliveries: 1 });
  });

  it('accept is idempotent and ignores seqs outside 1..M', () => {
    const l = new DeliveryLedger(1, 3);
    l.accept(2);
    l.accept(2);
    l.accept(0);
    l.accept(9);
    expect(l.acceptedMessages).toBe(1);
    expect(l.totals().expectedDeliveries).toBe(1);
  });

  it('survives more than 255 duplicates of one message', () => {
    const l = new DeliveryLedger(1, 1);
    for (let i = 0; i < 300; i++) l.record(0, 1);
    expect(l.tally(0)).toMatchObject({ received: 1, duplicates: 299 });
  });
});

import { describe, expect, it } from 'vitest';
import { EpochBook, mergeEpochReports } from './epoch-book.ts';
import { DeliveryLedger } from './ledger.ts';

/**
 * The BROKER_EPOCH_CHANGED booking rule on hand-made runs: 10 messages, seq k answered at 10·k ms.
 * Epoch A holds 1..6 (5 and 6 stored just before the crash, never delivered), epoch B 7..10.
 */
function run() {
  const ledger = new DeliveryLedger(3, 10);
  const book = new EpochBook(3, 10);
  for (let s = 1; s <= 10; s++) {
    ledger.accept(s);
    book.accepted(s, { attemptSentAt: 10 * s - 5, answeredAt: 10 * s });
  }
  const got = (c: number, seqs: number[], epoch: string, firstOffset: number, firstSeq: number) => {
    for (const s of seqs) {
      ledger.record(c, s);
      book.arrival(c, s, epoch, firstOffset + (s - firstSeq));
    }
  };
  return { ledger, book, got };
}

describe('EpochBook', () => {
  it('no epoch change: nothing booked, every loss stays the target\'s', () => {
    const { ledger, book, got } = run();
    got(0, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'A', 1, 1);
    got(1, [1, 2, 4, 5, 6, 7, 8, 9, 10], 'A', 1, 1);
    const r = book.report(ledger);
    expect(r).toMatchObject({ epochs: ['A'], changes: [], lostDeliveries: 0, plainLostDeliveries: 11, boundary: null });
  });

  it('empty restart: old-epoch messages a client was cut off from are booked; a gap below its position and any new-epoch loss stay plain', () => {
    const { ledger, book, got } = run();
    // Client 0: through the crash, 5 and 6 never reached anyone (Redis lost them).
    got(0, [1, 2, 3, 4], 'A', 1, 1);
    got(0, [7, 8, 9, 10], 'B', 1, 7);
    // Client 1: away from 3 on, its history named A (rejected epoch_changed), then B from offset 1.
    got(1, [1, 2], 'A', 1, 1);
    book.historyRejected('epoch_changed');
    got(1, [7, 8, 9, 10], 'B', 1, 7);
    // Client 2: a gap in A while it was live (2) and a loss in B (9): both the target's.
    got(2, [1, 3, 4], 'A', 1, 1);
    got(2, [7, 8, 10], 'B', 1, 7);
    const r = book.report(ledger);
    expect(r.changes).toEqual([{ from: 'A', to: 'B' }]);
    expect(r.boundary).toEqual({ seq: 7, by: 'new_epoch_first', attemptSentAt: 65 });
    expect(r.oldEpochMessages).toBe(6);
    // 0: 5,6; 1: 3,4,5,6; 2: 5,6.
    expect(r).toMatchObject({ lostDeliveries: 8, lostMessages: 4, affectedClients: 3, historyRejectedEpochChanged: 1 });
    expect(ledger.totals().lostDeliveries).toBe(10);
    expect(r.plainLostDeliveries).toBe(2);
    expect(r.lostAfterBoundaryDeliveries).toBe(1);
  });

  it('a message accepted after the broker came back is never booked, even if nobody got it', () => {
    const { ledger, book, got } = run();
    // Nobody got 7 (new epoch, offset 1): the boundary falls back to the last old-epoch message seen (4).
    for (const c of [0, 1, 2]) {
      got(c, [1, 2, 3, 4], 'A', 1, 1);
      got(c, [8, 9, 10], 'B', 2, 8);
    }
    const r = book.report(ledger);
    expect(r.boundary).toEqual({ seq: 4, by: 'old_epoch_last', attemptSentAt: 35 });
    // 5, 6 and 7 were answered after 4's attempt left: not provably before the restart, so plain.
    expect(r.lostDeliveries).toBe(0);
    expect(r.plainLostDeliveries).toBe(9);
    expect(r.lostAfterBoundaryDeliveries).toBe(9);
  });

  it('only rejections (nothing of a new epoch arrived): old-epoch messages seen are booked, unseen ones stay plain', () => {
    const { ledger, book, got } = run();
    got(0, [1, 2, 3, 4, 5, 6], 'A', 1, 1);
    got(1, [1, 2, 3], 'A', 1, 1);
    got(2, [1, 2, 3, 4, 5, 6], 'A', 1, 1);
    book.historyRejected('epoch_changed');
    book.historyRejected('redis_unavailable');
    const r = book.report(ledger);
    expect(r.changes).toEqual([]);
    expect(r.historyRejectedEpochChanged).toBe(1);
    // Client 1: 4,5,6 (seen in A by others) booked; 7..10 (nobody got them, no boundary) plain, for all three.
    expect(r.lostDeliveries).toBe(3);
    expect(r.plainLostDeliveries).toBe(12);
  });

  it('merges per-worker reports by summing', () => {
    const a = run();
    a.got(0, [1, 2, 3, 4], 'A', 1, 1);
    a.got(0, [7, 8, 9, 10], 'B', 1, 7);
    const r = a.book.report(a.ledger);
    const m = mergeEpochReports([r, null, r])!;
    expect(m.lostDeliveries).toBe(2 * r.lostDeliveries);
    expect(m.changes).toEqual([{ from: 'A', to: 'B' }]);
    expect(mergeEpochReports([null, undefined])).toBeNull();
  });
});

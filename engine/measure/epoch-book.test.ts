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

  it('a history read the broker failed cuts the client off at its position then, though the held-back frames carry it past the hole', () => {
    // The sick-Redis run that caught it: client 1 dropped before 3 came and asked for history from
    // 2 as Redis died; the server answered broker_unavailable and delivered 4, which it had held.
    const twice = (reason: string | undefined) => {
      const { ledger, book, got } = run();
      for (const c of [0, 2]) got(c, [1, 2, 3, 4], 'A', 1, 1);
      got(1, [1, 2], 'A', 1, 1);
      book.historyRejected(reason, 1);
      got(1, [4], 'A', 4, 4);
      for (const c of [0, 1, 2]) got(c, [7, 8, 9, 10], 'B', 1, 7);
      return book.report(ledger);
    };
    const failed = twice('broker_unavailable');
    // 5, 6 for everyone (nobody got them) and 3 for client 1.
    expect(failed).toMatchObject({ lostDeliveries: 7, affectedClients: 3, plainLostDeliveries: 0 });
    // Another reason leaves 3 below client 1's position: a gap while the epoch was live, the target's.
    expect(twice('offset_evicted')).toMatchObject({ lostDeliveries: 6, plainLostDeliveries: 1 });
    // Told without the client (an older caller): nothing to place, the same as before.
    expect(twice(undefined)).toMatchObject({ lostDeliveries: 6, plainLostDeliveries: 1 });
    // Only ended epochs: the same failure in the epoch that goes on books nothing there.
    const { ledger, book, got } = run();
    got(0, [1, 2, 3, 4, 5, 6], 'A', 1, 1);
    got(0, [7, 8], 'B', 1, 7);
    got(1, [1, 2, 3, 4, 5, 6], 'A', 1, 1);
    got(1, [7], 'B', 1, 7);
    book.historyRejected('broker_unavailable', 1);
    got(1, [9, 10], 'B', 3, 9);
    got(0, [9, 10], 'B', 3, 9);
    got(2, [1, 2, 3, 4, 5, 6], 'A', 1, 1);
    got(2, [7, 8, 9, 10], 'B', 1, 7);
    // Client 1's 8 is lost in B, which goes on: the target's.
    expect(book.report(ledger)).toMatchObject({ changes: [{ from: 'A', to: 'B' }], lostDeliveries: 0, plainLostDeliveries: 1 });
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

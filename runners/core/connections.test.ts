import { describe, expect, it } from 'vitest';
import { ConnectionBook } from './connections.ts';
import { DeliveryLedger } from './ledger.ts';

describe('ConnectionBook', () => {
  it('counts a client whose connect timed out and that connected later as connected (a late connect), not failed', () => {
    const b = new ConnectionBook(3);
    b.connected(0);
    b.failed(1, 'target'); // e.g. the 20 s connect timeout fired
    b.failed(2, 'fd_limit');
    b.connected(1); // ...and the library got through afterwards
    expect(b.summary()).toEqual({ connectedClients: 2, connectFailures: 1, connectFailureCauses: { fd_limit: 1 }, lateConnects: 1 });
  });

  it('keeps the delivery rate of connected clients at or below 100% when a late client receives', () => {
    const b = new ConnectionBook(2);
    const l = new DeliveryLedger(2, 4);
    l.acceptAll();
    b.connected(0);
    b.failed(1, 'target');
    b.connected(1);
    for (const c of [0, 1]) for (const s of [1, 2, 3, 4]) l.record(c, s, 1);
    const { connectedClients } = b.summary();
    expect(l.totals().receivedDeliveries / (connectedClients * l.acceptedMessages)).toBe(1);
  });

  it('a client never seen and never failed counts as a target failure; repeated events count once; a failure after connecting is no late connect', () => {
    const b = new ConnectionBook(2);
    b.connected(0);
    b.connected(0);
    b.failed(0, 'target');
    expect(b.connectedCount).toBe(1);
    expect(b.summary()).toEqual({ connectedClients: 1, connectFailures: 1, connectFailureCauses: { target: 1 }, lateConnects: 0 });
  });
});

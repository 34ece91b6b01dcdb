import { describe, expect, it } from 'vitest';
import { ClientTimelines } from './client-timelines.ts';
import { DeliveryLedger } from './ledger.ts';
import { classifyLoss, deliveryPath, historyRejectCause, LOSS_CAUSES, outcomeKey, resumeOutcome, resumeProtocolOf, spanCause, tallyLoss, tallyOutcomes, type ClientTimeline, type OfflineSpan } from './loss-causes.ts';

const w = (sentAt: number, answeredAt = sentAt + 5) => ({ sentAt, answeredAt });
const closed = (downAt: number, upAt: number, extra: Partial<OfflineSpan> = {}): OfflineSpan => ({ downAt, upAt, evidence: { restored: false }, ...extra });

describe('resume outcomes', () => {
  it('at-most-once protocols have nothing to resume, whatever the events say', () => {
    expect(resumeOutcome('none', { restored: true, history: { ok: true } })).toEqual({ kind: 'nothing_to_resume' });
  });
  it('CSR: recovered is a restored session, anything else an expired (or unknown) one', () => {
    expect(resumeOutcome('session', { restored: true })).toEqual({ kind: 'session_restored' });
    expect(resumeOutcome('session', { restored: false })).toEqual({ kind: 'rejected', cause: 'session_expired' });
  });
  it('AnyCable: the history answer decides; without one, the session flag; without both, not attempted', () => {
    expect(resumeOutcome('history', { restored: true, history: { ok: true } })).toEqual({ kind: 'history_filled' });
    expect(resumeOutcome('history', { restored: true, history: { ok: false, reason: 'offset_evicted' } })).toEqual({ kind: 'rejected', cause: 'history_evicted' });
    expect(resumeOutcome('history', { restored: true })).toEqual({ kind: 'session_restored' });
    expect(resumeOutcome('history', { restored: false })).toEqual({ kind: 'not_attempted' });
  });
  it('reject_history reasons map to causes; an unnamed or unknown reason is a plain rejection', () => {
    expect(historyRejectCause('offset_evicted')).toBe('history_evicted');
    expect(historyRejectCause('epoch_changed')).toBe('epoch_changed');
    expect(historyRejectCause('unknown_epoch')).toBe('epoch_changed');
    expect(historyRejectCause('stream_not_found')).toBe('history_rejected');
    expect(historyRejectCause(undefined)).toBe('history_rejected');
  });
  it('keys: rejected carries its cause', () => {
    expect(outcomeKey({ kind: 'rejected', cause: 'too_slow' })).toBe('rejected:too_slow');
    expect(outcomeKey({ kind: 'history_filled' })).toBe('history_filled');
  });
  it('protocol from the target definition', () => {
    expect(resumeProtocolOf({ name: 'ws', replays: false })).toBe('none');
    expect(resumeProtocolOf({ name: 'socketio', replays: false })).toBe('none');
    expect(resumeProtocolOf({ name: 'socketio-csr', replays: true })).toBe('session');
    expect(resumeProtocolOf({ name: 'replay', replays: true })).toBe('history');
    expect(resumeProtocolOf({ name: 'anycable', replays: true })).toBe('history');
  });
});

describe('classifyLoss', () => {
  const opts = { protocol: 'history' as const, inFlightMs: 100 };
  const t: ClientTimeline = { firstUpAt: 1000, spans: [closed(5000, 7000, { reason: 'dropped', evidence: { restored: false, history: { ok: false, reason: 'offset_evicted' } } })] };

  it('a message whose window misses every offline span was lost while connected', () => {
    expect(classifyLoss(t, w(2000), opts)).toBe('lost_while_connected');
    expect(classifyLoss(t, w(7001), opts)).toBe('lost_while_connected');
  });
  it('inside the span, or in flight just before it, the span decides', () => {
    expect(classifyLoss(t, w(6000), opts)).toBe('history_evicted');
    expect(classifyLoss(t, w(4890, 4910), opts)).toBe('history_evicted'); // answered 90 ms before the drop: in flight
    expect(classifyLoss(t, w(4880, 4899), opts)).toBe('lost_while_connected'); // answered 101 ms before
    expect(classifyLoss(t, w(6990, 7010), opts)).toBe('history_evicted'); // sent before it was back
  });
  it('no window: publisher side; before the first subscription: before_first_connect; never connected too', () => {
    expect(classifyLoss(t, undefined, opts)).toBe('publisher_side');
    expect(classifyLoss(t, w(NaN), opts)).toBe('publisher_side');
    expect(classifyLoss(t, w(500, 600), opts)).toBe('before_first_connect');
    expect(classifyLoss({ spans: [] }, w(2000), opts)).toBe('before_first_connect');
  });
  it('still offline at the end: not back by the end', () => {
    expect(classifyLoss({ firstUpAt: 0, spans: [{ downAt: 100, reason: 'dropped' }] }, w(5000), opts)).toBe('not_back_by_end');
  });
  it('the first span the window touches decides', () => {
    const two: ClientTimeline = { firstUpAt: 0, spans: [closed(100, 200, { evidence: { restored: false, history: { ok: false, reason: 'epoch_changed' } } }), closed(300, 400, { evidence: { restored: false, history: { ok: false } } })] };
    expect(classifyLoss(two, w(150), opts)).toBe('epoch_changed');
    expect(classifyLoss(two, w(350), opts)).toBe('history_rejected');
    expect(classifyLoss(two, w(250, 260), { ...opts, inFlightMs: 0 })).toBe('lost_while_connected');
  });
});

describe('spanCause', () => {
  it('a resume that said it filled the gap, yet a message is missing: the resume left a hole', () => {
    expect(spanCause(closed(0, 1, { evidence: { restored: true } }), 'history')).toBe('resume_incomplete');
    expect(spanCause(closed(0, 1, { lastSeq: 3, evidence: { restored: false, history: { ok: true } } }), 'history')).toBe('resume_incomplete');
    expect(spanCause(closed(0, 1, { lastSeq: 3, evidence: { restored: true, history: { ok: true } } }), 'history')).toBe('resume_incomplete');
    expect(spanCause(closed(0, 1, { evidence: { restored: true } }), 'session')).toBe('resume_incomplete');
  });
  it('a history filled for a client that had got no message yet was asked by time (since): no offset, not a hole in the resume', () => {
    expect(spanCause(closed(0, 1, { evidence: { restored: false, history: { ok: true } } }), 'history')).toBe('no_offset');
    expect(spanCause(closed(0, 1, { evidence: { restored: true, history: { ok: true } } }), 'history')).toBe('no_offset');
    // A restore with no history answer keeps its own reading.
    expect(spanCause(closed(0, 1, { evidence: { restored: true } }), 'history')).toBe('resume_incomplete');
  });
  it("the server's reason for cutting the client outranks the failed resume", () => {
    const rejected = { restored: false, history: { ok: false } };
    expect(spanCause(closed(0, 1, { detail: 'too_slow', evidence: rejected }), 'history')).toBe('too_slow');
    expect(spanCause(closed(0, 1, { detail: 'server_restart', evidence: rejected }), 'history')).toBe('server_restarted');
    expect(spanCause(closed(0, 1, { detail: 'too_slow', evidence: { restored: false } }), 'none')).toBe('too_slow');
  });
  it('cut without a word by the server\'s side and back to a new epoch: the server restarted (killed); our own drop across an empty broker restart stays epoch_changed', () => {
    const newEpoch = { restored: false, history: { ok: false, reason: 'unknown_epoch' } };
    expect(spanCause(closed(0, 1, { reason: 'transport_error', evidence: newEpoch }), 'history')).toBe('server_restarted');
    expect(spanCause(closed(0, 1, { reason: 'server_closed', evidence: newEpoch }), 'history')).toBe('server_restarted');
    expect(spanCause(closed(0, 1, { reason: 'dropped', evidence: newEpoch }), 'history')).toBe('epoch_changed');
    expect(spanCause(closed(0, 1, { reason: 'transport_error', evidence: { restored: false, history: { ok: false, reason: 'stream_not_found' } } }), 'history')).toBe('server_restarted');
    expect(spanCause(closed(0, 1, { reason: 'dropped', evidence: { restored: false, history: { ok: false, reason: 'stream_not_found' } } }), 'history')).toBe('history_rejected');
    // Evicted is evicted, however the connection ended.
    expect(spanCause(closed(0, 1, { reason: 'transport_error', evidence: { restored: false, history: { ok: false, reason: 'offset_evicted' } } }), 'history')).toBe('history_evicted');
  });
  it('at-most-once: offline, nothing to resume; CSR not recovered: session expired; AnyCable with nothing asked: no offset', () => {
    expect(spanCause(closed(0, 1), 'none')).toBe('offline_nothing_to_resume');
    expect(spanCause(closed(0, 1), 'session')).toBe('session_expired');
    expect(spanCause(closed(0, 1), 'history')).toBe('no_offset');
    expect(spanCause({ downAt: 0 }, 'none')).toBe('not_back_by_end');
  });
});

describe('tallyLoss / tallyOutcomes', () => {
  it('counts every lost delivery once and balances with the ledger', () => {
    const t: ClientTimeline = { firstUpAt: 0, spans: [closed(1000, 2000)] };
    const loss = tallyLoss({ clients: 2, lostSeqsOf: (c) => (c === 0 ? [1, 2] : [3]), timelineOf: () => t, windowOf: (s) => w(s === 1 ? 1500 : 5000), lostDeliveries: 3, options: { protocol: 'none' } });
    expect(loss).toEqual({ offline_nothing_to_resume: 1, lost_while_connected: 2 });
  });
  it('an override (the epoch book) wins over the timeline, except over the server saying it restarted', () => {
    const t: ClientTimeline = { firstUpAt: 0, spans: [closed(1000, 2000, { detail: 'server_restart' })] };
    const loss = tallyLoss({ clients: 1, lostSeqsOf: () => [1, 2, 3], timelineOf: () => t, windowOf: (s) => w(s === 1 ? 1500 : 5000), lostDeliveries: 3, options: { protocol: 'history' }, overrideOf: (_c, s) => (s === 3 ? undefined : 'epoch_changed') });
    expect(loss).toEqual({ server_restarted: 1, epoch_changed: 1, lost_while_connected: 1 });
  });
  it('throws when the causes would not sum to the ledger', () => {
    expect(() => tallyLoss({ clients: 1, lostSeqsOf: () => [1], timelineOf: () => ({ spans: [] }), windowOf: () => undefined, lostDeliveries: 2, options: { protocol: 'none' } })).toThrow(expect.objectContaining({ code: 'RR_ERR_RUN_FAILED' }));
  });
  it('outcomes of closed spans only', () => {
    const ts: ClientTimeline[] = [{ firstUpAt: 0, spans: [closed(1, 2, { evidence: { restored: true } }), { downAt: 5 }] }, { firstUpAt: 0, spans: [closed(1, 2)] }];
    expect(tallyOutcomes(ts, 'session')).toEqual({ session_restored: 1, 'rejected:session_expired': 1 });
    expect(tallyOutcomes(ts, 'none')).toEqual({ nothing_to_resume: 2 });
  });
  it('the union has no duplicates', () => {
    expect(new Set(LOSS_CAUSES).size).toBe(LOSS_CAUSES.length);
  });
});

describe('deliveryPath', () => {
  const t: ClientTimeline = { firstUpAt: 0, spans: [closed(1000, 2000, { evidence: { restored: false, history: { ok: true } } }), { downAt: 5000 }] };
  it('live outside spans, the resume outcome inside one, still_offline in an open one', () => {
    expect(deliveryPath(t, w(500), { protocol: 'history', inFlightMs: 0 })).toBe('live');
    expect(deliveryPath(t, undefined, { protocol: 'history' })).toBe('live');
    expect(deliveryPath(t, w(1500), { protocol: 'history', inFlightMs: 0 })).toBe('history_filled');
    expect(deliveryPath(t, w(1500), { protocol: 'none', inFlightMs: 0 })).toBe('nothing_to_resume');
    expect(deliveryPath(t, w(6000), { protocol: 'history', inFlightMs: 0 })).toBe('still_offline');
  });
});

describe('ClientTimelines', () => {
  it('late deliveries: above the p99 of live first deliveries, split by path', () => {
    // 1 client, 200 messages: 199 live at 10 ms..., one live straggler at 500 ms, and 10 replayed
    // (sent while offline) at 3 s.
    const tl = new ClientTimelines(1, 210, 'history', 0);
    tl.connected(0, 0, false);
    const ledger = new DeliveryLedger(1, 210);
    ledger.acceptAll();
    for (let s = 1; s <= 200; s++) {
      tl.accepted(s, s * 10, s * 10 + 1);
      ledger.record(0, s, s === 100 ? 500 : 10);
    }
    tl.disconnected(0, 3000, 'dropped');
    for (let s = 201; s <= 210; s++) {
      tl.accepted(s, 3000 + s, 3001 + s);
      ledger.record(0, s, 3000);
    }
    tl.connected(0, 4000, false);
    tl.history(0, true);
    expect(tl.lateReport(ledger)).toEqual({ liveP99Ms: 10, late: 11, byPath: { live: 1, history_filled: 10 } });
    expect(new ClientTimelines(1, 1, 'none').lateReport(new DeliveryLedger(1, 1))).toEqual({ liveP99Ms: null, late: 0, byPath: {} });
  });

  it('records spans from disruption, notice and reconnect, attaches the history answer, and books the ledger', () => {
    const tl = new ClientTimelines(2, 4, 'history', 100);
    tl.connected(0, 0, false);
    tl.connected(1, 0, false);
    tl.history(0, true); // the first subscribe's answer: not a resume
    expect(tl.timeline(0).spans).toEqual([]);
    tl.disrupted(0, 1000);
    tl.disconnected(0, 1200, 'transport_error', 'stale_connection');
    tl.disconnected(0, 1300, 'server_closed'); // already down and noticed
    tl.connected(0, 2000, false);
    tl.history(0, false, 'offset_evicted');
    tl.history(0, true); // only the first answer counts
    tl.disconnected(1, 3000, 'server_closed', 'too_slow'); // never back
    expect(tl.timeline(0).spans).toEqual([{ downAt: 1000, upAt: 2000, reason: 'transport_error', detail: 'stale_connection', evidence: { restored: false, history: { ok: false, reason: 'offset_evicted' } } }]);
    for (const [seq, at] of [[1, 500], [2, 1500], [3, 2500], [4, 3500]] as const) tl.accepted(seq, at, at + 10);
    const ledger = new DeliveryLedger(2, 4);
    ledger.acceptAll();
    ledger.record(0, 4);
    ledger.record(1, 1);
    ledger.record(1, 2);
    tl.arrival(0, 2); // answered while offline: replayed
    tl.arrival(0, 4); // live
    const lost = ledger.totals().lostDeliveries;
    expect(lost).toBe(5);
    expect(tl.report(ledger, lost)).toEqual({
      lossByCause: { lost_while_connected: 3, history_evicted: 1, not_back_by_end: 1 },
      resumeOutcomes: { 'rejected:history_evicted': 1 },
      replayedDeliveries: 1,
      lateDeliveries: expect.objectContaining({ late: expect.any(Number) }),
    });
  });
  it('a server cut with its reason owns what was queued behind the connection\'s last delivery, however late the client heard of it; a hole before that delivery stays lost while connected', () => {
    // Messages every 100 ms from t=100; the client reads 1, 2, 4, 5 (3 is a hole), then stalls; the
    // server cuts it while 6..10 wait in its queue, and the client hears of the cut at 3000 (after
    // reading its backlog), 2 s after 10 was answered: beyond the 1 s in-flight margin.
    const run = (reason: string, detail?: string) => {
      const tl = new ClientTimelines(1, 12, 'history');
      tl.connected(0, 0, false);
      for (let s = 1; s <= 12; s++) tl.accepted(s, s * 100, s * 100 + 10);
      const ledger = new DeliveryLedger(1, 12);
      ledger.acceptAll();
      for (const s of [1, 2, 4, 5]) (ledger.record(0, s), tl.arrival(0, s));
      tl.disconnected(0, 3000, reason, detail);
      tl.connected(0, 3500, false);
      tl.history(0, false, 'offset_evicted');
      for (const s of [11, 12]) (ledger.record(0, s), tl.arrival(0, s)); // sent before the reconnect: in the span
      expect(tl.timeline(0).spans[0]!.lastSeq).toBe(5);
      return tl.report(ledger, ledger.totals().lostDeliveries).lossByCause;
    };
    expect(run('server_closed', 'too_slow')).toEqual({ lost_while_connected: 1, too_slow: 5 });
    expect(run('server_closed', 'server_restart')).toEqual({ lost_while_connected: 1, server_restarted: 5 });
    // Our own drop, or a close without a stated reason: a silent stall stays the target's live loss.
    expect(run('dropped')).toEqual({ lost_while_connected: 6 });
    expect(run('server_closed')).toEqual({ lost_while_connected: 6 });
  });
  it('a history answer read off the wire before the reconnect is announced still belongs to that reconnect', () => {
    const tl = new ClientTimelines(1, 1, 'history');
    tl.connected(0, 0, false);
    tl.disconnected(0, 100, 'dropped');
    tl.history(0, false);
    tl.connected(0, 200, true);
    expect(tl.timeline(0).spans).toEqual([{ downAt: 100, upAt: 200, reason: 'dropped', evidence: { restored: true, history: { ok: false } } }]);
  });
  it('replayed: arriving before the reconnect is announced (Socket.IO recovery hands over the missed packets first) counts; inside a disruption the client has not noticed, it is the old connection: live', () => {
    const tl = new ClientTimelines(2, 2, 'session');
    tl.connected(0, 0, false);
    tl.connected(1, 0, false);
    tl.accepted(1, 140, 150);
    tl.accepted(2, 160, 170);
    tl.disconnected(0, 100, 'dropped');
    tl.arrival(0, 1); // the new connection's backlog, before 'connected'
    tl.connected(0, 300, true);
    tl.disrupted(1, 100); // a latency toxic, say: never noticed
    tl.arrival(1, 2);
    const ledger = new DeliveryLedger(2, 2);
    ledger.acceptAll();
    for (const [c, q] of [[0, 1], [0, 2], [1, 1], [1, 2]] as const) ledger.record(c, q);
    expect(tl.report(ledger, 0).replayedDeliveries).toBe(1);
  });
  it('replayed: answered while the client was down; not yet answered, or at-most-once: live', () => {
    for (const protocol of ['history', 'none'] as const) {
      const tl = new ClientTimelines(1, 3, protocol);
      tl.connected(0, 0, false);
      tl.disconnected(0, 100, 'dropped');
      tl.accepted(1, 90, 150);
      tl.accepted(2, 150, 250);
      tl.connected(0, 200, false);
      tl.arrival(0, 1);
      tl.arrival(0, 2);
      tl.arrival(0, 3);
      const ledger = new DeliveryLedger(1, 3);
      expect(tl.report(ledger, 0).replayedDeliveries).toBe(protocol === 'none' ? 0 : 1);
    }
  });
  it('a disruption before the first subscription opens nothing', () => {
    const tl = new ClientTimelines(1, 1, 'none');
    tl.disrupted(0, 10);
    tl.disconnected(0, 10, 'dropped');
    expect(tl.timeline(0)).toEqual({ spans: [] });
  });
});

import { describe, expect, it } from 'vitest';
import { DeliveryLedger } from './ledger.ts';
import { checkValidity, DELIVERY_RULES, judge, narrowRule, VALIDITY_CODES, type ValidityCode, type ValidityInput, type ValidityRule } from './validity.ts';

/** A clean run: 10 clients, 20 messages, everything accepted, delivered and on time. */
const clean = (): ValidityInput => ({
  clients: 10,
  connectedClients: 10,
  connectFailures: 0,
  connectFailureCauses: {},
  totalMessages: 20,
  published: 20,
  publishFailures: 0,
  publishFailureCauses: {},
  expectedDeliveries: 200,
  receivedDeliveries: 200,
  deliveryRatePct: 100,
  deliveryRateOfConnectedPct: 100,
  skewFloor: 1,
  foreignMessages: 0,
  elapsedMs: 10_000,
  plannedMs: 10_000,
  runner: { runnerPeakRssMb: 100, runnerLoopLagMs: { p50: 0, p99: 5, max: 20 }, runnerStalledWindowsPct: 0 },
});

/** One input per rule that trips it (and only through the fields that rule reads). */
const TRIPS: [ValidityCode, 'fatal' | 'warning', Partial<ValidityInput>][] = [
  ['DELIVERY_OVER_100', 'fatal', { deliveryRatePct: 100.5 }],
  ['DELIVERY_OVER_100', 'fatal', { deliveryRateOfConnectedPct: 111.1111 }],
  ['RECEIVED_OVER_EXPECTED', 'fatal', { receivedDeliveries: 201 }],
  ['NOTHING_CONNECTED', 'fatal', { connectedClients: 0, connectFailures: 10, connectFailureCauses: { target: 10 }, receivedDeliveries: 0, deliveryRatePct: 0, deliveryRateOfConnectedPct: 0 }],
  ['NOTHING_PUBLISHED', 'fatal', { published: 0, publishFailures: 20, publishFailureCauses: { 'HTTP 500': 20 }, expectedDeliveries: 0, receivedDeliveries: 0, deliveryRatePct: 0, deliveryRateOfConnectedPct: 0 }],
  ['PARTIAL_PUBLISH', 'fatal', { published: 19, publishFailures: 1, publishFailureCauses: { 'HTTP 500': 1 }, expectedDeliveries: 190, receivedDeliveries: 190 }],
  ['PARTIAL_PUBLISH', 'warning', { published: 19, publishFailures: 1, publishFailureCauses: { ECONNRESET: 1 }, expectedDeliveries: 190, receivedDeliveries: 190, allowPublishFailures: true }],
  ['PARTIAL_PUBLISH', 'warning', { published: 19, publishFailures: 1, publishFailureCauses: { ECONNREFUSED: 1 }, expectedDeliveries: 190, receivedDeliveries: 190, publishFailuresDuringRestarts: 1 }],
  ['NEGATIVE_SKEW_FLOOR', 'fatal', { skewFloor: -3 }],
  ['OVERRAN_PLAN', 'fatal', { elapsedMs: 15_001 }],
  ['CONNECT_FAILURES', 'warning', { connectedClients: 9, connectFailures: 1, connectFailureCauses: { target: 1 } }],
  ['RUNNER_FD_LIMIT', 'fatal', { connectedClients: 9, connectFailures: 1, connectFailureCauses: { fd_limit: 1 } }],
  ['RUNNER_PORT_EXHAUSTION', 'fatal', { connectedClients: 9, connectFailures: 1, connectFailureCauses: { port_exhaustion: 1 } }],
  ['RUNNER_LOOP_LAG', 'warning', { runner: { runnerPeakRssMb: 100, runnerLoopLagMs: { p50: 2, p99: 51, max: 80 }, runnerStalledWindowsPct: 0 } }],
  ['RUNNER_LOOP_LAG', 'warning', { runner: { runnerPeakRssMb: 100, runnerLoopLagMs: { p50: 0, p99: 5, max: 300 }, runnerStalledWindowsPct: 6 } }],
  ['FOREIGN_MESSAGES', 'warning', { foreignMessages: 1 }],
  ['BROKER_EPOCH_CHANGED', 'warning', { brokerEpoch: { epochs: ['a-1', 'b-1'], changes: [{ from: 'a-1', to: 'b-1' }], historyRejectedEpochChanged: 0, oldEpochMessages: 3, lostDeliveries: 0, lostMessages: 0, affectedClients: 0, plainLostDeliveries: 0, lostAfterBoundaryDeliveries: 0, boundary: null } }],
  ['BROKER_EPOCH_CHANGED', 'warning', { brokerEpoch: { epochs: ['a-1'], changes: [], historyRejectedEpochChanged: 4, oldEpochMessages: 3, lostDeliveries: 12, lostMessages: 3, affectedClients: 4, plainLostDeliveries: 0, lostAfterBoundaryDeliveries: 0, boundary: null } }],
  ['ABORTED', 'fatal', { aborted: true, published: 12, expectedDeliveries: 120, receivedDeliveries: 120 }],
  ['NO_DISRUPTIONS', 'fatal', { disruptionWindow: { planned: 0, applied: 0, windowMs: 4000 } }],
  ['NO_DISRUPTIONS', 'fatal', { disruptionWindow: { planned: 3, applied: 0, windowMs: 9000 } }],
  ['RESTART_FAILED', 'fatal', { restartFailures: ['restart command failed (exit 3): no such service'] }],
  ['CLIENTS_OFFLINE_AT_END', 'warning', { offlineAtEnd: { clients: 2, lostDeliveries: 16 }, receivedDeliveries: 184, deliveryRatePct: 92, deliveryRateOfConnectedPct: 92 }],
  ['WHISPERS_NOT_SENT', 'warning', { whispersNotSent: 7 }],
  ['UNCONFIRMED_DELIVERED', 'warning', { receivedDeliveries: 210, unconfirmedDeliveries: 10 }],
  ['TARGET_MODULE_FAULT', 'fatal', { targetModule: { file: './my-target.ts', faults: [{ hook: 'connect()', count: 3, sample: 'did not settle within 15000 ms' }] } }],
];

describe('checkValidity', () => {
  it('a clean run has no flags and is valid', () => {
    expect(checkValidity(clean())).toEqual({ valid: true, flags: [] });
  });

  it.each(TRIPS)('%s (%s) fires on an input that trips it', (code, severity, change) => {
    const v = checkValidity({ ...clean(), ...change });
    expect(v.flags.map((f) => [f.code, f.severity])).toContainEqual([code, severity]);
    expect(v.valid).toBe(!v.flags.some((f) => f.severity === 'fatal'));
    if (code !== 'NOTHING_CONNECTED') expect(v.flags).toHaveLength(1); // no client at all is also a connect failure
  });

  it('every rule has a tripping case above', () => {
    expect(new Set(TRIPS.map(([c]) => c))).toEqual(new Set(VALIDITY_CODES));
  });

  it('each code is one rule of the shared list, in the order flags come out', () => {
    expect(DELIVERY_RULES.map((r) => r.code)).toEqual(
      ['DELIVERY_OVER_100', 'RECEIVED_OVER_EXPECTED', 'UNCONFIRMED_DELIVERED', 'TARGET_MODULE_FAULT', 'NOTHING_CONNECTED', 'NOTHING_PUBLISHED', 'PARTIAL_PUBLISH', 'ABORTED', 'NO_DISRUPTIONS', 'RESTART_FAILED', 'CLIENTS_OFFLINE_AT_END', 'WHISPERS_NOT_SENT', 'NEGATIVE_SKEW_FLOOR', 'OVERRAN_PLAN', 'RUNNER_FD_LIMIT', 'RUNNER_PORT_EXHAUSTION', 'CONNECT_FAILURES', 'RUNNER_LOOP_LAG', 'FOREIGN_MESSAGES', 'BROKER_EPOCH_CHANGED'],
    );
    expect(new Set(DELIVERY_RULES.map((r) => r.code))).toEqual(new Set(VALIDITY_CODES));
  });
});

describe('the rule mechanism', () => {
  const rules: ValidityRule<{ n: number; soft?: boolean }, 'BIG' | 'ODD'>[] = [
    { code: 'BIG', severity: (i) => (i.soft ? 'warning' : 'fatal'), check: (i) => (i.n > 10 ? `${i.n} > 10` : undefined) },
    { code: 'ODD', severity: 'warning', check: (i) => (i.n % 2 ? `${i.n} is odd` : undefined) },
  ];

  it('fires each rule whose predicate answers, in rule order, at its level; valid unless one is fatal', () => {
    expect(judge(rules, { n: 4 })).toEqual({ valid: true, flags: [] });
    expect(judge(rules, { n: 13 })).toEqual({ valid: false, flags: [{ code: 'BIG', severity: 'fatal', message: '13 > 10' }, { code: 'ODD', severity: 'warning', message: '13 is odd' }] });
    expect(judge(rules, { n: 13, soft: true }).valid).toBe(true);
  });

  it('a narrowed rule fires only where its extra condition holds too', () => {
    const big = narrowRule(rules[0]!, (i) => i.n !== 13);
    expect(judge([big], { n: 13 }).flags).toEqual([]);
    expect(judge([big], { n: 15 }).flags.map((f) => f.code)).toEqual(['BIG']);
  });
});

describe('shared rules, details', () => {
  it('PARTIAL_PUBLISH names the publisher failures by cause', () => {
    const v = checkValidity({ ...clean(), published: 17, publishFailures: 3, publishFailureCauses: { 'HTTP 500': 2, ECONNRESET: 1 }, expectedDeliveries: 170, receivedDeliveries: 170 });
    expect(v.flags[0]!.message).toMatch(/17 of 20 messages.*HTTP 500 x2, ECONNRESET x1.*--allow-publish-failures/);
  });

  it('an aborted run is not blamed on the target: no PARTIAL_PUBLISH for what the stop left unsent, but a refusal before it still counts', () => {
    const stopped = checkValidity({ ...clean(), aborted: true, published: 12, expectedDeliveries: 120, receivedDeliveries: 120 });
    expect(stopped.flags.map((f) => f.code)).toEqual(['ABORTED']);
    expect(stopped.flags[0]!.message).toMatch(/12 of 20 messages were published, 8 never sent because of the stop/);
    const refused = checkValidity({ ...clean(), aborted: true, published: 12, publishFailures: 1, publishFailureCauses: { 'HTTP 500': 1 }, expectedDeliveries: 120, receivedDeliveries: 120 });
    expect(refused.flags.map((f) => f.code)).toEqual(['PARTIAL_PUBLISH', 'ABORTED']);
  });

  it('NO_DISRUPTIONS and CLIENTS_OFFLINE_AT_END stay quiet when disruptions happened and everyone came back, or the run was aborted', () => {
    expect(checkValidity({ ...clean(), disruptionWindow: { planned: 4, applied: 3, windowMs: 9000 }, offlineAtEnd: { clients: 0, lostDeliveries: 0 } }).flags).toEqual([]);
    expect(checkValidity({ ...clean(), aborted: true, disruptionWindow: { planned: 0, applied: 0, windowMs: 9000 }, offlineAtEnd: { clients: 1, lostDeliveries: 5 } }).flags.map((f) => f.code)).toEqual(['ABORTED']);
  });

  it('RECEIVED_OVER_EXPECTED is reachable from the ledger: the target delivered a message it refused outright', () => {
    const l = new DeliveryLedger(1, 2);
    l.accept(1);
    l.record(0, 1, 1);
    l.record(0, 2, 1);
    const t = l.totals();
    expect(t).toMatchObject({ receivedDeliveries: 2, unacceptedDeliveries: 1, unconfirmedDeliveries: 0, lostDeliveries: 0 });
    const v = checkValidity({ ...clean(), clients: 1, connectedClients: 1, totalMessages: 2, published: 1, publishFailures: 1, publishFailureCauses: { 'HTTP 500': 1 }, allowPublishFailures: true, expectedDeliveries: t.expectedDeliveries, receivedDeliveries: t.receivedDeliveries, unconfirmedDeliveries: t.unconfirmedDeliveries, deliveryRatePct: 200, deliveryRateOfConnectedPct: 200 });
    expect(v.flags.map((f) => f.code)).toEqual(['DELIVERY_OVER_100', 'RECEIVED_OVER_EXPECTED', 'PARTIAL_PUBLISH']);
    expect(v.valid).toBe(false);
  });

  it('a message of unknown publish outcome that arrives is UNCONFIRMED_DELIVERED (a warning), never a count error', () => {
    const l = new DeliveryLedger(2, 3);
    l.accept(1);
    l.unconfirmed(2); // timed out or "may have been stored": then it arrived at one client
    l.accept(2); // a later 201 for the same seq wins
    l.unconfirmed(3);
    l.unconfirmed(3);
    for (const seq of [1, 2, 3]) l.record(0, seq, 1);
    l.record(1, 1, 1);
    const t = l.totals();
    // seq 2 was accepted after all, so client 1 lost it; seq 3 is outside expected.
    expect(t).toMatchObject({ expectedDeliveries: 4, receivedDeliveries: 4, unacceptedDeliveries: 1, unconfirmedDeliveries: 1, lostDeliveries: 1 });
    expect([...l.lostSeqsOf(0)]).toEqual([]);
    expect([...l.lostSeqsOf(1)]).toEqual([2]);
    expect(l.isAccepted(3)).toBe(false);
    const v = checkValidity({ ...clean(), clients: 2, connectedClients: 2, totalMessages: 3, published: 2, publishFailures: 1, publishFailureCauses: { TIMEOUT: 1 }, allowPublishFailures: true, expectedDeliveries: t.expectedDeliveries, receivedDeliveries: t.receivedDeliveries, unconfirmedDeliveries: t.unconfirmedDeliveries, deliveryRatePct: 75, deliveryRateOfConnectedPct: 75 });
    expect(v.flags.map((f) => [f.code, f.severity])).toEqual([['UNCONFIRMED_DELIVERED', 'warning'], ['PARTIAL_PUBLISH', 'warning']]);
    expect(v.valid).toBe(true);
  });
});

describe('docs/errors.md', () => {
  it('lists every validity rule', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync('docs/errors.md', 'utf8');
    for (const code of VALIDITY_CODES) expect(doc, code).toContain(`| \`${code}\` |`);
  });
});

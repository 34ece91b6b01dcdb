import type { EpochReport } from './epoch-book.ts';
import type { RunFields } from '../session/results.ts';
import type { TargetModuleReport } from '../targets/user-module.ts';

/** Every rule checkValidity applies (docs/errors.md lists them with their meaning). */
export const VALIDITY_CODES = [
  'DELIVERY_OVER_100',
  'RECEIVED_OVER_EXPECTED',
  'NOTHING_CONNECTED',
  'NOTHING_PUBLISHED',
  'PARTIAL_PUBLISH',
  'NEGATIVE_SKEW_FLOOR',
  'OVERRAN_PLAN',
  'CONNECT_FAILURES',
  'RUNNER_FD_LIMIT',
  'RUNNER_PORT_EXHAUSTION',
  'RUNNER_LOOP_LAG',
  'FOREIGN_MESSAGES',
  'BROKER_EPOCH_CHANGED',
  'ABORTED',
  'NO_DISRUPTIONS',
  'RESTART_FAILED',
  'CLIENTS_OFFLINE_AT_END',
  'WHISPERS_NOT_SENT',
  'UNCONFIRMED_DELIVERED',
  'TARGET_MODULE_FAULT',
] as const;
export type ValidityCode = (typeof VALIDITY_CODES)[number];

export interface ValidityFlag {
  code: ValidityCode;
  severity: 'fatal' | 'warning';
  message: string;
}

export interface Validity {
  /** False when any fatal flag is set: the numbers must not be quoted. */
  valid: boolean;
  flags: ValidityFlag[];
}

/**
 * What validity needs from a delivery result; every runner's result satisfies it. The fields a
 * publish-and-listen result declares alike come from RunFields (engine/session/results.ts), with their meaning.
 */
export interface ValidityInput
  extends Pick<RunFields, 'clients' | 'connectedClients' | 'connectFailures' | 'totalMessages' | 'published' | 'publishFailures' | 'expectedDeliveries' | 'receivedDeliveries' | 'deliveryRatePct' | 'skewFloor' | 'foreignMessages' | 'elapsedMs' | 'plannedMs' | 'runner'> {
  connectFailureCauses?: Record<string, number>;
  /** `publishFailures` by cause (publisher.ts `failureCauses`). */
  publishFailureCauses: Record<string, number>;
  /** The run is about publisher faults: partial publishing is expected, a warning instead of fatal. */
  allowPublishFailures?: boolean;
  /** The part of `receivedDeliveries` whose publish outcome was unknown (ledger.ts `unconfirmed`): stored by the target, outside expected. */
  unconfirmedDeliveries?: number;
  /** received / (connectedClients × accepted), %. */
  deliveryRateOfConnectedPct: number;
  /** Loss to a broker that came back empty (epoch-book.ts); absent or null for targets without epochs. */
  brokerEpoch?: EpochReport | null;
  /** The run was stopped before its end (abort signal: a runner shutting down, SIGTERM/SIGINT at the CLI). */
  aborted?: boolean;
  /**
   * Resilience runs (jitter, chaos plans) that asked for disruptions: how many the schedule put
   * inside the publishing window, and how many of those were applied. Absent when none was asked for.
   */
  disruptionWindow?: { planned: number; applied: number; windowMs: number };
  /** Clients once connected that were still offline when the settle ended, and the accepted messages they missed. */
  offlineAtEnd?: { clients: number; lostDeliveries: number };
  /** Whispers: those due while their sender was offline, never sent. */
  whispersNotSent?: number;
  /** A user's target file (engine/targets/user-module.ts) and its hooks' faults during the run. */
  targetModule?: TargetModuleReport;
  /** The run's own restarts of its target (weather `deploy`) that failed, each its reason. */
  restartFailures?: string[];
  /** Of `publishFailures`, those answered while the run itself had its target down (weather `deploy`): a deploy's, not the target's. */
  publishFailuresDuringRestarts?: number;
}

const causes = (c: Record<string, number>) =>
  Object.entries(c)
    .map(([k, n]) => `${k} x${n}`)
    .join(', ') || 'no cause recorded';

/** Runner event-loop lag above this (p99, ms) distorts measured latency. */
export const LOOP_LAG_WARN_MS = 50;

/** Each rule is one code at one level; a rule's level may depend on the input (PARTIAL_PUBLISH). */
export type Severity = 'fatal' | 'warning';

/**
 * One validity rule: its code, its level and a predicate that returns the flag's message when the
 * rule fires (undefined when it does not). Every rule set (the shared delivery rules below, a
 * runner's own, the fleet's) is a list of these, judged by `judge`: one mechanism, one place
 * where flags are made and `valid` is decided.
 */
export interface ValidityRule<I, C extends string = string> {
  code: C;
  severity: Severity | ((input: I) => Severity);
  check: (input: I) => string | undefined;
}

/** The flags of every rule that fires, in rule order. */
export function fireRules<I, C extends string>(rules: readonly ValidityRule<I, C>[], input: I): { code: C; severity: Severity; message: string }[] {
  return rules.flatMap((r) => {
    const message = r.check(input);
    return message === undefined ? [] : [{ code: r.code, severity: typeof r.severity === 'function' ? r.severity(input) : r.severity, message }];
  });
}

/** The verdict over flags: valid unless one is fatal (the numbers must not be quoted then). */
export const verdict = <F extends { severity: Severity }>(flags: F[]): { valid: boolean; flags: F[] } => ({ valid: !flags.some((f) => f.severity === 'fatal'), flags });

/** Runs `rules` over `input`: the flags that fire and the verdict. */
export const judge = <I, C extends string>(rules: readonly ValidityRule<I, C>[], input: I) => verdict(fireRules(rules, input));

/** A rule that fires only where `when` holds too (a runner narrowing a shared rule). */
export const narrowRule = <I, C extends string>(rule: ValidityRule<I, C>, when: (input: I) => boolean): ValidityRule<I, C> => ({ ...rule, check: (i) => (when(i) ? rule.check(i) : undefined) });

const unconfirmedOf = (r: ValidityInput) => r.unconfirmedDeliveries ?? 0;
const fdFailures = (r: ValidityInput) => r.connectFailureCauses?.fd_limit ?? 0;
const portFailures = (r: ValidityInput) => r.connectFailureCauses?.port_exhaustion ?? 0;
/** Every publish failure came while the run itself had its target down: the deploy's doing. */
const restartOnly = (r: ValidityInput) => r.publishFailures > 0 && (r.publishFailuresDuringRestarts ?? 0) >= r.publishFailures;
const partialPublish = (r: ValidityInput) => (r.published === 0 ? false : r.aborted ? r.publishFailures > 0 : r.published < r.totalMessages);

/**
 * A user's target file broke the contract at run time: what the run measured is partly the file's
 * doing, not the server's. The coordinator applies it again to the shards' merged `targetModule`.
 */
export const TARGET_MODULE_RULE: ValidityRule<{ targetModule?: TargetModuleReport | undefined }, 'TARGET_MODULE_FAULT'> = {
  code: 'TARGET_MODULE_FAULT',
  severity: 'fatal',
  check: (r) => {
    const f = (r.targetModule?.faults ?? []).filter((x) => x.count > 0);
    return f.length ? `the target module ${r.targetModule!.file} broke the target contract during the run (docs/targets.md): ${f.map((x) => `${x.hook} x${x.count} (first: ${x.sample})`).join('; ')}; the figures describe the target file, not the server` : undefined;
  },
};

/**
 * The shared delivery rules (the benchmark's set, plus the runner's own health). A runner that hit
 * its own limit says so here instead of letting the target take the blame.
 */
export const DELIVERY_RULES: readonly ValidityRule<ValidityInput, ValidityCode>[] = [
  // Both rates divide distinct arrivals by an independent count (accepted messages, clients seen
  // connected): above 100% one of those counts is wrong, so no figure of the run can be trusted.
  { code: 'DELIVERY_OVER_100', severity: 'fatal', check: (r) => (r.deliveryRatePct > 100 || r.deliveryRateOfConnectedPct > 100 ? `delivery rate ${r.deliveryRatePct}% (of connected clients: ${r.deliveryRateOfConnectedPct}%) exceeds 100%: the accepted-message or connected-client count is wrong` : undefined) },
  // A message whose publish outcome was unknown (a broker that died mid-write, a timed-out 201)
  // may arrive: that is the target's stored copy, not a count gone wrong.
  {
    code: 'RECEIVED_OVER_EXPECTED',
    severity: 'fatal',
    check: (r) => {
      const unconfirmed = unconfirmedOf(r);
      return r.receivedDeliveries - unconfirmed > r.expectedDeliveries ? `received ${r.receivedDeliveries}${unconfirmed ? ` (${unconfirmed} of them unconfirmed, left out)` : ''} > expected ${r.expectedDeliveries}: the target delivered messages the publisher counted as not accepted, so expected deliveries are understated` : undefined;
    },
  },
  { code: 'UNCONFIRMED_DELIVERED', severity: 'warning', check: (r) => (unconfirmedOf(r) > 0 ? `${unconfirmedOf(r)} deliveries are of messages whose publish outcome was unknown (timed out, "may have been stored", or cut off after the request was written) and that the target stored anyway: counted in receivedDeliveries and unconfirmedDeliveries, outside expected and the delivery rates, as a failed publish is` : undefined) },
  TARGET_MODULE_RULE,
  { code: 'NOTHING_CONNECTED', severity: 'fatal', check: (r) => (r.connectedClients === 0 ? 'no client connected' : undefined) },
  { code: 'NOTHING_PUBLISHED', severity: 'fatal', check: (r) => (r.published === 0 ? `the target accepted no message${r.publishFailures ? ` (${causes(r.publishFailureCauses)})` : ''}` : undefined) },
  // An aborted run stopped publishing itself: only messages the target refused are the target's.
  {
    code: 'PARTIAL_PUBLISH',
    severity: (r) => (r.allowPublishFailures || restartOnly(r) ? 'warning' : 'fatal'),
    check: (r) => {
      if (!partialPublish(r)) return undefined;
      const msg = `only ${r.published} of ${r.totalMessages} messages were accepted by the target (${causes(r.publishFailureCauses)}); deliveries are counted over the accepted ones`;
      if (restartOnly(r)) return `${msg}; every failure was answered while the run had restarted its target (weather deploy), as a deploy takes a server down`;
      return r.allowPublishFailures ? msg : `${msg}; pass --allow-publish-failures if the run is about publisher faults`;
    },
  },
  {
    code: 'ABORTED',
    severity: 'fatal',
    check: (r) => {
      if (!r.aborted) return undefined;
      const unsent = r.totalMessages - r.published - r.publishFailures;
      return `the run was stopped before its end (the runner was shut down: SIGTERM, SIGINT or its abort signal); ${r.published} of ${r.totalMessages} messages were published${unsent > 0 ? `, ${unsent} never sent because of the stop` : ''}: figures cover the part that ran and say nothing against the target`;
    },
  },
  {
    code: 'NO_DISRUPTIONS',
    severity: 'fatal',
    check: (r) => {
      const d = r.disruptionWindow;
      if (!d || d.applied !== 0 || r.aborted) return undefined;
      return d.planned === 0
        ? `the schedule put no disruption inside the ${d.windowMs} ms publishing window (the first comes 5 s + U(0, jitter) after publishing starts): this is not a resilience result; publish longer (--msgs x --interval) or use a shorter --jitter`
        : `none of the ${d.planned} disruptions planned inside the publishing window could be applied (no client was connected when each came due): this is not a resilience result`;
    },
  },
  // The runner restarted the target (weather deploy) and it did not come back as configured: what
  // follows measures the restart's failure, not the target's resilience.
  { code: 'RESTART_FAILED', severity: 'fatal', check: (r) => (r.restartFailures?.length ? `the run's restart of its target (weather deploy) failed: ${r.restartFailures[0]}; the losses after it are the restart's doing, not the target's` : undefined) },
  {
    code: 'CLIENTS_OFFLINE_AT_END',
    severity: 'warning',
    check: (r) => {
      const o = r.offlineAtEnd;
      return o && o.clients > 0 && !r.aborted ? `${o.clients} clients were still offline when the settle ended (taken down by a disruption or by the server); their ${o.lostDeliveries} missing deliveries are booked as "not back by the end" (lostNotBackByEnd), not as the target's loss while connected: a longer --settle shows whether they come back, and disconnectReasons whether the server told them not to (closed_no_reconnect)` : undefined;
    },
  },
  {
    code: 'WHISPERS_NOT_SENT',
    severity: 'warning',
    check: (r) => (r.whispersNotSent && !r.aborted ? `${r.whispersNotSent} whispers were due while their sender was offline and were never sent, so no peer was owed them: the delivery rate covers what was sent; this count is what the senders' outages cost` : undefined),
  },
  { code: 'NEGATIVE_SKEW_FLOOR', severity: 'fatal', check: (r) => (r.skewFloor < 0 ? `minimum latency ${r.skewFloor} ms is negative: runner and publisher clocks disagree` : undefined) },
  { code: 'OVERRAN_PLAN', severity: 'fatal', check: (r) => (r.elapsedMs > 1.5 * r.plannedMs ? `run took ${r.elapsedMs} ms, more than 1.5x the planned ${r.plannedMs} ms` : undefined) },
  // The runner's own limits first: those failures say nothing about the target.
  { code: 'RUNNER_FD_LIMIT', severity: 'fatal', check: (r) => (fdFailures(r) > 0 ? `${fdFailures(r)} clients could not connect because the runner ran out of file descriptors (EMFILE/ENFILE): the runner's limit, not the target's; spread clients over more runner processes (shards)` : undefined) },
  { code: 'RUNNER_PORT_EXHAUSTION', severity: 'fatal', check: (r) => (portFailures(r) > 0 ? `${portFailures(r)} clients could not connect because the runner ran out of local ports or source addresses (EADDRNOTAVAIL/EADDRINUSE): the runner's limit, not the target's` : undefined) },
  {
    code: 'CONNECT_FAILURES',
    severity: 'warning',
    check: (r) => {
      const targetFailures = r.connectFailures - fdFailures(r) - portFailures(r);
      return r.clients > 0 && targetFailures / r.clients >= 0.01 ? `${targetFailures} of ${r.clients} clients (${((targetFailures / r.clients) * 100).toFixed(1)}%) failed to connect` : undefined;
    },
  },
  { code: 'RUNNER_LOOP_LAG', severity: 'warning', check: (r) => (r.runner.runnerLoopLagMs.p99 > LOOP_LAG_WARN_MS || r.runner.runnerStalledWindowsPct > 5 ? `the runner's own event loop lagged (p99 ${r.runner.runnerLoopLagMs.p99} ms, max ${r.runner.runnerLoopLagMs.max} ms, ${r.runner.runnerStalledWindowsPct}% of windows stalled): latency is inflated by the runner, not the target` : undefined) },
  { code: 'FOREIGN_MESSAGES', severity: 'warning', check: (r) => (r.foreignMessages > 0 ? `${r.foreignMessages} arrivals were not this run's payloads` : undefined) },
  // A broker restart that lost its data is the broker's, not the target's: said with its counts,
  // never silently inside lostDeliveries (and never hiding loss after the broker came back).
  {
    code: 'BROKER_EPOCH_CHANGED',
    severity: 'warning',
    check: (r) => {
      const ep = r.brokerEpoch;
      if (!ep || (ep.changes.length === 0 && ep.historyRejectedEpochChanged === 0)) return undefined;
      const seen = ep.changes.length ? ep.changes.map((c) => `${c.from} -> ${c.to}`).join(', ') : `${ep.epochs.join(', ') || 'no epoch'} ended`;
      return `the broker came back empty (epoch ${seen}; ${ep.historyRejectedEpochChanged} history requests rejected epoch_changed): ${ep.lostDeliveries} deliveries of ${ep.lostMessages} messages accepted before it (${ep.affectedClients} clients) are lost with the old epoch and booked here; ${ep.plainLostDeliveries} other deliveries lost are the target's (${ep.lostAfterBoundaryDeliveries} of messages accepted after the broker came back)`;
    },
  },
];

/** The shared delivery rules over one delivery result. */
export const checkValidity = (r: ValidityInput): Validity => judge(DELIVERY_RULES, r);

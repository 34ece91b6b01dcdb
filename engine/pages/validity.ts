import type { ValidityFlag } from '../measure/validity.ts';
import type { BannerFlag, ReportMeta, ReportModel } from './types.ts';

/**
 * Each validity code in plain words: what it means for the reader of the numbers. Codes added
 * later fall back to the runner's own message, so a new rule still shows.
 */
const PLAIN: Record<string, string> = {
  DELIVERY_OVER_100: 'More deliveries were counted than were possible: the counting is wrong, do not use these numbers.',
  RECEIVED_OVER_EXPECTED: 'More deliveries were counted than were expected: the counting is wrong, do not use these numbers.',
  NOTHING_CONNECTED: 'No client could connect, so nothing was measured.',
  NOTHING_PUBLISHED: 'The target accepted none of the published messages, so nothing was measured.',
  PARTIAL_PUBLISH: 'The target refused some published messages: part of the loss is messages that were never sent.',
  NEGATIVE_SKEW_FLOOR: 'Clocks disagree (some messages seem to arrive before they were sent): raw latency is unreliable.',
  OVERRAN_PLAN: 'The run took far longer than planned: the runner or the target was overwhelmed.',
  CONNECT_FAILURES: 'Some clients never connected to the target.',
  RUNNER_FD_LIMIT: 'The runner ran out of file descriptors: those failures are the runner\'s limit, not the target\'s.',
  RUNNER_PORT_EXHAUSTION: 'The runner ran out of local ports or source addresses: those failures are the runner\'s limit, not the target\'s.',
  RUNNER_LOOP_LAG: 'The runner itself was overloaded: latency figures are inflated by the runner, not the target.',
  FOREIGN_MESSAGES: 'Messages that were not this run\'s arrived on the test stream.',
  ABORTED: 'The run was stopped before its end (the runner was shut down): the figures cover only the part that ran, and the missing part is not the target\'s fault.',
  NO_DISRUPTIONS: 'No disruption happened while messages were published: this run says nothing about resilience.',
  RESTART_FAILED: "The target's restart did not happen as configured: what follows measures the failed restart, not the target.",
  CLIENTS_OFFLINE_AT_END: 'Some disrupted clients were still reconnecting when the run ended: their missing messages are counted as "not back by the end", not as messages the target lost.',
  UNCONFIRMED_DELIVERED: 'Some messages whose publish failed with an unknown outcome reached clients anyway: the target stored them; they are counted apart, not as expected deliveries.',
};

/** Any runner's flags (each runner has its own code union; the fleet's too). */
export function bannerFlags(target: string, flags: readonly { code: string; severity: ValidityFlag['severity']; message: string }[]): BannerFlag[] {
  return flags.map((f) => ({ target, severity: f.severity, code: f.code, plain: PLAIN[f.code] ?? f.message, message: f.message }));
}

/**
 * What every report opens with: the command that reproduces the run, its seed, when the page was
 * built, and the runs' validity banner (null where validity does not apply).
 */
export function reportHead(meta: ReportMeta, seed: number | null, flags: BannerFlag[] | null): Pick<ReportModel, 'command' | 'seed' | 'generatedAt' | 'flags'> {
  return { command: meta.command, seed, generatedAt: new Date().toISOString(), flags };
}

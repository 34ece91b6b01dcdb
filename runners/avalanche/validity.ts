import { DELIVERY_RULES, judge, narrowRule, type ValidityCode, type ValidityInput, type ValidityRule } from '../../engine/measure/validity.ts';

/** Rules only a forced restart has; the shared rules come from engine/measure/validity.ts. */
type RestartValidityCode = 'RESTART_FAILED' | 'RESTART_NOT_OBSERVED' | 'RECOVERY_TIMEOUT' | 'PUBLISH_FAILED_OUTSIDE_RESTART' | 'RUNNER_FRONT_FD_LIMIT';

export interface RestartValidityInput extends ValidityInput {
  restart: { ok: boolean; error: string | null; mode: string };
  /** Clients connected at the restart that then disconnected. */
  droppedConnections: number;
  initiallyConnected: number;
  /** Dropped clients not connected again when the wait ended. */
  neverReconnected: number;
  /** The wait for the herd ended at its timeout instead of with every client back. */
  recoveryTimedOut: boolean;
  recoveryTimeoutMs: number;
  /** Publish failures outside the window in which the target was restarting. */
  publishFailuresOutsideRestart: number;
  /** Publish failures inside it (expected: the server was down). */
  publishFailuresDuringRestart: number;
  /** Connections the runner's own TCP front (--front) dropped for lack of file descriptors; absent without a front. */
  frontFdErrors?: number;
}

/**
 * Shared rules plus the restart's own. PARTIAL_PUBLISH is narrowed: while the server restarts the
 * publisher's requests are refused by design, so only failures outside that window are flagged.
 */
export const RESTART_RULES: readonly ValidityRule<RestartValidityInput, ValidityCode | RestartValidityCode>[] = [
  ...DELIVERY_RULES.map((rule) => (rule.code === 'PARTIAL_PUBLISH' ? narrowRule(rule, (r: RestartValidityInput) => r.publishFailuresOutsideRestart !== 0) : rule)),
  {
    code: 'RESTART_FAILED',
    severity: 'fatal',
    check: (r) => (r.restart.ok ? undefined : `the ${r.restart.mode} restart failed: ${r.restart.error ?? 'unknown error'}; the numbers describe a run without the intended restart`),
  },
  {
    code: 'RESTART_NOT_OBSERVED',
    severity: 'warning',
    check: (r) => (r.restart.ok && r.initiallyConnected > 0 && r.droppedConnections === 0 ? `the ${r.restart.mode} restart reported success but none of the ${r.initiallyConnected} connected clients disconnected: check that it restarted this target` : undefined),
  },
  { code: 'RECOVERY_TIMEOUT', severity: 'warning', check: (r) => (r.recoveryTimedOut && r.neverReconnected > 0 ? `${r.neverReconnected} clients were not back when the ${r.recoveryTimeoutMs} ms wait ended: "never reconnected" means "not within the wait"` : undefined) },
  { code: 'PUBLISH_FAILED_OUTSIDE_RESTART', severity: 'warning', check: (r) => (r.publishFailuresOutsideRestart > 0 ? `${r.publishFailuresOutsideRestart} publishes failed outside the restart window (${r.publishFailuresDuringRestart} inside it): the target or the runner was struggling beyond the restart` : undefined) },
  { code: 'RUNNER_FRONT_FD_LIMIT', severity: 'fatal', check: (r) => ((r.frontFdErrors ?? 0) > 0 ? `the runner's TCP front ran out of file descriptors on ${r.frontFdErrors} connections (EMFILE/ENFILE: the runner's limit, not the target's): clients that did not get back may never have reached the target` : undefined) },
];

export const checkRestartValidity = (r: RestartValidityInput) => judge(RESTART_RULES, r);

export type RestartValidity = ReturnType<typeof checkRestartValidity>;

import { checkValidity, type ValidityFlag, type ValidityInput } from '../../engine/measure/validity.ts';

/** Rules only a forced restart has; the shared rules come from engine/measure/validity.ts. */
type RestartValidityCode = 'RESTART_FAILED' | 'RESTART_NOT_OBSERVED' | 'RECOVERY_TIMEOUT' | 'PUBLISH_FAILED_OUTSIDE_RESTART' | 'RUNNER_FRONT_FD_LIMIT';

type RestartValidityFlag = Omit<ValidityFlag, 'code'> & { code: RestartValidityCode };

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
 * Shared rules plus the restart's own. PARTIAL_PUBLISH is replaced: while the server restarts the
 * publisher's requests are refused by design, so only failures outside that window are flagged.
 */
export function checkRestartValidity(r: RestartValidityInput) {
  const flags: (ValidityFlag | RestartValidityFlag)[] = checkValidity(r).flags.filter((f) => !(f.code === 'PARTIAL_PUBLISH' && r.publishFailuresOutsideRestart === 0));
  const add = (code: RestartValidityCode, severity: 'fatal' | 'warning', message: string) => flags.push({ code, severity, message });
  if (!r.restart.ok) add('RESTART_FAILED', 'fatal', `the ${r.restart.mode} restart failed: ${r.restart.error ?? 'unknown error'}; the numbers describe a run without the intended restart`);
  else if (r.initiallyConnected > 0 && r.droppedConnections === 0) add('RESTART_NOT_OBSERVED', 'warning', `the ${r.restart.mode} restart reported success but none of the ${r.initiallyConnected} connected clients disconnected: check that it restarted this target`);
  if (r.recoveryTimedOut && r.neverReconnected > 0) add('RECOVERY_TIMEOUT', 'warning', `${r.neverReconnected} clients were not back when the ${r.recoveryTimeoutMs} ms wait ended: "never reconnected" means "not within the wait"`);
  if (r.publishFailuresOutsideRestart > 0) add('PUBLISH_FAILED_OUTSIDE_RESTART', 'warning', `${r.publishFailuresOutsideRestart} publishes failed outside the restart window (${r.publishFailuresDuringRestart} inside it): the target or the runner was struggling beyond the restart`);
  if ((r.frontFdErrors ?? 0) > 0) add('RUNNER_FRONT_FD_LIMIT', 'fatal', `the runner's TCP front ran out of file descriptors on ${r.frontFdErrors} connections (EMFILE/ENFILE: the runner's limit, not the target's): clients that did not get back may never have reached the target`);
  return { valid: !flags.some((f) => f.severity === 'fatal'), flags };
}

export type RestartValidity = ReturnType<typeof checkRestartValidity>;

import { ReboundError } from '../../lib/errors.ts';

/**
 * Cancellation for runs started by a job service: every wait of a run goes through `wait`, which
 * ends early and throws once the signal fires, so the run's `finally` stops its nodes, clients
 * and publisher processes at once instead of after the planned duration.
 */
export function canceller(signal: AbortSignal | undefined) {
  const check = () => {
    if (signal?.aborted) throw new ReboundError('RR_ERR_RUN_FAILED', 'the run was cancelled');
  };
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const t = setTimeout(done, Math.max(0, ms));
      function done() {
        clearTimeout(t);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }).then(check);
  return { check, wait };
}

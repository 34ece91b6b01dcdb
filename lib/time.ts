/** Resolves after `ms` (at once for ms <= 0), or as soon as `signal` aborts (resolving, not rejecting), its timer cleared: a loop waiting on it ends at once when its run closes and leaves no timer behind. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * The one bounded wait: true as soon as `pred()` holds, false once `timeoutMs` passed or `signal`
 * aborted without it. Between checks it sleeps `step` ms, or awaits `step()` when the caller can be
 * woken by the event it waits for (a child's message) and polls only as a fallback.
 */
export async function until(
  pred: () => boolean | Promise<boolean>,
  timeoutMs: number,
  signal?: AbortSignal,
  step: number | (() => Promise<void>) = 20,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await pred()) return true;
    if (signal?.aborted || Date.now() > deadline) return false;
    await (typeof step === 'number' ? sleep(step, signal) : step());
  }
}

/** Resolve when `predicate()` holds, polling every `stepMs`; reject after `timeoutMs`. */
export async function waitUntil(predicate: () => boolean | Promise<boolean>, timeoutMs: number, what = 'condition', stepMs = 20): Promise<void> {
  if (!(await until(predicate, timeoutMs, undefined, stepMs))) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** `p`, or a rejection ("timed out after <ms> ms") if it has not settled within `ms`. `p` itself runs on. */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e) => (clearTimeout(t), reject(e)),
    );
  });
}

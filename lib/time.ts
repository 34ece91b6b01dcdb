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

/** Resolve when `predicate()` holds, polling every `stepMs`; reject after `timeoutMs`. */
export async function waitUntil(predicate: () => boolean, timeoutMs: number, what = 'condition', stepMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(stepMs);
  }
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

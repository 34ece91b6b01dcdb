export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** Resolve when `predicate()` holds, polling every `stepMs`; reject after `timeoutMs`. */
export async function waitUntil(predicate: () => boolean, timeoutMs: number, what = 'condition', stepMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(stepMs);
  }
}

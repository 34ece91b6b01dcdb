import { fdLimitOf } from './proc.ts';

/**
 * Connect failures that are the runner's own limits, not the target's: out of file descriptors,
 * or out of local ports / source addresses. Protocol libraries wrap socket errors differently
 * (ws passes the errno error, socket.io-client nests it under `description`), so the whole chain
 * is searched for the errno name.
 */
export type RunnerLimit = 'fd_limit' | 'port_exhaustion';

const CODES: Record<string, RunnerLimit> = {
  EMFILE: 'fd_limit',
  ENFILE: 'fd_limit',
  EADDRNOTAVAIL: 'port_exhaustion',
  EADDRINUSE: 'port_exhaustion',
};

export function classifyConnectError(err: unknown): RunnerLimit | undefined {
  const m = /\b(EMFILE|ENFILE|EADDRNOTAVAIL|EADDRINUSE)\b/.exec(errorChainText(err));
  return m ? CODES[m[1]!] : undefined;
}

/**
 * Codes and messages of the error and the errors it wraps (socket.io-client nests the cause under
 * `description`), in the order they are walked, ten at most: what both the runner-limit check and
 * the handshake's failure kind (handshake.ts) search.
 */
export function errorChainText(err: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  const stack: unknown[] = [err];
  while (stack.length && seen.size < 10) {
    const e = stack.pop();
    if (e === undefined || e === null || seen.has(e)) continue;
    seen.add(e);
    if (typeof e !== 'object') {
      parts.push(String(e));
      continue;
    }
    const o = e as { code?: unknown; message?: unknown; cause?: unknown; description?: unknown; error?: unknown };
    if (typeof o.code === 'string') parts.push(o.code);
    if (typeof o.message === 'string') parts.push(o.message);
    stack.push(o.cause, o.description, o.error);
  }
  return parts.join(' | ');
}

/** This process's soft open-file limit, from /proc (undefined where there is none). */
export const openFileLimit = (): number | undefined => fdLimitOf('self');

import { classifyConnectError } from './runner-limits.ts';

/**
 * Why one connect attempt failed, as a short stable kind for the herd report. The runner's own
 * limits (fd_limit, port_exhaustion) come first so they are never booked as the target's.
 */
export function handshakeFailureKind(err: unknown): string {
  const limit = classifyConnectError(err);
  if (limit) return limit;
  const text = chain(err);
  if (/ECONNREFUSED/.test(text)) return 'refused';
  if (/ECONNRESET|socket hang up|EPIPE/.test(text)) return 'reset';
  const http = /Unexpected server response: (\d{3})/.exec(text);
  if (http) return `http_${http[1]}`;
  if (/timed? ?out|ETIMEDOUT/i.test(text)) return 'timeout';
  if (/subscribe rejected|closed before subscribe|subscription/i.test(text)) return 'subscribe_failed';
  if (/xhr poll error|websocket error|transport/i.test(text)) return 'transport';
  return 'other';
}

/** Messages and codes of the error and the errors it wraps (socket.io-client nests the cause under `description`). */
function chain(err: unknown): string {
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

import { classifyConnectError, errorChainText } from './runner-limits.ts';

/**
 * Why one connect attempt failed, as a short stable kind for the herd report. The runner's own
 * limits (fd_limit, port_exhaustion) come first so they are never booked as the target's.
 */
export function handshakeFailureKind(err: unknown): string {
  const limit = classifyConnectError(err);
  if (limit) return limit;
  const text = errorChainText(err);
  if (/ECONNREFUSED/.test(text)) return 'refused';
  if (/ECONNRESET|socket hang up|EPIPE/.test(text)) return 'reset';
  const http = /Unexpected server response: (\d{3})/.exec(text);
  if (http) return `http_${http[1]}`;
  if (/timed? ?out|ETIMEDOUT/i.test(text)) return 'timeout';
  if (/subscribe rejected|closed before subscribe|subscription/i.test(text)) return 'subscribe_failed';
  if (/xhr poll error|websocket error|transport/i.test(text)) return 'transport';
  return 'other';
}

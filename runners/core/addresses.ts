/**
 * Source address for client `index`. A bound source IP has ~28K ephemeral ports
 * (32768-60999 here) whatever the destination, so clients are dealt round-robin over
 * 127.0.0.1..127.0.0.N: N × 28K sockets before ports run out, for all runner processes on the
 * machine together. Only loopback sources are produced, matching loopback-only targets.
 */
export function sourceAddress(index: number, addresses = 200): string {
  return `127.0.0.${(index % addresses) + 1}`;
}

/** Rebound only loads loopback: refuse any other target before a single socket opens. */
export function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  } catch {
    return false;
  }
}

/**
 * Targets a runner may load: loopback always; anything else only where the operator opted in
 * with REBOUND_ALLOW_REMOTE_TARGETS=1 (a fleet on its own private network). Never set in tests.
 */
export function isAllowedTargetUrl(url: string, env: Record<string, string | undefined> = process.env): boolean {
  if (isLoopbackUrl(url)) return true;
  if (env.REBOUND_ALLOW_REMOTE_TARGETS !== '1') return false;
  try {
    return ['http:', 'https:', 'ws:', 'wss:'].includes(new URL(url).protocol);
  } catch {
    return false;
  }
}

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
  if (!URL.canParse(url)) return false;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'ws:': '80', 'https:': '443', 'wss:': '443' };
/** One TARGET_URL_ALLOW entry: `host`, `*.suffix`, `[v6]`, each optionally `:port` or `:*`. */
export const ALLOW_PATTERN = /^(?:\*\.)?(?:[a-z0-9-]+\.)*[a-z0-9-]+(?::(?:\*|\d{1,5}))?$|^\[[0-9a-f:.]+\](?::(?:\*|\d{1,5}))?$/i;

/** The operator's allowlist (env TARGET_URL_ALLOW, comma-separated), malformed entries ignored here (the runner refuses them at startup). */
export function allowPatterns(env: Record<string, string | undefined> = process.env): string[] {
  return (env.TARGET_URL_ALLOW ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '' && ALLOW_PATTERN.test(s));
}

/**
 * `*.railway.internal` matches any subdomain (not the bare suffix); a pattern without a port
 * matches only the scheme's default port (so `host` never opens `host:6379`), `:*` any port.
 */
export function urlMatchesPattern(url: string, pattern: string): boolean {
  if (!URL.canParse(url)) return false;
  const u = new URL(url);
  if (!(u.protocol in DEFAULT_PORT)) return false;
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\*|\d{1,5}))?$/.exec(pattern);
  if (!m) return false;
  const host = m[1]!.replace(/^\[|\]$/g, '').toLowerCase();
  const uh = u.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const hostOk = host.startsWith('*.') ? uh.endsWith(host.slice(1)) && uh.length > host.length - 1 : uh === host;
  const portOk = m[2] === '*' ? true : m[2] === undefined ? u.port === '' : (u.port || DEFAULT_PORT[u.protocol]) === m[2];
  return hostOk && portOk;
}

/**
 * Targets a runner may load: loopback always; hosts in TARGET_URL_ALLOW; anything else only where the operator opted in
 * with REBOUND_ALLOW_REMOTE_TARGETS=1 (a fleet on its own private network). Never set in tests.
 */
export function isAllowedTargetUrl(url: string, env: Record<string, string | undefined> = process.env): boolean {
  if (isLoopbackUrl(url) || allowPatterns(env).some((p) => urlMatchesPattern(url, p))) return true;
  return env.REBOUND_ALLOW_REMOTE_TARGETS === '1' && URL.canParse(url) && new URL(url).protocol in DEFAULT_PORT;
}

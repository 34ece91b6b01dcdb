/**
 * Credentials in a URL (`http://user:pw@host`) are for the connection only: wherever a URL is
 * stored, answered, logged or shown (result files, job records and logs, HTML reports, the
 * coordinator's output) its userinfo is replaced by `***`, so `http://***@host:8080/path` still
 * says that credentials were used, and nothing else of the URL changes. The value the clients
 * connect with is never passed through here.
 *
 * Matches every `scheme://userinfo@` in free text as well (an error message, a log line). The
 * userinfo runs to the last `@` before the authority ends (`/ ? #`, `\` or whitespace), as a URL
 * parser reads `http://a@b@host` (user `a@b`), so no part of it is left behind.
 */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#\\]*@/gi;

export const REDACTED_USERINFO = '***';

export function redactUrlCredentials(text: string): string {
  return text.includes('@') ? text.replace(USERINFO, `$1${REDACTED_USERINFO}@`) : text;
}

/** A JSON-like value with redactUrlCredentials applied to every string in it (keys included); the input is not changed. */
export function redactUrlCredentialsDeep<T>(value: T): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactUrlCredentials(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[redactUrlCredentials(k)] = walk(x);
      return out;
    }
    return v;
  };
  return walk(value) as T;
}

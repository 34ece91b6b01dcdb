import { ReboundError } from '../../lib/errors.ts';
import { kebab, type OptionTable } from '../../lib/options.ts';
import { ALL_TARGET_URL_PARAMS } from './targets.ts';

/** Query names the service itself reads; never passed to a runner. */
export const SERVICE_PARAMS = ['async'] as const;

/**
 * Names that would aim the runner at a URL. The benchmark's per-target URL names (serverUrl,
 * cableUrl+broadcastUrl, wsUrl+httpUrl) are taken out of the query and checked against the
 * operator's allowlist by resolveTarget; every other one is refused (no Rebound runner uses it).
 */
const URL_PARAM = /(url|urls|uri|host|nodes)$/i;
const URL_NAMES = new Set(['cableUrl', 'serverUrl', 'wsUrl', 'httpUrl', 'broadcastUrl', 'natsUrl', 'natsSubject', 'cableUrlA', 'cableUrlB', 'subscriberUrlA', 'subscriberUrlB', 'nodes', 'url', 'toxiproxyUrl', 'target']);

export function knownNames(table: OptionTable): Set<string> {
  return new Set<string>([...SERVICE_PARAMS, ...Object.entries(table).flatMap(([k, spec]) => [k, kebab(k), ...(spec.aliases ?? [])])]);
}

/**
 * Check a bench route's query string against the route's option table before its one parse.
 * Order of refusals: target URLs (by design), unknown names (all of them, so a typo never runs a
 * different test), objects and arrays; then the entry's `parse` checks each value (400 naming the field).
 */
export function parseBenchQuery(table: OptionTable, query: Record<string, unknown>) {
  // The benchmark's target URL parameters, for resolveTarget (checked there against the allowlist).
  // Null prototype and own-key checks only: with `in` on a plain object, `constructor`,
  // `__proto__` or `toString` read as already known and were dropped without a word.
  const targetUrls: Record<string, string> = Object.create(null) as Record<string, string>;
  const isTargetUrl = (k: string) => Object.hasOwn(targetUrls, k);
  for (const k of Object.keys(query)) {
    if (!ALL_TARGET_URL_PARAMS.has(k)) continue;
    const v = query[k];
    if (typeof v !== 'string') throw new ReboundError('RR_ERR_OPTION_INVALID', `query parameter "${k}" was given more than once or as an object`, { details: { option: k } });
    targetUrls[k] = v;
  }
  const known = knownNames(table);
  const urls = Object.keys(query).filter((k) => !isTargetUrl(k) && (URL_NAMES.has(k) || (URL_PARAM.test(k) && !known.has(k))));
  if (urls.length) {
    throw new ReboundError(
      'RR_ERR_TARGET_URL_REFUSED',
      `no Rebound runner takes ${urls.join(', ')}: a target is named by the route, or by the benchmark's URL parameters (serverUrl; cableUrl + broadcastUrl; wsUrl + httpUrl) within the operator's allowlist (TARGET_URL_ALLOW). The operator configures a target with TARGET_<NAME>_URL (plus TARGET_<NAME>_BROADCAST_URL and TARGET_<NAME>_BROADCAST_KEY); without it the target's local service is started for the run.`,
      { details: { option: urls[0], params: urls } },
    );
  }
  const unknown = Object.keys(query).filter((k) => !known.has(k) && !isTargetUrl(k));
  if (unknown.length) {
    throw new ReboundError('RR_ERR_OPTION_UNKNOWN', `unknown query parameter${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"`).join(', ')}; known: ${Object.keys(table).join(', ')}, async`, {
      details: { option: unknown[0], unknownParams: unknown },
    });
  }
  const values: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(query)) {
    if (Array.isArray(v) || (v !== null && typeof v === 'object')) throw new ReboundError('RR_ERR_OPTION_INVALID', `query parameter "${k}" was given more than once or as an object`, { details: { option: k } });
    if (k !== 'async' && !isTargetUrl(k)) values[k] = v;
  }
  const asyncRaw = query.async;
  if (asyncRaw !== undefined && asyncRaw !== '1' && asyncRaw !== '0' && asyncRaw !== 'true' && asyncRaw !== 'false') {
    throw new ReboundError('RR_ERR_OPTION_INVALID', `query option "async" must be 1 or 0 (got ${JSON.stringify(asyncRaw)})`, { details: { option: 'async' } });
  }
  // The values themselves are parsed once, by the route's entry (`entry.parse`), right after this.
  return { values, async: asyncRaw === '1' || asyncRaw === 'true', targetUrls };
}

/** Drop keys whose value is undefined (effectiveParams are JSON). */
export function defined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/**
 * Echo values also under the names the caller used (`n` as well as `clients`), so a driver that
 * compares what it sent with `effectiveParams` by name (the benchmark's coordinator) sees its own
 * keys.
 */
export function echoCallerNames(table: OptionTable, query: Record<string, unknown>, effective: Record<string, unknown>): Record<string, unknown> {
  const out = { ...effective };
  for (const key of Object.keys(query)) {
    if (Object.hasOwn(out, key)) continue;
    const canonical = Object.keys(table).find((c) => (table[c]!.aliases ?? []).includes(key) || kebab(c) === key);
    if (canonical !== undefined && Object.hasOwn(out, canonical)) out[key] = out[canonical];
  }
  return out;
}

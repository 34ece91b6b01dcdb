import type { LocalNodes } from '../../engine/measure/local-nodes.ts';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ReboundError } from '../../lib/errors.ts';
import { withTarget } from '../../engine/measure/local-target.ts';
import { allowPatterns, isAllowedTargetUrl, urlMatchesPattern } from '../../engine/measure/addresses.ts';
import { assertAvailable, getTarget } from '../../engine/targets/index.ts';
import type { ServiceHandle } from '../../services/common/spawn.ts';
import type { ResolvedTarget } from './types.ts';

/** `socketio-csr` → `SOCKETIO_CSR`: the env prefix of a target's configuration. */
export const envName = (target: string) => target.toUpperCase().replace(/[^A-Z0-9]/g, '_');

/**
 * The benchmark's target URL parameters, per route target (../shared/reference/benchmark-runner-api.md
 * §1.5). Every other URL-ish name (nodes, natsUrl, cableUrlA, ...) stays refused: Rebound has no
 * runner that would use it.
 */
export const TARGET_URL_PARAMS: Record<string, readonly string[]> = {
  anycable: ['cableUrl', 'broadcastUrl'],
  replay: ['cableUrl', 'broadcastUrl'],
  socketio: ['serverUrl'],
  'socketio-csr': ['serverUrl'],
  ws: ['wsUrl', 'httpUrl'],
  uws: ['wsUrl', 'httpUrl'],
};
export const ALL_TARGET_URL_PARAMS = new Set(Object.values(TARGET_URL_PARAMS).flat());

const origin = (url: string): string | undefined => {
  if (!URL.canParse(url)) return undefined;
  const u = new URL(url);
  return `${u.protocol}//${u.host}`;
};

/** The operator's own target URLs (TARGET_<NAME>_URL / _BROADCAST_URL), as origins. */
function configuredOrigins(env: Record<string, string | undefined>): string[] {
  return Object.entries(env)
    .filter(([k, v]) => v && /^TARGET_[A-Z0-9_]+_(?:BROADCAST_)?URL$/.test(k))
    .map(([, v]) => origin(v!))
    .filter((o): o is string => o !== undefined);
}

function allowlistText(env: Record<string, string | undefined>): string {
  const pats = allowPatterns(env);
  const conf = configuredOrigins(env);
  return `the configured targets' own URLs (${conf.length ? conf.join(', ') : 'none configured'}) and TARGET_URL_ALLOW (${pats.length ? pats.join(', ') : 'unset'})`;
}

/** A request's URL passes when its scheme, host and port are a configured target's, or an allowlist pattern admits them. */
export function requestUrlAllowed(url: string, env: Record<string, string | undefined>): boolean {
  const o = origin(url);
  if (!o || !/^(?:https?|wss?):$/.test(new URL(url).protocol)) return false;
  return configuredOrigins(env).includes(o) || allowPatterns(env).some((p) => urlMatchesPattern(url, p));
}

const refused = (param: string, why: string, env: Record<string, string | undefined>) =>
  new ReboundError('RR_ERR_TARGET_URL_REFUSED', `${param} ${why}; this runner accepts target URLs only within ${allowlistText(env)}. The operator widens that with TARGET_URL_ALLOW (comma-separated host patterns, e.g. *.railway.internal,127.0.0.1:*)`, { details: { option: param, params: [param], allow: allowPatterns(env) } });

/** The route's URL parameters as the runner's url/broadcastUrl, each checked against the allowlist. */
function urlsFromRequest(route: string, urls: Record<string, string>, env: Record<string, string | undefined>): { url: string; broadcastUrl?: string } {
  const accepted = TARGET_URL_PARAMS[route] ?? [];
  const stray = Object.keys(urls).find((k) => !accepted.includes(k));
  if (stray !== undefined) {
    throw new ReboundError('RR_ERR_TARGET_URL_REFUSED', `${stray} does not apply to target "${route}"${accepted.length ? `: it takes ${accepted.join(' + ')}` : ': this route takes no target URL (its target is configured by the operator)'}`, { details: { option: stray, params: [stray] } });
  }
  for (const [k, v] of Object.entries(urls)) {
    if (!origin(v)) throw refused(k, `is not a URL (got ${JSON.stringify(v)})`, env);
    if (!requestUrlAllowed(v, env)) throw refused(k, `${JSON.stringify(origin(v))} is outside the allowlist`, env);
  }
  const need = (k: string) => {
    if (!urls[k]) throw new ReboundError('RR_ERR_OPTION_INVALID', `${accepted.filter((a) => a !== k).join(', ')} needs ${k} as well (the benchmark sends both)`, { details: { option: k } });
    return urls[k]!;
  };
  if (route === 'socketio' || route === 'socketio-csr') return { url: need('serverUrl') };
  if (route === 'ws' || route === 'uws') {
    // The benchmark's idle, whispers and avalanche drivers send wsUrl alone (they do not publish).
    const http = urls.httpUrl ?? (urls.wsUrl ? httpBaseOfWs(urls.wsUrl) : need('httpUrl'));
    // Rebound's ws client opens <base>/ws on the http base, so both must name one server.
    if (urls.wsUrl && new URL(urls.wsUrl).host !== new URL(http).host) throw new ReboundError('RR_ERR_OPTION_INVALID', `wsUrl and httpUrl must name one server (host:port): Rebound's ws client derives its socket URL from httpUrl`, { details: { option: 'wsUrl' } });
    return { url: http };
  }
  // The benchmark's idle and whispers drivers send cableUrl alone: publish (where a test does) to
  // /_broadcast on the cable's own origin, where the manifest's anycable-go and Rebound's replay
  // server serve it. The derived URL has the cable's origin, so it passes the same allowlist.
  const cable = need('cableUrl');
  return { url: cable, broadcastUrl: urls.broadcastUrl ?? broadcastOfCable(cable) };
}

/** `ws://host:port/ws` → `http://host:port`: the base Rebound's ws client derives `/ws` from again. */
function httpBaseOfWs(wsUrl: string): string {
  const u = new URL(wsUrl);
  if (u.pathname !== '/ws' && u.pathname !== '/ws/') {
    throw new ReboundError('RR_ERR_OPTION_INVALID', `wsUrl alone must end in /ws (the path Rebound's ws server and client use; got ${JSON.stringify(u.pathname)}): pass httpUrl as well to name the server's base URL`, { details: { option: 'wsUrl' } });
  }
  return `${u.protocol === 'wss:' ? 'https:' : 'http:'}//${u.host}`;
}

/** `ws://host:port/cable` → `http://host:port/_broadcast`. */
function broadcastOfCable(cableUrl: string): string {
  const u = new URL(cableUrl);
  return `${u.protocol === 'wss:' || u.protocol === 'https:' ? 'https:' : 'http:'}//${u.host}/_broadcast`;
}

/**
 * Targets by name, or by the benchmark's URL parameters within the operator's allowlist. The
 * operator configures a remote target with `TARGET_<NAME>_URL` (plus `TARGET_<NAME>_BROADCAST_URL`
 * / `TARGET_<NAME>_BROADCAST_KEY`); without it the target's local service is started for the run
 * (`anycable` then runs on Rebound's replay server, the same protocol and client).
 */
export function resolveTarget(route: string, env: Record<string, string | undefined> = process.env, requestUrls: Record<string, string> = {}): ResolvedTarget {
  let definition = getTarget(route);
  const key = envName(route);
  const url = env[`TARGET_${key}_URL`] || undefined;
  const broadcastUrl = env[`TARGET_${key}_BROADCAST_URL`] || undefined;
  const broadcastKey = env[`TARGET_${key}_BROADCAST_KEY`] || undefined;
  for (const [name, v] of [[`TARGET_${key}_URL`, url], [`TARGET_${key}_BROADCAST_URL`, broadcastUrl]] as const) {
    if (v !== undefined && !isAllowedTargetUrl(v, env)) {
      throw new ReboundError('RR_ERR_OPTION_INVALID', `${name} must be a loopback URL or within TARGET_URL_ALLOW unless REBOUND_ALLOW_REMOTE_TARGETS=1 (got ${JSON.stringify(v)})`, { details: { option: name } });
    }
  }
  if (Object.keys(requestUrls).length) {
    const asked = urlsFromRequest(route, requestUrls, env);
    // The operator's broadcast key goes only to the operator's own broadcast endpoint.
    const sameBroadcast = broadcastKey && (asked.broadcastUrl ?? asked.url) && origin(asked.broadcastUrl ?? asked.url) === origin(broadcastUrl ?? url ?? '');
    return { route, definition, source: 'request', server: definition.name, url: asked.url, ...(asked.broadcastUrl ? { broadcastUrl: asked.broadcastUrl } : {}), ...(sameBroadcast ? { broadcastKey } : {}) };
  }
  let server = definition.name;
  if (!url && !definition.service && definition.name === 'anycable') {
    // What /health and the docs promise: anycable without a configured URL is the local replay server.
    definition = { ...definition, service: getTarget('replay').service! };
    server = 'replay';
  }
  // A local target that cannot run on this runner (uws without its binary) says why, before any job starts.
  if (!url) assertAvailable(definition);
  if (!url && !definition.service) {
    throw new ReboundError('RR_ERR_TARGET_NOT_CONFIGURED', `target "${route}" has no local service on this runner: the operator sets TARGET_${key}_URL (and TARGET_${key}_BROADCAST_URL / TARGET_${key}_BROADCAST_KEY) to enable it`, { details: { target: route } });
  }
  return { route, definition, source: url ? 'configured' : 'local', server, ...(url ? { url } : {}), ...(broadcastUrl ? { broadcastUrl } : {}), ...(broadcastKey ? { broadcastKey } : {}) };
}

/** Private-network addresses a name pattern may resolve to (RFC 1918, CGNAT, IPv6 ULA); never loopback, link-local or unspecified. */
export function isPrivateAddress(a: string): boolean {
  if (isIP(a) === 4) {
    const [x, y] = a.split('.').map(Number) as [number, number];
    return x === 10 || (x === 172 && y >= 16 && y <= 31) || (x === 192 && y === 168) || (x === 100 && y >= 64 && y <= 127);
  }
  if (isIP(a) === 6) return /^f[cd][0-9a-f]{2}:/i.test(a);
  return false;
}

/**
 * DNS rebinding: a request's host name passed the allowlist by name, so check what it resolves to
 * just before the clients connect. Every address must be a private-network one, or itself admitted
 * (as `addr:port`) by the allowlist or a configured target; a name that resolves to loopback, a
 * link-local metadata address or the public internet is refused.
 */
export async function checkResolved(t: ResolvedTarget, env: Record<string, string | undefined>): Promise<void> {
  if (t.source !== 'request') return;
  for (const [param, url] of [['url', t.url], ['broadcastUrl', t.broadcastUrl]] as const) {
    if (!url) continue;
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) continue;
    let addrs: { address: string }[];
    try {
      addrs = await lookup(host, { all: true });
    } catch (err) {
      throw new ReboundError('RR_ERR_TARGET_URL_REFUSED', `${param} host ${JSON.stringify(host)} does not resolve: ${(err as Error).message}`, { details: { option: param } });
    }
    for (const { address } of addrs) {
      const literal = new URL(url);
      literal.hostname = isIP(address) === 6 ? `[${address}]` : address;
      if (isPrivateAddress(address) || requestUrlAllowed(literal.toString(), env)) continue;
      throw new ReboundError('RR_ERR_TARGET_URL_REFUSED', `${param} host ${JSON.stringify(host)} resolves to ${address}, which is neither a private-network address nor within ${allowlistText(env)} (DNS rebinding guard)`, { details: { option: param, address } });
    }
  }
}

/** Run `fn` against the resolved target: its configured URL, or a local instance started for the run; the result says which server answered. */
export async function withResolvedTarget(t: ResolvedTarget, fn: (url: string, service?: ServiceHandle, nodes?: LocalNodes) => Promise<Record<string, unknown>>, serviceArgs?: string[]): Promise<Record<string, unknown>> {
  const def = serviceArgs && t.definition.service ? { ...t.definition, service: { ...t.definition.service, args: [...t.definition.service.args, ...serviceArgs] } } : t.definition;
  return annotateRun(t, () => withTarget(def, t.url, fn));
}

/** `targetServer` and `targetSource` after the run (runners that start their own target call it directly). */
export async function annotateRun(t: ResolvedTarget, run: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  return { ...(await run()), targetServer: t.server, targetSource: t.source };
}

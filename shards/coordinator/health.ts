import { callShard, joinUrl } from './http.ts';
import type { ShardOutcome } from '../merge/types.ts';

interface SweepLimits {
  timeoutMs?: number;
  maxBytes?: number;
  /** The run's test and target (`POST /bench-<test>-<target>`): a shard whose /health lists routes without it does not serve the target. */
  route?: { test: string; target: string };
}

/** Bounds on a /health `routes` list: a runner serves ~10 tests x (its targets + at most 16 target files). */
const MAX_ROUTES = 4096;
const MAX_ROUTE_CHARS = 256;

/** A shard (its name and URL, as its outcome will carry them) and whether it passed the sweep. */
export interface ShardHealth extends Pick<ShardOutcome, 'name' | 'url'> {
  ok: boolean;
  /** Why not, in words a user can act on. */
  problem?: string;
  /** Set when the shard answers but does not serve the endpoint: the targets it serves for that test (its /health `routes`). */
  unserved?: string[];
}

/**
 * The routes a /health answer lists, or undefined when it lists none (an older runner: the POST
 * itself will say). A list that is not a bounded list of strings is the shard's fault.
 */
function routesOf(health: unknown): string[] | undefined | Error {
  const r = (health as { routes?: unknown } | null)?.routes;
  if (r === undefined) return undefined;
  if (!Array.isArray(r) || r.length > MAX_ROUTES || !r.every((x) => typeof x === 'string' && x.length <= MAX_ROUTE_CHARS)) return new Error(`GET /health answered a "routes" that is not a list of at most ${MAX_ROUTES} strings of at most ${MAX_ROUTE_CHARS} characters`);
  return r as string[];
}


/**
 * The benchmark's sweep: `GET /health` (open), then an authenticated `GET /jobs/nope` that must
 * answer a JSON 404: 401 means the token is wrong, anything else (HTML, 200) means the service
 * at that URL is not a Rebound runner (or an old image).
 */
export async function checkShard(name: string, url: string, token: string | undefined, { timeoutMs = 5000, maxBytes, route }: SweepLimits = {}): Promise<ShardHealth> {
  const h = await callShard(joinUrl(url, '/health'), { timeoutMs, maxBytes });
  if (h.refused) return { name, url, ok: false, problem: `GET /health ${h.refused}` };
  if (h.error) return { name, url, ok: false, problem: `GET /health failed: ${h.error}` };
  if (h.status !== 200 || !h.isJson) return { name, url, ok: false, problem: `GET /health answered ${h.status}${h.isJson ? '' : ' (not JSON)'}: ${h.snippet}` };
  const routes = routesOf(h.json);
  if (routes instanceof Error) return { name, url, ok: false, problem: routes.message };
  const prefix = route && `POST /bench-${route.test}-`;
  if (prefix && routes && !routes.includes(prefix + route.target)) {
    const served = routes.filter((x) => x.startsWith(prefix)).map((x) => x.slice(prefix.length));
    return { name, url, ok: false, problem: `does not serve ${prefix}${route.target} (its ${route.test} targets: ${served.join(', ') || 'none'})`, unserved: served };
  }
  const j = await callShard(joinUrl(url, '/jobs/nope'), { token, timeoutMs, maxBytes });
  if (j.refused) return { name, url, ok: false, problem: `GET /jobs/nope ${j.refused}` };
  if (j.error) return { name, url, ok: false, problem: `GET /jobs/nope failed: ${j.error}` };
  if (j.status === 401) return { name, url, ok: false, problem: 'GET /jobs/nope answered 401: BENCH_RUNNER_TOKEN is missing or does not match this shard\'s' };
  if (j.status !== 404 || !j.isJson) return { name, url, ok: false, problem: `GET /jobs/nope answered ${j.status}${j.isJson ? '' : ' (not JSON)'} instead of a JSON 404: not a Rebound runner, or an old image` };
  return { name, url, ok: true };
}

import { callShard, joinUrl } from './http.ts';

interface SweepLimits {
  timeoutMs?: number;
  maxBytes?: number;
}

export interface ShardHealth {
  name: string;
  url: string;
  ok: boolean;
  /** Why not, in words a user can act on. */
  problem?: string;
}

/**
 * The benchmark's sweep: `GET /health` (open), then an authenticated `GET /jobs/nope` that must
 * answer a JSON 404: 401 means the token is wrong, anything else (HTML, 200) means the service
 * at that URL is not a Rebound runner (or an old image).
 */
export async function checkShard(name: string, url: string, token: string | undefined, { timeoutMs = 5000, maxBytes }: SweepLimits = {}): Promise<ShardHealth> {
  const h = await callShard(joinUrl(url, '/health'), { timeoutMs, maxBytes });
  if (h.refused) return { name, url, ok: false, problem: `GET /health ${h.refused}` };
  if (h.error) return { name, url, ok: false, problem: `GET /health failed: ${h.error}` };
  if (h.status !== 200 || !h.isJson) return { name, url, ok: false, problem: `GET /health answered ${h.status}${h.isJson ? '' : ' (not JSON)'}: ${h.snippet}` };
  const j = await callShard(joinUrl(url, '/jobs/nope'), { token, timeoutMs, maxBytes });
  if (j.refused) return { name, url, ok: false, problem: `GET /jobs/nope ${j.refused}` };
  if (j.error) return { name, url, ok: false, problem: `GET /jobs/nope failed: ${j.error}` };
  if (j.status === 401) return { name, url, ok: false, problem: 'GET /jobs/nope answered 401: BENCH_RUNNER_TOKEN is missing or does not match this shard\'s' };
  if (j.status !== 404 || !j.isJson) return { name, url, ok: false, problem: `GET /jobs/nope answered ${j.status}${j.isJson ? '' : ' (not JSON)'} instead of a JSON 404: not a Rebound runner, or an old image` };
  return { name, url, ok: true };
}

export const sweep = (shards: readonly { name: string; url: string }[], token: string | undefined, limits?: SweepLimits) =>
  Promise.all(shards.map((s) => checkShard(s.name, s.url, token, limits)));

import { parseOptions } from '../../lib/options.ts';
import { BENCH_TABLE, benchEntry } from '../runner/routes.ts';
import { resolveTarget } from '../runner/targets.ts';
import { COORD_OPTIONS, TEST_TABLES } from '../coordinator/options.ts';
import { runMultiShard } from '../coordinator/run.ts';
import { runShardJob } from '../coordinator/shard-job.ts';
import type { RebaselineOptions } from './options.ts';
import type { TestSpec } from './schema.ts';

/** Where and how a test runs; the poll period and deadline are the rebaseline options'. */
export interface Where extends Pick<RebaselineOptions, 'pollMs' | 'timeoutSec'> {
  /** One runner service (BENCH_RUNNER_URL). */
  runnerUrl?: string;
  /** Several (SHARDS): the test runs through the coordinator and is judged on the merge. */
  shards?: string;
  token?: string;
  env: Record<string, string | undefined>;
  log: (line: string) => void;
}

export interface Execution {
  result: Record<string, unknown> | null;
  valid: boolean;
  error?: string;
  /** Where it ran: 'local', the runner's job id, or the shards' job ids. */
  ref: string;
}

/**
 * Locally a test runs in-process through the runner service's own route entry (same option table,
 * same `prepare` and `run`), on the target's embedded service or on `TARGET_<NAME>_URL` when the
 * operator set one: exactly what `POST /bench-<runner>-<target>` would run.
 */
async function runLocal(spec: TestSpec, w: Where): Promise<Record<string, unknown>> {
  const entry = benchEntry(spec.runner);
  if (!entry) throw new Error(`runner "${spec.runner}" is not in this tree's route table (${BENCH_TABLE.map((e) => e.test).join(', ')}); set BENCH_RUNNER_URL or SHARDS`);
  if (!entry.targets.includes(spec.target)) throw new Error(`runner "${spec.runner}" has no target "${spec.target}" (${entry.targets.join(', ')})`);
  const target = resolveTarget(spec.target, w.env);
  const prep = entry.prepare(spec.params, target);
  return entry.run(prep.opts, target, { signal: new AbortController().signal, progress: () => {}, log: (l) => w.log(`[${spec.id}] ${l}`) }, prep.post);
}

const query = (spec: TestSpec) => Object.fromEntries(Object.entries(spec.params).map(([k, v]) => [k, String(v)]));
const validOf = (r: Record<string, unknown>) => (r.validity as { valid?: boolean } | undefined)?.valid !== false;

/** Run one manifest test where the environment says: SHARDS, else BENCH_RUNNER_URL, else locally. */
export async function execute(spec: TestSpec, w: Where): Promise<Execution> {
  try {
    if (w.shards) {
      const urls = w.shards.split(',').map((s) => s.trim()).filter(Boolean);
      const o = parseOptions(COORD_OPTIONS, {
        values: { shards: urls.slice(0, spec.numShards ?? urls.length).join(','), token: w.token ?? '', test: spec.runner, target: spec.target, perShardN: spec.perShardN ?? 0, pollMs: w.pollMs, timeoutSec: w.timeoutSec },
      });
      // perShardN is the fleet's n: the manifest's own n/clients is the local scale.
      const q = Object.fromEntries(Object.entries(query(spec)).filter(([k]) => !(spec.perShardN && (k === 'n' || k === 'clients'))));
      const rep = await runMultiShard(o, q, w.log);
      const result = { ...rep.merged, validity: rep.validity, perShard: rep.perShard };
      const failed = rep.perShard.filter((s) => s.status !== 'done');
      return { result, valid: rep.validity.valid, ref: rep.perShard.map((s) => `${s.name}:${s.jobId ?? s.status}`).join(','), ...(failed.length ? { error: rep.exitReason } : {}) };
    }
    if (w.runnerUrl) {
      const out = await runShardJob(
        { name: 'runner', url: w.runnerUrl, endpoint: `/bench-${spec.runner}-${spec.target}`, query: query(spec) },
        { token: w.token, pollMs: w.pollMs, timeoutMs: w.timeoutSec * 1000, logLines: 10, table: TEST_TABLES[spec.runner as keyof typeof TEST_TABLES], allowParamMismatch: false, onLine: (l) => w.log(`[${spec.id}] ${l}`) },
      );
      if (out.status !== 'done' || !out.result) return { result: null, valid: false, error: `${out.status}: ${out.error ?? ''}`, ref: out.jobId ?? out.status };
      return { result: out.result as Record<string, unknown>, valid: validOf(out.result as Record<string, unknown>), ref: out.jobId ?? 'sync' };
    }
    const result = await runLocal(spec, w);
    return { result, valid: validOf(result), ref: 'local' };
  } catch (err) {
    return { result: null, valid: false, error: (err as Error).message, ref: 'error' };
  }
}

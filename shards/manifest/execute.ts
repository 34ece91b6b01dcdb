import { parseOptions } from '../../lib/options.ts';
import { withTarget } from '../../runners/core/local-target.ts';
import { parseJitterOptions } from '../../runners/jitter/options.ts';
import { runJitter } from '../../runners/jitter/run.ts';
import { getTarget } from '../../runners/targets/index.ts';
import { COORD_OPTIONS, TEST_TABLES } from '../coordinator/options.ts';
import { runMultiShard } from '../coordinator/run.ts';
import { runShardJob } from '../coordinator/shard-job.ts';
import type { TestSpec } from './schema.ts';

export interface Where {
  /** One runner service (BENCH_RUNNER_URL). */
  runnerUrl?: string;
  /** Several (SHARDS): the test runs through the coordinator and is judged on the merge. */
  shards?: string;
  token?: string;
  pollMs: number;
  timeoutSec: number;
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

/** Runners this tree can run in-process on embedded targets (the same code the runner service calls). */
const LOCAL: Record<string, (spec: TestSpec, w: Where) => Promise<Record<string, unknown>>> = {
  jitter: (spec, w) => {
    // A target the operator points elsewhere (as on the runner service): TARGET_<NAME>_URL.
    const url = w.env[`TARGET_${spec.target.toUpperCase().replace(/-/g, '_')}_URL`];
    const opts = parseJitterOptions({ values: { ...spec.params, target: spec.target, ...(url ? { url } : {}) }, origin: `manifest ${spec.id}` });
    return withTarget(getTarget(spec.target), opts.url, async (u) => {
      const run = runJitter(opts, u);
      run.events.on('phase', (name, detail) => w.log(`[${spec.id}] ${name}: ${detail}`));
      return (await run.result) as unknown as Record<string, unknown>;
    });
  },
};

export const localRunners = () => Object.keys(LOCAL);

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
      const rep = await runMultiShard(o, query(spec), w.log);
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
    const local = LOCAL[spec.runner];
    if (!local) return { result: null, valid: false, error: `runner "${spec.runner}" cannot run locally in this tree (local: ${localRunners().join(', ')}); set BENCH_RUNNER_URL or SHARDS`, ref: 'local' };
    const result = await local(spec, w);
    return { result, valid: validOf(result), ref: 'local' };
  } catch (err) {
    return { result: null, valid: false, error: (err as Error).message, ref: 'error' };
  }
}

import type { OptionTable, OptionValues } from '../../lib/options.ts';
import type { AnyRunnerModule } from '../../engine/session/module.ts';
import { MULTI_MODULES } from '../runner/adapters/index.ts';
import { DEFAULT_DECODE_DEADLINE_MS } from '../merge/histogram-decode.ts';

/**
 * The coordinator's table of tests, generated from the runner modules with an HTTP adapter
 * (shards/runner/adapters/index.ts: the coordinator reaches a shard over HTTP): which
 * tests a shard can run (`POST /bench-<test>-<target>`, each with `npm run bench:<test>:multi`),
 * their option table (the route's own, so params are validated here exactly as every shard will
 * validate them before a single shard is asked, and compared with each shard's `effectiveParams`
 * by meaning), whether one publisher can feed every shard's subscribers (`--shared-stream`), and
 * what a shard's result must carry to be merged.
 */
export type MultiTest = {
  test: string;
  options: OptionTable;
  /** Result fields a shard's result must carry (shards/merge/schema.ts refuses it otherwise). */
  required: readonly string[];
} & NonNullable<AnyRunnerModule['multi']>;

export const MULTI_TABLE: readonly MultiTest[] = MULTI_MODULES.map((m) => ({ test: m.name, options: m.http.options, sharedStream: m.multi!.sharedStream, required: m.summary, ...(m.multi!.ownStream ? { ownStream: m.multi!.ownStream } : {}), ...(m.multi!.checkQuery ? { checkQuery: m.multi!.checkQuery } : {}) }));

export const multiTest = (test: string): MultiTest | undefined => MULTI_TABLE.find((r) => r.test === test);

/** Each test's option table by name (a test this tree has no module for is validated by the shards). */
export const TEST_TABLES: Partial<Record<string, OptionTable>> = Object.fromEntries(MULTI_TABLE.map((r) => [r.test, r.options]));

/** Tests whose runner can subscribe without publishing (jitter and latency share that engine). */
export const SHARED_STREAM_TESTS: readonly string[] = MULTI_TABLE.filter((r) => r.sharedStream).map((r) => r.test);

/** Params the coordinator decides itself and never forwards from the user's flags. */
export const NOT_FORWARDED = ['target'];

/** The coordinator's own options (the benchmark's env names where it has them). */
export const COORD_OPTIONS = {
  shards: { type: 'string', default: '', env: ['SHARDS'], doc: 'comma-separated runner base URLs' },
  token: { type: 'string', default: '', env: ['BENCH_RUNNER_TOKEN'], doc: 'bearer token of the runners' },
  test: { type: 'enum', values: MULTI_TABLE.map((r) => r.test), default: 'jitter', doc: 'test to run on every shard' },
  target: { type: 'string', default: 'socketio', maxLength: 64, pattern: /^[a-z0-9-]+$/, env: ['TARGET'], doc: 'target name (configured on the shards)' },
  perShardN: { type: 'int', default: 0, min: 0, max: 10_000_000, env: ['PER_SHARD_N'], doc: 'clients per shard, sent as n (0: the test\'s default or --n)' },
  total: { type: 'int', default: 0, min: 0, max: 100_000_000, env: ['TOTAL'], doc: 'clients in all, split as ceil(total / shards) (instead of --per-shard-n)' },
  pollMs: { type: 'int', default: 5000, min: 50, max: 60_000, env: ['POLL_MS'], doc: 'ms between job polls' },
  timeoutSec: { type: 'int', default: 3600, min: 1, max: 86_400, env: ['SHARD_TIMEOUT_SEC'], doc: 'per-shard deadline, s (the outer bound; a shard that announced its plan is held to it first, see --plan-grace-sec)' },
  // A shard's job announces `plannedMs`; one still running past plan + max(grace, 25% of plan) is excluded as `timeout`.
  planGraceSec: { type: 'int', default: 30, min: 0, max: 86_400, env: ['SHARD_PLAN_GRACE_SEC'], doc: 'a shard still running max(this, 25% of its announced plannedMs) after its plan ends is excluded (timeout), s' },
  // The largest legitimate answer is a done job: 100,000 latencySamplesSorted, 86,400 time-series buckets and target-usage samples, the histogram come to about 12 MB; 64 MiB leaves room without letting one shard take the coordinator's memory.
  maxResponseBytes: { type: 'int', default: 64 * 1024 ** 2, min: 65_536, max: 1024 ** 3, env: ['SHARD_MAX_RESPONSE_BYTES'], doc: 'bytes a shard answer may have; a bigger one is not read further and excludes the shard' },
  // The decoder runs on a worker thread: past this it is terminated and the shard excluded (SHARD_RESULT_INVALID); the largest layout the pre-scan admits decodes in about 100 ms.
  histogramDeadlineMs: { type: 'int', default: DEFAULT_DECODE_DEADLINE_MS, min: 1, max: 600_000, env: ['SHARD_HISTOGRAM_DEADLINE_MS'], doc: 'ms one shard\'s latency histogram may take to decode; a decode past it is stopped and excludes the shard' },
  logLines: { type: 'int', default: 30, min: 0, max: 1000, doc: 'log lines asked per poll' },
  sharedStream: { type: 'bool', default: false, env: ['SHARED_STREAM'], doc: 'one publisher (the first shard), every shard on the same stream; clock offsets measured and corrected' },
  clockExchanges: { type: 'int', default: 8, min: 1, max: 100, doc: 'NTP-style exchanges per shard before and after a --shared-stream run' },
  clockStepMs: { type: 'int', default: 50, min: 0, max: 3_600_000, doc: 'a shard whose wall clock stepped more than this (ms) against its monotonic clock during the run is CLOCK_STEPPED (fatal for latency tests)' },
  skipUnhealthy: { type: 'bool', default: false, doc: 'run on the healthy shards when the health sweep fails some (they are reported as failed)' },
  allowParamMismatch: { type: 'bool', default: false, env: ['ALLOW_PARAM_MISMATCH'], doc: 'do not fail shards whose effective params differ' },
  json: { type: 'bool', default: false, doc: 'print only the merged result JSON on stdout' },
} as const satisfies OptionTable;

export type CoordOptions = OptionValues<typeof COORD_OPTIONS>;

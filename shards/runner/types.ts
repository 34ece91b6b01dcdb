import type { OptionTable } from '../../lib/options.ts';
import type { TargetDefinition } from '../../engine/targets/types.ts';

/** What a running job reports while it runs (phase, clients, publish/receive counts, ...). */
export interface JobProgress {
  phase: string;
  connected?: number;
  published?: number;
  received?: number;
  [key: string]: unknown;
}

/** Handed to every runner function the service starts. */
export interface RunContext {
  /** Aborted on SIGTERM: the runner closes its clients and resolves with a partial result (`aborted: true`). */
  signal: AbortSignal;
  progress(p: JobProgress): void;
  log(line: string): void;
}

/** A target resolved by name: configured by the operator (TARGET_<NAME>_URL) or started locally. */
export interface ResolvedTarget {
  /** The name in the route. */
  route: string;
  definition: TargetDefinition;
  /** `request`: the caller's URL parameter, within the operator's allowlist (TARGET_URL_ALLOW). */
  source: 'configured' | 'local' | 'request';
  /** The Rebound server kind that answers (`replay` for `anycable` without a configured URL): the result's `targetServer`. */
  server: string;
  url?: string;
  broadcastUrl?: string;
  broadcastKey?: string;
}

export interface PreparedRun<Opts = unknown> {
  /** The runner's own options, validated (typed: the entry is generic over them). */
  opts: Opts;
  /** Echoed to the caller: what will run, under Rebound's option names. */
  effectiveParams: Record<string, unknown>;
  /** Expected wall time, for Retry-After and the job's ETA: the module's `plannedMs`. */
  plannedMs: number;
  /** What the entry's `run` adds to the result afterwards (the benchmark's samplesCap, label). */
  post?: Record<string, unknown>;
}

/**
 * One entry per test in the route table: `POST /bench-<test>-<target>` for each target, built from
 * the runner's module by `moduleEntry` (shards/runner/entry.ts). `options` is the HTTP option
 * table (the CLI's table without the URL options, plus the benchmark's compatibility names).
 */
export interface BenchEntry<Opts = unknown> {
  test: string;
  /** Route target names (the benchmark's: `uws` is the uWebSockets.js server, services/uws). */
  targets: readonly string[];
  options: OptionTable;
  doc: string;
  /** The query's one parse (400 naming the field); `build` takes its typed values. */
  parse(values: Record<string, unknown>): Record<string, unknown>;
  /** Typed query values and the route's target to the run's options (the module's validator). */
  build(parsed: Record<string, unknown>, target: ResolvedTarget, given: Record<string, unknown>): PreparedRun<Opts>;
  /** `build(parse(values))`. */
  prepare(values: Record<string, unknown>, target: ResolvedTarget): PreparedRun<Opts>;
  run(opts: Opts, target: ResolvedTarget, ctx: RunContext, post?: Record<string, unknown>): Promise<Record<string, unknown>>;
}

import type { LocalNodes } from '../measure/local-nodes.ts';
import type { Emitter } from '../../lib/emitter.ts';
import { defaultsOf, parseOptions, type OptionTable, type OptionValues, type ParseSources } from '../../lib/options.ts';
import type { ServiceHandle } from '../../services/common/spawn.ts';
import { stamp } from '../measure/result-files.ts';
import type { ReportMeta, ReportModel } from '../pages/types.ts';
import type { TargetDefinition } from '../targets/types.ts';

/**
 * One runner as one typed module: its option table, the one validator, its planned duration, how
 * it runs, what its result's summary is, and its report page. The transports above adapt it (the
 * CLI, the runner service's HTTP route through its per-runner adapters, the coordinator's table of
 * tests), so a flag, a query parameter and a coordinator param are the same option with the same
 * validation and the same error text; the module knows nothing of them.
 * (After k6's executors: a config with its validation and a `Run` over a shared base.)
 */
export interface RunnerModule<Opts extends object, Result extends object = Record<string, unknown>, T extends OptionTable = OptionTable> {
  /** The test's name: `npm run bench:<name>`, `POST /bench-<name>-<target>`, `--test <name>`. */
  readonly name: string;
  /** One line: what the test does (the --help header, the route's doc). */
  readonly doc: string;
  /** The CLI's option table (lib/options.ts), target and URL options included. */
  readonly options: T;
  /**
   * Cross-field rules over typed values of `options` (defaults filled): the one validator. `parse`
   * is `validate(parseOptions(options, src))`; the HTTP entry parses its own table once and hands
   * the typed values here, so no value is parsed twice.
   */
  validate(values: OptionValues<T>): Opts;
  /** Expected wall time of a run with these options (the job's ETA, Retry-After, the CLI's plan line). */
  plannedMs(opts: Opts): number;
  /**
   * `service`: the run needs a target URL (the CLI starts the target's local service unless --url
   * is given, the HTTP entry resolves the route's target); `self`: the runner starts and stops
   * its targets itself (restarts, suites).
   */
  readonly target: 'service' | 'self';
  /** The target a run is aimed at, and its URL if one was given (target `service`). */
  targetOf(opts: Opts): { name: string; url?: string | undefined };
  /** Extra args for the locally started target service (idle's --workers). */
  serviceArgs?(opts: Opts): string[];
  /** Run once. Events go to `ctx` (phases, progress, log lines); presentation subscribes there. */
  run(opts: Opts, ctx: ModuleRunContext): Promise<Result>;
  /** Result fields a shard's result must carry to be merged (the coordinator's table). */
  readonly summary: readonly string[];
  /** How the coordinator merges shard results of this test: the declarations its result follows (shared ones first, then its own). */
  readonly merge?: readonly MergeSpec[];
  /**
   * The coordinator can fan this test out over shards; `sharedStream`: one publisher, the others
   * subscribe. `ownStream`: in own-stream mode, the query shard `suffix` (s1, s2, ...) is sent, so
   * that no shard hears another's traffic (the stream itself is suffixed for every test).
   */
  readonly multi?: {
    sharedStream: boolean;
    ownStream?(query: Readonly<Record<string, string>>, suffix: string): Record<string, string>;
    /** The rules of `validate` that need no target, run by the coordinator on the parsed query before any shard is asked (throws a coded error). */
    checkQuery?(values: Readonly<Record<string, unknown>>): void;
  };
  /** The HTML report's model for results of this test (one, or several side by side); absent: the run writes no page. */
  page?(results: readonly Result[], meta: ReportMeta): ReportModel;
}

/** A fleet flag a runner's rule raises over merged figures (the coordinator adds its own codes). */
export interface MergedFlag {
  code: string;
  severity: 'fatal' | 'warning';
  message: string;
  /** The shards the flag is about. */
  shards?: string[];
}

/** One shard's result as a declaration's hooks see it, with the shard's name. */
export interface NamedShardResult {
  readonly name: string;
  readonly result: Readonly<Record<string, unknown>>;
}

/**
 * How shard results of a runner add up, by result field (shards/merge reads the union of every
 * module's declarations: a field name means one thing in every result). Schema lists are checked
 * on each shard's result before anything adds up; the merge lists say how the fleet figure is made.
 */
export interface MergeSpec {
  /** Counters and rates whose fleet figure is the shards' sum. */
  readonly sum?: readonly string[];
  /** Extents (durations, peaks) whose fleet figure is the largest shard's: the fleet took as long as its slowest shard. */
  readonly max?: readonly string[];
  /** Maps of counts by cause: summed key by key (each value an integer >= 0). */
  readonly countMaps?: readonly string[];
  /** Schema: integers >= 0 when present (a fraction or a negative would add into a 200% that reads valid). */
  readonly counts?: readonly string[];
  /** Schema: integers >= 0, or null where the count does not apply (a target without session resumption). */
  readonly nullableCounts?: readonly string[];
  /** Schema: finite and >= 0 when present (rates, durations). */
  readonly nonNegative?: readonly string[];
  /** Schema: the first bound one shard's result breaks (`x exceeds y`), or undefined. */
  check?(result: Readonly<Record<string, unknown>>): string | undefined;
  /** Fleet figures recomputed from the merged ones (a rate from summed counts), given the shards' results; after the latency merge. */
  derive?(merged: Record<string, unknown>, shards: readonly NamedShardResult[]): void;
  /** Figures of one shard kept beside the union in `perShard[]` (the shard's own target bytes per connection). */
  perShard?(result: Readonly<Record<string, unknown>>): Record<string, unknown> | undefined;
  /** The runner's rules over the merged figures: what each shard can pass alone while the sum does not. */
  rules?(merged: Readonly<Record<string, unknown>>): MergedFlag[];
}

/** What a run emits; the CLI prints it to stderr, the runner service stores it in the job. */
export interface ModuleRunContext {
  signal: AbortSignal;
  phase(name: string, detail: string): void;
  /** A snapshot of the run (counts so far); `phase` when it has one. */
  progress(p: { readonly phase?: string }): void;
  log(line: string): void;
  /** Target `service`: where it answers, and its local process when the run started one. */
  url?: string;
  service?: ServiceHandle;
  /** The local process held as restartable nodes (engine/measure/local-target.ts): a runner that restarts its target goes through it. */
  nodes?: LocalNodes;
  /** Target `service`: the definition resolved for this run (the route's or the CLI's). */
  definition?: TargetDefinition;
}

/** `validate(parseOptions(options, src))`: the CLI's and env's one parse. */
export function parseModule<O extends object, R extends object, T extends OptionTable>(m: RunnerModule<O, R, T>, src: ParseSources): O {
  return m.validate(parseOptions(m.options, src));
}

/** Typed values (some of the table's) completed with the table's defaults: what `validate` takes from the HTTP side. */
export function withDefaults<T extends OptionTable>(table: T, values: Record<string, unknown>): OptionValues<T> {
  return { ...defaultsOf(table), ...Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) } as OptionValues<T>;
}

/** A `{ events, result }` run (avalanche, deploy-impact) with its phases going to the module's context. */
export function phasedRun<R, N extends string>(run: { events: Emitter<{ phase: (name: N, detail: string) => void }>; result: Promise<R> }, ctx: ModuleRunContext): Promise<R> {
  run.events.on('phase', ctx.phase);
  return run.result;
}

/** A module whose types are erased for a registry (the table of every runner). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRunnerModule = RunnerModule<any, any, any>;

/** Results file names: `<test>-<target>-<stamp>`. */
export const resultName = (...parts: string[]) => [...parts, stamp()].join('-');

type Optional<X, K extends keyof X> = Omit<X, K> & Partial<Pick<X, K>>;
type TargetOf<O> = { targetOf(opts: O): { name: string; url?: string | undefined } };

/**
 * A module as its file declares it. Left out, `target` is `service`, `targetOf` is the options'
 * `target` and `url` (a module whose options have no `target` must give it), and `summary` requires
 * no field.
 */
type ModuleSpec<O extends object, R extends object, T extends OptionTable> = Optional<Omit<RunnerModule<O, R, T>, 'targetOf'>, 'target' | 'summary'> &
  (O extends { target: string; url?: string | undefined } ? Partial<TargetOf<O>> : TargetOf<O>);

/** Declare a module with its types inferred (`Opts` from `validate`, the table from `options`) and its usual parts defaulted. */
export function defineModule<O extends object, R extends object, T extends OptionTable>(m: ModuleSpec<O, R, T>): RunnerModule<O, R, T> {
  const targetOf = (m as Partial<TargetOf<O>>).targetOf ?? ((o: O) => ({ name: (o as { target: string }).target, url: (o as { url?: string }).url }));
  return {
    ...m,
    target: m.target ?? 'service',
    targetOf,
    summary: m.summary ?? [],
  };
}

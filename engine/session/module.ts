import type { Emitter } from '../../lib/emitter.ts';
import { defaultsOf, parseOptions, type OptionTable, type OptionValues, type ParseSources } from '../../lib/options.ts';
import type { ServiceHandle } from '../../services/common/spawn.ts';
import { stamp } from '../measure/result-files.ts';
import type { TargetDefinition } from '../targets/types.ts';

/**
 * One runner as one typed module: its option table, the one validator, its planned duration, how
 * it runs, and what its result's summary is. The CLI, the runner service's HTTP route (through
 * the service's per-runner adapters) and the coordinator's table of tests are generated from it,
 * so a flag, a query parameter and a coordinator param are the same option with the same
 * validation and the same error text. The module knows nothing of them (they sit in layers above
 * and adapt it).
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
  /** The coordinator can fan this test out over shards; `sharedStream`: one publisher, the others subscribe. */
  readonly multi?: { sharedStream: boolean };
  readonly cli: CliSpec<Opts, Result>;
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
  /** Target `service`: the definition resolved for this run (the route's or the CLI's). */
  definition?: TargetDefinition;
}

interface CliSpec<Opts, Result> {
  /** `npm run bench:<script>`. */
  readonly script: string;
  /** After `usage: npm run bench:<script> -- `. */
  readonly usage: string;
  /** Extra --help lines after the option list (env-only configuration). */
  readonly helpExtra?: string;
  /** `flag`: stdout is `present(result)` unless --json; `always`: stdout is the JSON either way. */
  readonly json: 'flag' | 'always';
  /** Results file name (no extension) under RESULTS_DIR. */
  fileName(opts: Opts, result: Result): string;
  /** Values for the Reproduce line (the table's names), and the seed to print. */
  command(opts: Opts, result: Result): { values: Record<string, unknown>; seed?: number };
  /** stdout without --json (`json: 'flag'`): the runner's table. */
  present?(result: Result, opts: Opts): string;
  /** What --json (or `json: 'always'`) prints (default: the result). */
  jsonView?(result: Result, file: string, command: string): unknown;
  /** After the results file: the report line(s) on stderr (default: reportLine with the command). */
  report?(file: string, result: Result, command: string, opts: Opts): Promise<string>;
  /** Extra stderr after the report line (a failed restart's coded error). */
  after?(result: Result): string | undefined;
  /** Exit code (default 0 valid, 2 invalid). */
  exitCode?(result: Result): number;
  /** stderr line for a progress snapshot / log line (default `[target] ...`). */
  progressLine?(p: { readonly phase?: string }, opts: Opts): string | undefined;
  logLine?(line: string, opts: Opts): string;
  /** On SIGTERM/SIGINT, a line before the run stops (the partial result is still written). */
  readonly abortNote?: string;
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
 * `target` and `url` (a module whose options have no `target` must give it), `summary` requires
 * no field, `cli.script` is the name, `cli.fileName` is `<name>-<target>-<stamp>`, `cli.command`
 * shows the options as they are.
 */
type ModuleSpec<O extends object, R extends object, T extends OptionTable> = Optional<Omit<RunnerModule<O, R, T>, 'cli' | 'targetOf'>, 'target' | 'summary'> &
  (O extends { target: string; url?: string | undefined } ? Partial<TargetOf<O>> : TargetOf<O>) & {
    readonly cli: Optional<CliSpec<O, R>, 'script' | 'fileName' | 'command'>;
  };

/** Declare a module with its types inferred (`Opts` from `validate`, the table from `options`) and its usual parts defaulted. */
export function defineModule<O extends object, R extends object, T extends OptionTable>(m: ModuleSpec<O, R, T>): RunnerModule<O, R, T> {
  const targetOf = (m as Partial<TargetOf<O>>).targetOf ?? ((o: O) => ({ name: (o as { target: string }).target, url: (o as { url?: string }).url }));
  return {
    ...m,
    target: m.target ?? 'service',
    targetOf,
    summary: m.summary ?? [],
    cli: { script: m.name, fileName: (o) => resultName(m.name, targetOf(o).name), command: (o) => ({ values: o as Record<string, unknown> }), ...m.cli },
  };
}

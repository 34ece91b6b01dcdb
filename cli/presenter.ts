import type { OptionTable } from '../lib/options.ts';
import type { AnyRunnerModule, RunnerModule } from '../engine/session/module.ts';

/**
 * How the CLI shows one runner's run. A runner module carries no CLI code: what it shows beyond
 * the defaults is its presenter (cli/presenters/<runner>.ts), so a module without one still runs
 * from `cli/main.ts <test>` with the defaults of `cliOf` (cli/module-cli.ts).
 */
export interface CliSpec<Opts, Result> {
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

/** A runner's own CLI presentation: the hooks it sets, the rest defaulted. */
export type CliPresenter<Opts, Result> = Partial<CliSpec<Opts, Result>>;

/** A module and its presentation, typed together where they are declared, erased in the list. */
export interface Presented {
  readonly module: AnyRunnerModule;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly cli: CliPresenter<any, any>;
}

/** Declare a module's presentation with the module's option and result types. */
export function presenter<O extends object, R extends object, T extends OptionTable>(module: RunnerModule<O, R, T>, cli: CliPresenter<NoInfer<O>, NoInfer<R>>): Presented {
  return { module, cli };
}

import { runCli } from '../lib/cli.ts';
import { argvToValues, helpText, type OptionTable } from '../lib/options.ts';
import { withTarget } from '../engine/measure/local-target.ts';
import { writeResults } from '../engine/measure/result-files.ts';
import { redactUrlCredentials, redactUrlCredentialsDeep } from '../lib/redact.ts';
import { parseModule, resultName, type AnyRunnerModule, type ModuleRunContext, type RunnerModule } from '../engine/session/module.ts';
import { commandLine, reportLine } from '../engine/pages/index.ts';
import { getTarget } from '../engine/targets/index.ts';
import { TARGET_MODULE_OPTIONS } from '../engine/targets/user-module.ts';
import type { CliSpec } from './presenter.ts';
import { withTargetModule } from './target-module.ts';
import { presenterOf } from './presenters/index.ts';

const JSON_HELP = { flag: 'print only the result JSON on stdout', always: `the result JSON on stdout (always: nothing else goes there)` } as const;

/**
 * How the CLI shows a module's run: every hook its presenter (cli/presenters/) sets, else the
 * default. The script is the test's name, the file `<test>-<target>-<stamp>`, the Reproduce line
 * the options as they are, stdout the result's JSON with --json (else nothing but stderr's
 * progress and report line).
 */
export function cliOf<O extends object, R extends object, T extends OptionTable>(m: RunnerModule<O, R, T>): CliSpec<O, R> {
  return {
    script: m.name,
    usage: '[options] [--json]',
    json: 'flag',
    fileName: (o) => resultName(m.name, m.targetOf(o).name),
    command: (o) => ({ values: o as Record<string, unknown> }),
    ...presenterOf(m),
  };
}

/** --help: generated from the module's table, so a new option is listed the moment it exists. */
export function moduleHelp(m: AnyRunnerModule): string {
  const cli = cliOf(m);
  return `usage: npm run bench:${cli.script} -- ${cli.usage}\n${m.doc}\n${helpText(m.options)}\n${helpText(TARGET_MODULE_OPTIONS)}\n  --json               ${JSON_HELP[cli.json]}\n${cli.helpExtra ? `${cli.helpExtra}\n` : ''}`;
}

/**
 * Every runner's CLI: flags from the module's option table (env names too), one parse, the run
 * with progress on stderr (the presentation subscriber), the result under RESULTS_DIR with its
 * HTML report, then a table or `--json` on stdout. Exit 0 valid, 2 invalid or bad input.
 */
export async function moduleMain<O extends object, R extends object, T extends OptionTable>(m: RunnerModule<O, R, T>, argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  if (printedHelp(argv, () => moduleHelp(m))) return 0;
  return withTargetModule(argv, env, m.options, (rest) => runModule(m, rest, env));
}

async function runModule<O extends object, R extends object, T extends OptionTable>(m: RunnerModule<O, R, T>, argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const cli = cliOf(m);
  const json = argv.includes('--json');
  const opts = parseModule(m, { values: argvToValues(argv.filter((a) => a !== '--json'), m.options), env, origin: 'CLI' });
  const { name: target, url } = m.targetOf(opts);
  const signal = abortOnSignals((sig) => cli.abortNote && `[${target}] ${sig}: ${cli.abortNote}\n`);
  const err = (line: string | undefined) => line !== undefined && process.stderr.write(line.endsWith('\n') ? line : `${line}\n`);
  const ctx: ModuleRunContext = {
    signal,
    phase: (name, detail) => err(`[${target}] ${name}: ${detail}`),
    progress: (p) => err(cli.progressLine?.(p, opts)),
    log: (line) => err(cli.logLine ? cli.logLine(line, opts) : `[${target}] ${line}`),
  };
  // The same plannedMs the runner service answers Retry-After and the job's ETA with.
  ctx.phase('plan', `about ${Math.ceil(m.plannedMs(opts) / 1000)} s`);
  let result: R;
  if (m.target === 'service') {
    const def = getTarget(target);
    const extra = m.serviceArgs?.(opts) ?? [];
    const withArgs = extra.length && def.service ? { ...def, service: { ...def.service, args: [...def.service.args, ...extra] } } : def;
    result = await withTarget(withArgs, url, (u, svc, nodes) => m.run(opts, { ...ctx, url: u, definition: def, ...(svc ? { service: svc } : {}), ...(nodes ? { nodes } : {}) }));
  } else {
    result = await m.run(opts, ctx);
  }
  // A --url with credentials connected with them; the file, the report and stdout never show them.
  result = redactUrlCredentialsDeep(result);
  const file = await writeResults(cli.fileName(opts, result), result as unknown as Record<string, unknown>);
  const cmd = cli.command(opts, result);
  const command = redactUrlCredentials(commandLine(`bench:${cli.script}`, m.options, cmd.values, cmd.seed));
  if (!cli.report) process.stderr.write(`results: ${file}\n`);
  process.stderr.write(cli.report ? await cli.report(file, result, command, opts) : await reportLine(file, result as never, { command }, [m]));
  const after = cli.after?.(result);
  if (after) process.stderr.write(after);
  if (json || cli.json === 'always') process.stdout.write(JSON.stringify(cli.jsonView ? cli.jsonView(result, file, command) : result, null, 2) + '\n');
  else if (cli.present) process.stdout.write(cli.present(result, opts));
  return cli.exitCode ? cli.exitCode(result) : (result as { validity?: { valid?: boolean } }).validity?.valid ? 0 : 2;
}

/** --help or -h in `argv`: `text()` on stdout and true (the command then exits 0), else false. */
export function printedHelp(argv: readonly string[], text: () => string): boolean {
  if (!argv.includes('--help') && !argv.includes('-h')) return false;
  process.stdout.write(text());
  return true;
}

/** Aborted on the first SIGTERM or SIGINT, after `note`'s stderr line (if any): the run stops and still writes its partial result. */
export function abortOnSignals(note: (sig: NodeJS.Signals) => string | undefined): AbortSignal {
  const stop = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, () => {
      const line = note(sig);
      if (line) process.stderr.write(line);
      stop.abort();
    });
  }
  return stop.signal;
}

/** A runner's cli.ts: `runModuleCli(module)`. */
export function runModuleCli<O extends object, R extends object, T extends OptionTable>(m: RunnerModule<O, R, T>): void {
  runCli((argv) => moduleMain(m, argv));
}


import { toErrorBody } from './errors.ts';
import { argvToValues, helpText, parseOptions, type OptionTable, type OptionValues } from './options.ts';
import { redactUrlCredentials } from './redact.ts';

/**
 * Run a CLI's main and exit with its code. Coded errors print `error <code>: <message>` on stderr
 * and exit 2 for bad input (4xx-class codes) or 1 for a failed run; no stack for expected errors.
 */
export function runCli(main: (argv: string[]) => Promise<number>): void {
  main(process.argv.slice(2)).then((code) => process.exit(code), exitWithError);
}

function exitWithError(err: unknown): never {
  const body = toErrorBody(err);
  process.stderr.write(`error ${body.code}: ${redactUrlCredentials(body.message)}\n`);
  if (body.statusCode >= 500 && process.env.DEBUG) process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(body.statusCode < 500 ? 2 : 1);
}

/**
 * Flags of a script CLI (benchmarks) through the project's option table: `--help` lists them, a
 * bad flag exits 2 with its coded error instead of running with NaN.
 */
export function parseCliOptions<T extends OptionTable>(table: T, argv = process.argv.slice(2)): OptionValues<T> {
  if (argv.includes('--help')) {
    process.stdout.write(`${helpText(table)}\n`);
    process.exit(0);
  }
  try {
    return parseOptions(table, { values: argvToValues(argv, table), origin: 'CLI' });
  } catch (err) {
    return exitWithError(err);
  }
}

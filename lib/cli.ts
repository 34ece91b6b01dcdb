import { toErrorBody } from './errors.ts';

/**
 * Run a CLI's main and exit with its code. Coded errors print `error <code>: <message>` on stderr
 * and exit 2 for bad input (4xx-class codes) or 1 for a failed run; no stack for expected errors.
 */
export function runCli(main: (argv: string[]) => Promise<number>): void {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      const body = toErrorBody(err);
      process.stderr.write(`error ${body.code}: ${body.message}\n`);
      if (body.statusCode >= 500 && process.env.DEBUG) process.stderr.write(`${(err as Error).stack}\n`);
      process.exit(body.statusCode < 500 ? 2 : 1);
    },
  );
}

import { runCli, parseCliOptions } from '../lib/cli.ts';
import { CHECK_OPTIONS, checkTarget, formatCheck } from '../engine/check/check.ts';
import { withTarget } from '../engine/measure/local-target.ts';
import { getTarget } from '../engine/targets/index.ts';
import { withTargetModule } from './target-module.ts';

/**
 * `npm run target:check -- --target-module ./my-target.ts --url <server>` (or `--target <built-in>`,
 * whose local service is started when no --url is given): the conformance walk, one verdict a
 * line (or --json). Exit 0 only when every declared capability holds, 1 when one does not, 2 for
 * bad input (a file that does not load, an unknown option).
 */
export function main(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  return withTargetModule(argv, env, CHECK_OPTIONS, async (rest) => {
    const o = parseCliOptions(CHECK_OPTIONS, rest);
    const target = getTarget(o.target);
    const report = await withTarget(target, o.url, (url) => checkTarget({ target, url, stepTimeoutMs: o.stepTimeoutMs, overallTimeoutMs: o.overallTimeoutMs, leanClients: o.leanClients }));
    process.stdout.write(o.json ? `${JSON.stringify(report, null, 2)}\n` : formatCheck(report));
    return report.ok ? 0 : 1;
  });
}

runCli(main);

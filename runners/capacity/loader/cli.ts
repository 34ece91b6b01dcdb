import { loadavg } from 'node:os';
import { runCli } from '../../../lib/cli.ts';
import { isAllowedTargetUrl } from '../../../engine/measure/addresses.ts';
import { argvToValues } from '../../../lib/options.ts';
import { currentCommit } from '../../../engine/measure/summary.ts';
import { getTarget } from '../../../engine/targets/index.ts';
import { invalidOption } from '../lists.ts';
import type { ScenarioModule, ScenarioResult } from '../types.ts';
import { scenario as s3 } from '../scenarios/s3-fanout.ts';
import { scenario as s4 } from '../scenarios/s4-hot-stream.ts';
import { scenario as s5 } from '../scenarios/s5-latency.ts';
import { scenario as sweep } from '../scenarios/sweep.ts';

/**
 * The loader scenarios' own driver, beside the suite's `bench:capacity`: one scenario, several
 * targets side by side in one run, JSON lines (one per target) with `--json`.
 *   npx tsx runners/capacity/loader/cli.ts --scenario S3 --targets replay,ws,socketio [scenario options] [--url http://127.0.0.1:port] [--json]
 * `--url` measures an already running target (e.g. the replay server under `node --cpu-prof`).
 */
const SCENARIOS: Record<string, ScenarioModule<never>> = { S3: s3, S4: s4, S5: s5, sweep } as unknown as Record<string, ScenarioModule<never>>;

runCli(async (argv) => {
  const raw = argvToValues(argv, { json: { type: 'bool', default: false, doc: 'one JSON line per target' } });
  const { scenario: id = 'S3', targets = 'replay', json, url, ...rest } = raw as Record<string, unknown>;
  // The commit is taken before anything runs: the figure names the code that ran.
  const meta = { commit: currentCommit(), loadavg: loadavg().map((x) => Math.round(x * 100) / 100) };
  if (url !== undefined && !isAllowedTargetUrl(String(url))) throw invalidOption('url', `--url must be a loopback URL; got ${JSON.stringify(url)}`);
  const mod = SCENARIOS[String(id)];
  if (!mod) throw new Error(`--scenario must be one of ${Object.keys(SCENARIOS).join(', ')}`);
  const opts = mod.parse(rest);
  const out: ScenarioResult[] = [];
  for (const name of String(targets).split(',')) {
    const r = await mod.run({ target: getTarget(name), seed: Date.now() % 1e9, ...(url !== undefined ? { url: String(url) } : {}), signal: new AbortController().signal, log: (l) => process.stderr.write(l + '\n'), progress: () => undefined }, opts as never);
    out.push(r);
  }
  if (json) for (const r of out) process.stdout.write(JSON.stringify({ ...meta, loadavgEnd: loadavg().map((x) => Math.round(x * 100) / 100), ...r, steps: r.steps.map(({ latencyEncoded: _e, ...s }) => s) }) + '\n');
  else {
    process.stdout.write(`${mod.title}  commit ${meta.commit}  loadavg at start ${meta.loadavg.join(',')}, at end ${loadavg().map((x) => x.toFixed(2)).join(',')}\n`);
    for (const r of out) {
      process.stdout.write(`\n${r.target}: ${r.headline.name} = ${r.headline.value ?? 'none'} ${r.headline.unit}; ${r.failureMode ?? ''}; valid=${r.validity.valid}\n`);
      console.table(r.steps.map((s) => ({ ...s.step, pass: s.pass, ...s.metrics })));
      for (const f of r.validity.flags) process.stdout.write(`  [${f.severity}] ${f.code}: ${f.message}\n`);
    }
    const heads = out.map((r) => r.headline.value);
    if (out.length > 1 && heads[0]) process.stdout.write(`\nratios vs ${out[0]!.target}: ${out.slice(1).map((r) => `${r.target} ${r.headline.value ? (heads[0]! / r.headline.value).toFixed(2) : 'n/a'}x`).join(', ')}\n`);
  }
  return 0;
});

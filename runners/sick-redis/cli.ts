import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseCliOptions, runCli } from '../../lib/cli.ts';
import { SICK_REDIS_OPTIONS, type Scenario } from './options.ts';
import { runScenario, type SickRedisResult } from './run.ts';

/**
 * `npm run bench:sick-redis -- [--scenarios stall,aof,empty,flood] [--clients 1000] [--out file]`:
 * the scenarios one after the other in one run, a line per goal on stderr, the figure file
 * `{commit, command, measuredAt, results[]}` on stdout (and at --out). Exit 0 when every goal of
 * every scenario is met, 1 otherwise.
 */
function commit(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return dirty ? `${sha}-dirty` : sha;
  } catch {
    return 'unknown';
  }
}

async function main(argv: string[]): Promise<number> {
  const o = parseCliOptions(SICK_REDIS_OPTIONS, argv);
  const measuredAt = new Date().toISOString();
  // The tree measured: read before the run, so a commit made meanwhile is not named instead.
  const sha = commit();
  const results: SickRedisResult[] = [];
  for (const s of o.scenarios.split(',') as Scenario[]) {
    const r = await runScenario(s, o, (l) => process.stderr.write(`[sick-redis] ${l}\n`));
    for (const g of r.goals) process.stderr.write(`[sick-redis] ${s}: ${g.met ? 'met ' : 'MISS'} ${g.goal}: ${JSON.stringify(g.measured)}\n`);
    for (const f of r.validity?.flags ?? []) process.stderr.write(`[sick-redis] ${s}: ${f.severity} ${f.code}: ${f.message}\n`);
    results.push(r);
  }
  const file = { commit: sha, command: `npm run bench:sick-redis -- ${argv.join(' ')}`.trim(), measuredAt, results };
  const text = JSON.stringify(file, null, 2) + '\n';
  if (o.out) {
    mkdirSync(dirname(o.out), { recursive: true });
    writeFileSync(o.out, text);
    process.stderr.write(`[sick-redis] wrote ${o.out}\n`);
  }
  process.stdout.write(text);
  return results.every((r) => r.goalsMet) ? 0 : 1;
}

// A bounded run (`timeout 600 ...`) ends with SIGTERM: exit so the reaper kills redis-server, the
// nodes and the client processes instead of leaving them behind.
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => process.exit(130));
runCli(main);

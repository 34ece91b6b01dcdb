import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { resultName } from '../../engine/session/module.ts';
import { sickRedisModule, type SickRedisRun } from '../../runners/sick-redis/module.ts';
import { presenter } from '../presenter.ts';

/** The figure file `{commit, command, measuredAt, results[]}`: stdout, and --out. */
const figureFile = (r: SickRedisRun, command: string) => ({ commit: r.commit, command, measuredAt: r.measuredAt, results: r.results });

/**
 * `npm run bench:sick-redis -- [--scenarios stall,aof,empty,flood] [--clients 1000] [--out file]`:
 * a line per goal on stderr, the figure file on stdout (and at --out). Exit 0 when every goal of
 * every scenario is met, 1 otherwise.
 */
export const sickRedisCli = presenter(sickRedisModule, {
  usage: '[--scenarios stall,aof,empty,flood] [--clients 1000] [--out file]',
  json: 'always',
  fileName: () => resultName('sick-redis'),
  command: (o) => ({ values: { ...o, scenarios: o.scenarios.join(',') } }),
  jsonView: (r, _file, command) => figureFile(r, command),
  async report(file, r, command, o) {
    if (!o.out) return `results: ${file}\n`;
    mkdirSync(dirname(o.out), { recursive: true });
    writeFileSync(o.out, JSON.stringify(figureFile(r, command), null, 2) + '\n');
    return `results: ${file}\n[sick-redis] wrote ${o.out}\n`;
  },
  exitCode: (r) => (r.results.every((x) => x.goalsMet) ? 0 : 1),
  logLine: (l) => `[sick-redis] ${l}`,
});

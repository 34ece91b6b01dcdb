import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempResultsDir } from '../shards/runner/testing.ts';

/** `npm run bench:capacity` as a user runs it: the real CLI process, real targets. */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const cli = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, ['--import', 'tsx', 'cli/capacity.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 120_000 });

describe('bench:capacity CLI', () => {
  it('--json prints only the result; results and the HTML report are written', { timeout: 120_000 }, () => {
    const dir = tempResultsDir();
    const p = cli(['--targets', 'ws,replay', '--scenarios', 's6', '--s6-connections', '20', '--s6-streams', '2', '--s6-interval-ms', '100', '--s6-pre-stop-sec', '0.5', '--json'], { RESULTS_DIR: dir });
    expect(p.status, p.stderr).toBe(0);
    const run = JSON.parse(p.stdout);
    expect(run).toMatchObject({ test: 'capacity', targets: ['ws', 'replay'], scenarios: ['S6'] });
    expect(run.results.map((r: { target: string; steps: { metrics: { mostTold: string } }[] }) => [r.target, r.steps[0]!.metrics.mostTold])).toEqual([
      ['ws', 'close 1012'],
      ['replay', 'disconnect server_restart'],
    ]);
    const files = readdirSync(dir);
    const json = files.find((f) => f.endsWith('.json'))!;
    expect(JSON.parse(readFileSync(join(dir, json), 'utf8')).results).toHaveLength(2);
    expect(existsSync(join(dir, json.replace(/\.json$/, '.html')))).toBe(true);
    expect(readFileSync(join(dir, json.replace(/\.json$/, '.html')), 'utf8')).toContain('S6 graceful stop under load');
  });

  it('prints the side-by-side table with ratios and what the figures do not show', { timeout: 120_000 }, () => {
    const p = cli(['--targets', 'ws,socketio', '--scenarios', 'S6', '--s6-connections', '20', '--s6-streams', '2', '--s6-pre-stop-sec', '0.5'], { RESULTS_DIR: tempResultsDir() });
    expect(p.status, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/\| Metric \| ws \| socketio \| Best \| ws\/socketio \|/);
    // Equal stop times (both a few ms at this size) are a tie, named as such.
    expect(p.stdout).toMatch(/\| S6: SIGTERM to exit under load \(ms, lower better\) \| \d[\d,]* \| \d[\d,]* \| (ws|socketio|tie \(ws, socketio\)) \| \d+\.\d\d \|/);
    expect(p.stdout).toContain('## What these figures do not show');
    expect(p.stdout).toContain("loader and server share this machine's two cores");
  });

  it.each([
    [['--targets', 'nope'], 'RR_ERR_TARGET_UNKNOWN', 'unknown target'],
    [['--targets', 'ws,ws'], 'RR_ERR_OPTION_INVALID', 'listed twice'],
    [['--scenarios', 'S9'], 'RR_ERR_OPTION_INVALID', 'unknown scenario "S9"'],
    [['--s1-counts', '10k'], 'RR_ERR_OPTION_INVALID', 's1Counts'],
    [['--s2-steps', '200,100', '--scenarios', 'S2'], 'RR_ERR_OPTION_INVALID', 'ascending'],
    [['--s1-runs', '0'], 'RR_ERR_OPTION_INVALID', 'must be >= 1'],
    [['--url', 'http://10.0.0.1:8080', '--targets', 'ws'], 'RR_ERR_OPTION_INVALID', 'loopback'],
    [['--url', 'http://127.0.0.1:8080'], 'RR_ERR_OPTION_INVALID', 'exactly one'],
    [['--frobnicate', '1'], 'RR_ERR_OPTION_UNKNOWN', 'frobnicate'],
  ] as [string[], string, string][])('bad input %j exits 2 with %s', (args, code, words) => {
    const p = cli(args, { REBOUND_ALLOW_REMOTE_TARGETS: '' });
    expect(p.status, p.stderr).toBe(2);
    expect(p.stderr).toContain(`error ${code}`);
    expect(p.stderr).toContain(words);
    expect(p.stdout).toBe('');
  });
});

import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { comparisonRows } from '../runners/jitter/table.ts';
import type { JitterResult } from '../runners/jitter/result.ts';
import { sigtermWhilePublishing } from './testing.ts';
import { jsonWsServer } from '../examples/targets/servers.ts';

/** `npm run bench` as a user runs it, at a tiny size: a raw ws target and the replay server. */
const bench = (args: string[], env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('node', ['--import', 'tsx', 'cli/bench.ts', ...args], { env: { ...process.env, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });

describe('npm run bench', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rebound-bench-'));
  const run = bench(['--targets', 'ws,replay', '--clients', '4', '--msgs', '12', '--interval', '400', '--jitter', '0', '--settle', '1000', '--seed', '77', '--json'], { RESULTS_DIR: dir });

  it('prints progress lines on stderr while publishing and only the JSON on stdout', async () => {
    const r = await run;
    expect(r.code, r.stderr).toBe(0);
    const progress = r.stderr.split('\n').filter((l) => / published \d+\/12/.test(l));
    // 12 messages x 400 ms: about two lines per run, three runs.
    expect(progress.length, r.stderr).toBeGreaterThanOrEqual(3);
    for (const l of progress) expect(l).toMatch(/^\[(ws|replay|replay \(tuned\))\] published \d+\/12, connected \d+\/4, delivered [\d.]+%, drops \d+, loop lag p99 [\d.]+ ms \(max [\d.]+ ms\)$/);
    expect(Array.isArray(JSON.parse(r.stdout))).toBe(true);
  });

  it('adds a tuned run, same seed, for library-driven targets only, and labels its column', async () => {
    const results = JSON.parse((await run).stdout) as JitterResult[];
    expect(results.map((x) => [x.target, x.params.reconnectStrategy, x.seed])).toEqual([
      ['ws', 'default', 77],
      ['replay', 'default', 77],
      ['replay', 'tuned', 77],
    ]);
    expect(comparisonRows(results)[0]).toEqual(['', 'ws', 'replay', 'replay (tuned)']);
    for (const x of results) expect(x).toMatchObject({ deliveryRatePct: 100, published: 12, validity: { valid: true } });
  });

  it('writes a summary JSON naming the commit and the command next to the full results', async () => {
    await run;
    const file = readdirSync(dir).find((f) => f.endsWith('.summary.json'))!;
    const s = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    expect(s.commit).toMatch(/^[0-9a-f]{12}(-dirty)?$/);
    expect(s.command).toMatch(/^npm run bench -- --targets ws,replay .*--seed 77 --json$/);
    expect(s.results).toHaveLength(3);
    expect(s.results[0].latencyHistogram.histogram).toBeUndefined();
  });
});

describe('npm run bench stopped by SIGTERM', () => {
  it('writes the run in progress as a partial result flagged ABORTED, skips the remaining targets, and the page does not blame the target', { timeout: 90_000 }, async () => {
    const run = await sigtermWhilePublishing('cli/bench.ts', ['--targets', 'ws,replay', '--clients', '4', '--msgs', '300', '--interval', '100', '--jitter', '0', '--settle', '1000', '--seed', '5', '--json']);
    // The first target's progress line ("[ws] publish:") is the one that arrives first.
    expect(run.stderr).toContain('[ws] publish:');
    expect(run.code, run.stderr).toBe(2);
    const results = JSON.parse(run.stdout) as JitterResult[];
    expect(results.map((x) => x.target)).toEqual(['ws']);
    expect(results[0]!.aborted).toBe(true);
    // RUNNER_LOOP_LAG (a loaded box) blames the runner, never the target: filtered as in the other runner tests.
    expect(results[0]!.validity.flags.map((f) => f.code).filter((c) => c !== 'RUNNER_LOOP_LAG')).toEqual(['ABORTED']);
    const html = run.html;
    expect(html).toContain('The run was stopped before its end');
    expect(html).not.toContain('The target refused');
  });
});

describe('npm run bench -- --target-module <file> --url <server>', () => {
  it("runs the main job's jitter column for the user's target against that server alone: same JSON, same table, the command kept", { timeout: 120_000 }, async () => {
    const server = await jsonWsServer();
    const dir = mkdtempSync(join(tmpdir(), 'rebound-bench-module-'));
    try {
      const args = ['--target-module', 'examples/targets/json-ws.ts', '--url', server.url, '--clients', '4', '--msgs', '12', '--interval', '300', '--jitter', '0', '--settle', '1000', '--seed', '78'];
      const [json, table] = await Promise.all([bench([...args, '--json'], { RESULTS_DIR: dir }), bench(args, { RESULTS_DIR: dir })]);
      expect(json.code, json.stderr).toBe(0);
      const results = JSON.parse(json.stdout) as (JitterResult & { targetModule?: unknown })[];
      expect(results.map((x) => [x.target, x.seed])).toEqual([['json-ws', 78]]);
      expect(results[0]).toMatchObject({ deliveryRatePct: 100, published: 12, connectedClients: 4, validity: { valid: true }, targetModule: { faults: [] } });
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toContain('Resilience comparison');
      expect(table.stdout.split('\n').find((l) => l.includes('json-ws'))).toBeDefined();
      const summary = readdirSync(dir).find((f) => f.endsWith('.summary.json'))!;
      expect(JSON.parse(readFileSync(join(dir, summary), 'utf8')).command).toMatch(/^npm run bench -- --target-module examples\/targets\/json-ws\.ts --url http:\/\/127\.0\.0\.1:\d+ /);
    } finally {
      await server.close();
    }
  });

  it('--url with only built-ins, or a target file without --url, is refused with exit 2 before anything runs', async () => {
    const [builtins, noUrl] = await Promise.all([bench(['--targets', 'ws', '--url', 'http://127.0.0.1:9'], {}), bench(['--target-module', 'examples/targets/json-ws.ts'], {})]);
    expect(builtins.code).toBe(2);
    expect(builtins.stderr).toContain('RR_ERR_OPTION_INVALID: --url is the server of a target without a local service (a --target-module target); ws start their own');
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('RR_ERR_OPTION_INVALID: target "json-ws" has no local service: give its server with --url');
  });
});

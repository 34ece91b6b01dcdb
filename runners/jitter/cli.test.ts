import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sigtermWhilePublishing } from '../../cli/testing.ts';

/** The CLI as a user runs it: exit codes, stderr messages, clean --json on stdout, files in results/. */
const cli = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('node', ['--import', 'tsx', 'cli/jitter.ts', ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });

describe('bench:jitter CLI', () => {
  it.each([
    [['--target', 'nope'], /RR_ERR_TARGET_UNKNOWN: unknown target "nope"; known targets: .*socketio/],
    [['--target', 'ws', '--clients', 'many'], /RR_ERR_OPTION_INVALID: CLI option "clients" must be a number/],
    [['--target', 'ws', '--interval', '-5'], /RR_ERR_OPTION_INVALID: CLI option "interval" must be >= 1/],
    [['--target', 'ws', '--wat', '1'], /RR_ERR_OPTION_UNKNOWN/],
    [['--target'], /needs a value/],
    [['--target', 'ws', '--weather', 'good-wifi:60,snow:40'], /RR_ERR_WEATHER_INVALID: unknown weather condition "snow"; conditions: good-wifi, congested-wifi/],
    [['--target', 'ws', '--weather', 'good-wifi:60,lte:30'], /RR_ERR_WEATHER_INVALID: weather shares sum to 90, not 100/],
    [['--target', 'ws', '--weather', 'good-wifi:sixty'], /RR_ERR_WEATHER_INVALID: malformed weather share/],
    [['--target', 'ws', '--weather', 'lte:100', '--plan', 'blackhole'], /RR_ERR_WEATHER_INVALID: --weather takes the place of network plans/],
    [['--target', 'ws', '--weather', 'subway:100', '--url', 'https://127.0.0.1:9'], /RR_ERR_WEATHER_NEEDS_PROXY: weather subway:100 runs its clients through a proxy/],
    [['--target', 'ws', '--plan', 'reset', '--url', 'https://127.0.0.1:9'], /RR_ERR_WEATHER_NEEDS_PROXY: plan reset runs its clients through a proxy/],
    [['--target', 'ws', '--weather', 'good-wifi:50,deploy:50', '--url', 'http://127.0.0.1:9'], /RR_ERR_WEATHER_NEEDS_RESTART: weather good-wifi:50,deploy:50 has a deploy, which restarts the target, and "http:\/\/127.0.0.1:9" is a server this runner did not start: set AVALANCHE_RESTART_COMMAND/],
    [['--target', 'ws', '--weather', 'good-wifi:50,deploy:50', '--workers', '2', '--clients', '4'], /RR_ERR_WEATHER_NEEDS_RESTART: weather good-wifi:50,deploy:50 has a deploy, which restarts the target once from the process that holds it: run it with --workers 1/],
  ])('%j exits 2 with a clear error', async (args, msg) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(msg);
    expect(r.stdout).toBe('');
  });

  it('rejects a bad env var by name', async () => {
    const r = await cli(['--target', 'ws'], { NUM_CLIENTS: 'x' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/NUM_CLIENTS/);
  });

  it('--json prints only the result JSON and writes JSON + CSV results', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rebound-results-'));
    const r = await cli(['--target', 'ws', '--clients', '5', '--msgs', '5', '--interval', '50', '--jitter', '0', '--settle', '500', '--json'], { RESULTS_DIR: dir });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({ test: 'jitter', target: 'ws', deliveryRatePct: 100, expectedDeliveries: 25, lostDeliveries: 0 });
    const files = readdirSync(dir);
    expect(files.some((f) => f.endsWith('.json'))).toBe(true);
    // The visual report sits next to the JSON under the same name.
    const base = files.find((f) => f.endsWith('.json'))!.replace(/\.json$/, '');
    expect(files).toContain(`${base}.html`);
    expect(r.stderr).toContain(`report: ${join(dir, base)}.html`);
    const csv = readFileSync(join(dir, files.find((f) => f.endsWith('.csv'))!), 'utf8').split('\n');
    expect(csv[0]).toContain('deliveryRatePct');
    expect(csv[1]).toContain('ws');
  });

  it('SIGTERM mid-run writes the partial result, flagged ABORTED, and its report does not blame the target', { timeout: 60_000 }, async () => {
    const run = await sigtermWhilePublishing('cli/jitter.ts', ['--target', 'ws', '--clients', '5', '--msgs', '300', '--interval', '100', '--jitter', '0', '--settle', '1000', '--json']);
    expect(run.code, run.stderr).toBe(2); // an invalid run, as for any fatal flag
    const result = JSON.parse(run.stdout);
    expect(result.aborted).toBe(true);
    expect(result.published).toBeGreaterThan(0);
    expect(result.published).toBeLessThan(300);
    expect(result.validity.flags.map((f: { code: string }) => f.code)).toEqual(['ABORTED']);
    const html = run.html;
    expect(html).toContain('The run was stopped before its end');
    expect(html).not.toContain('The target refused');
  });
});

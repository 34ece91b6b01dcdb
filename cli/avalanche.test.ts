import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The CLIs as a user runs them: exit codes, coded errors on stderr, results written. */
const cli = (script: string, args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('node', ['--import', 'tsx', script, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });

describe('bench:avalanche and bench:deploy-impact CLIs', () => {
  it.each([
    ['cli/avalanche.ts', ['--target', 'ws', '--restart', 'command'], /RR_ERR_OPTION_INVALID: --restart command needs AVALANCHE_RESTART_COMMAND/],
    ['cli/avalanche.ts', ['--target', 'ws', '--restart', 'rolling', '--nodes', '1'], /RR_ERR_OPTION_INVALID: --restart rolling needs several nodes/],
    ['cli/avalanche.ts', ['--target', 'nope'], /RR_ERR_TARGET_UNKNOWN/],
    ['cli/deploy-impact.ts', ['--target', 'ws', '--clients', 'x'], /RR_ERR_OPTION_INVALID: CLI option "clients" must be a number/],
  ])('%s %j exits 2 with a clear error', async (script, args, msg) => {
    const r = await cli(script, args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(msg);
    expect(r.stdout).toBe('');
  });

  it('a failing restart command prints its coded error, writes the invalid result and exits 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rr-avalanche-'));
    const r = await cli('cli/avalanche.ts', ['--target', 'ws', '--restart', 'command', '--clients', '5', '--warmup-ms', '500', '--publish-after-ms', '1000', '--recovery-timeout-ms', '2000', '--settle-ms', '0', '--json'], {
      AVALANCHE_RESTART_COMMAND: 'echo deploy refused >&2; exit 7',
      RESULTS_DIR: dir,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/error RR_ERR_RESTART_FAILED: restart command failed \(exit 7\): deploy refused/);
    const out = JSON.parse(r.stdout) as { validity: { valid: boolean; flags: { code: string }[] }; restart: { ok: boolean } };
    expect(out.validity.valid).toBe(false);
    expect(out.validity.flags.map((f) => f.code)).toContain('RESTART_FAILED');
    const file = readdirSync(dir).find((f) => f.endsWith('.json'))!;
    expect(JSON.parse(readFileSync(join(dir, file), 'utf8')).restart.ok).toBe(false);
  });
});

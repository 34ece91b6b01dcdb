import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempResultsDir } from './testing.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Start the runner with HOST removed from its environment (not just empty) and collect its first line or its exit. */
function run(env: Record<string, string>): Promise<{ line?: { host: string; port: number }; code?: number | null; stderr: string; stop: () => void }> {
  const base = { ...process.env };
  delete base.HOST;
  const child = spawn(process.execPath, ['--import', 'tsx', 'shards/runner/main.ts'], { cwd: ROOT, env: { ...base, PORT: '0', RESULTS_DIR: tempResultsDir(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const stop = () => (clearTimeout(kill), child.kill('SIGTERM'));
  return new Promise((r) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) r({ line: JSON.parse(out.slice(0, nl)), stderr: err, stop });
    });
    child.once('exit', (code) => (clearTimeout(kill), r({ code, stderr: err, stop })));
  });
}

describe('runner bind address on Railway', () => {
  it('HOST unset on Railway binds "::" (dual stack) and so needs the token', async () => {
    const open = await run({ RAILWAY_ENVIRONMENT_ID: 'env-1', BENCH_RUNNER_TOKEN: '' });
    expect(open.code).toBe(2);
    expect(open.stderr).toContain('refusing to listen on ::');

    const r = await run({ RAILWAY_ENVIRONMENT_ID: 'env-1', BENCH_RUNNER_TOKEN: 't'.repeat(32) });
    try {
      expect(r.line?.host).toBe('::');
      // A dual-stack bind answers IPv4 loopback too.
      expect((await fetch(`http://127.0.0.1:${r.line!.port}/health`)).status).toBe(200);
    } finally {
      r.stop();
    }
  });

  it('off Railway, or with HOST given, the default and the given host stand', async () => {
    const r = await run({ BENCH_RUNNER_TOKEN: '' });
    try {
      expect(r.line?.host).toBe('127.0.0.1');
    } finally {
      r.stop();
    }
    const given = await run({ RAILWAY_ENVIRONMENT_ID: 'env-1', BENCH_RUNNER_TOKEN: '', HOST: '127.0.0.1' });
    try {
      expect(given.line?.host).toBe('127.0.0.1');
    } finally {
      given.stop();
    }
  });
});

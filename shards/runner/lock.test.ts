import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { childPids, isAlive } from '../../services/common/process-info.ts';
import { waitUntil } from '../../lib/time.ts';
import { api, runnerExit, startRunner, tempResultsDir } from './testing.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('one runner per RESULTS_DIR', () => {
  it('a second runner on the same RESULTS_DIR refuses to start and names the live owner', async () => {
    const dir = tempResultsDir();
    const first = await startRunner({ RESULTS_DIR: dir });
    try {
      const second = await runnerExit({ RESULTS_DIR: dir });
      expect(second.code).toBe(2);
      expect(second.stderr).toContain('RR_ERR_RUNNER_LOCKED');
      expect(second.stderr).toContain(`pid ${first.child.pid}`);
      // The first one is untouched and still owns the lock.
      expect((await api(first.url, '/health')).status).toBe(200);
      expect(JSON.parse(readFileSync(join(dir, 'runner.lock'), 'utf8')).pid).toBe(first.child.pid);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    expect(existsSync(join(dir, 'runner.lock'))).toBe(false);
  });

  it('a stale lock from a dead pid is taken over', async () => {
    const dir = tempResultsDir();
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    expect(isAlive(dead)).toBe(false);
    writeFileSync(join(dir, 'runner.lock'), JSON.stringify({ pid: dead, host: hostname(), startedAt: 'earlier' }));
    const r = await startRunner({ RESULTS_DIR: dir });
    expect(JSON.parse(readFileSync(join(dir, 'runner.lock'), 'utf8')).pid).toBe(r.child.pid);
    expect(await r.stop()).toBe(0);
  });

  it('a lock file that is JSON but not an owner (null, a number, an array) is stale, not a crash', async () => {
    for (const junk of ['null', '5', '[]']) {
      const dir = tempResultsDir();
      writeFileSync(join(dir, 'runner.lock'), junk);
      const r = await startRunner({ RESULTS_DIR: dir });
      expect(JSON.parse(readFileSync(join(dir, 'runner.lock'), 'utf8')).pid).toBe(r.child.pid);
      expect(await r.stop()).toBe(0);
    }
  });
});

describe('npm run serve:runner', () => {
  it('execs the runner: SIGTERM to the npm pid stops it and npm exits 0', async () => {
    const npm = spawn('npm', ['run', '-s', 'serve:runner', '--', '--port', '0'], { cwd: ROOT, env: { ...process.env, RESULTS_DIR: tempResultsDir() }, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) => npm.once('exit', (code, signal) => r({ code, signal })));
    await waitUntil(() => out.includes('"type":"listening"'), 30_000, 'runner listening');
    const { pid, port } = JSON.parse(out.split('\n')[0]!) as { pid: number; port: number };
    expect(childPids(npm.pid!)).toEqual([pid]);
    npm.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    await waitUntil(() => !isAlive(pid), 10_000, 'runner exit');
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  });
});

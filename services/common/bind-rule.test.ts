import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { uwsAvailability } from '../uws/load.ts';
import { bindHost } from './service-main.ts';

/**
 * The servers under test refuse to bind beyond loopback without BROADCAST_KEY unless --public,
 * and bind `::` on Railway when HOST is unset. Real processes: the rule sits in serviceMain,
 * between option parsing and listening.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// uws where its binary loads (elsewhere it refuses to start for that reason first).
const MAINS = { ws: 'services/ws/main.ts', ...(uwsAvailability().available ? { uws: 'services/uws/main.ts' } : {}), socketio: 'services/socketio/main.ts', replay: 'services/replay-server/main.ts' };

function start(main: string, env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(HOST|PORT|BROADCAST_KEY|RAILWAY_.*)$/.test(k)));
  const child = spawn(process.execPath, ['--import', 'tsx', main, '--port', '0', ...args], { cwd: ROOT, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      // Listening: the rule let it through. Stop it and report what it bound.
      if (stdout.includes('"listening"')) child.kill('SIGTERM');
    });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
const listening = (stdout: string) => JSON.parse(stdout.split('\n').find((l) => l.includes('"listening"'))!) as { host: string; port: number };

describe('bind rule of the servers under test', () => {
  it.each(Object.entries(MAINS))('%s: HOST=0.0.0.0 without BROADCAST_KEY exits 2 naming it', async (_n, main) => {
    const r = await start(main, { HOST: '0.0.0.0' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/refusing to bind 0\.0\.0\.0 without BROADCAST_KEY/);
  }, 30_000);

  it('ws: with BROADCAST_KEY or --public it listens; loopback needs neither', async () => {
    expect(listening((await start(MAINS.ws, { HOST: '0.0.0.0', BROADCAST_KEY: 'k' })).stdout).host).toBe('0.0.0.0');
    expect(listening((await start(MAINS.ws, { HOST: '0.0.0.0' }, ['--public'])).stdout).host).toBe('0.0.0.0');
    expect(listening((await start(MAINS.ws, {})).stdout).host).toBe('127.0.0.1');
  }, 30_000);

  it('replay on Railway with HOST unset binds :: (dual stack); an explicit HOST wins', async () => {
    const r = await start(MAINS.replay, { RAILWAY_ENVIRONMENT_ID: 'env-1', BROADCAST_KEY: 'k' });
    expect(listening(r.stdout).host).toBe('::');
    const without = await start(MAINS.replay, { RAILWAY_ENVIRONMENT_ID: 'env-1' });
    expect([without.code, without.stderr]).toEqual([2, expect.stringContaining('refusing to bind :: without BROADCAST_KEY')]);
    expect(listening((await start(MAINS.replay, { RAILWAY_ENVIRONMENT_ID: 'env-1', HOST: '127.0.0.1' })).stdout).host).toBe('127.0.0.1');
  }, 30_000);

  it('bindHost: loopback forms pass, others need a key or public', () => {
    for (const host of ['127.0.0.1', '::1', '[::1]', 'localhost']) expect(bindHost({ host, broadcastKey: '', public: false }, true, {})).toBe(host);
    expect(() => bindHost({ host: '::', broadcastKey: '', public: false }, true, {})).toThrow(/BROADCAST_KEY/);
    expect(bindHost({ host: '127.0.0.1', broadcastKey: 'k', public: false }, false, { RAILWAY_SERVICE_ID: 's' })).toBe('::');
  });
});

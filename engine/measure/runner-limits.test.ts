import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { io } from 'socket.io-client';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { classifyConnectError, openFileLimit } from './runner-limits.ts';

/** Real errors from the real libraries, and a real runner run out of file descriptors. */

// A documentation-range source address: bind() fails locally with EADDRNOTAVAIL, nothing is sent.
const NOT_LOCAL = '192.0.2.1';

describe('classifyConnectError', () => {
  it('sees port exhaustion through ws and through socket.io-client wrapping', async () => {
    const wsErr = await new Promise<unknown>((resolve) => new WebSocket('ws://127.0.0.1:9/ws', { localAddress: NOT_LOCAL }).on('error', resolve));
    expect(classifyConnectError(wsErr)).toBe('port_exhaustion');
    const sioErr = await new Promise<unknown>((resolve) => {
      const s = io('http://127.0.0.1:9', { transports: ['websocket'], reconnection: false, localAddress: NOT_LOCAL } as Parameters<typeof io>[1]);
      s.on('connect_error', (e) => {
        s.close();
        resolve(e);
      });
    });
    expect(classifyConnectError(sioErr)).toBe('port_exhaustion');
  });

  it('leaves the target\'s own failures alone', async () => {
    const refused = await new Promise<unknown>((resolve) => new WebSocket('ws://127.0.0.1:9/ws').on('error', resolve));
    expect(classifyConnectError(refused)).toBeUndefined();
    expect(classifyConnectError(undefined)).toBeUndefined();
    expect(classifyConnectError(Object.assign(new Error('x'), { code: 'EMFILE' }))).toBe('fd_limit');
  });

  it('reads the open-file limit', () => {
    expect(openFileLimit()).toBeGreaterThan(0);
  });
});

describe('a runner out of file descriptors', () => {
  let svc: ServiceHandle;
  beforeAll(async () => {
    svc = await startService('ws');
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('flags RUNNER_FD_LIMIT instead of blaming the target', async () => {
    // 200 clients under a 160-descriptor limit: the runner, not the server, runs out.
    const cmd = `ulimit -n 160 && exec node --import tsx cli/jitter.ts --target ws --url ${svc.httpUrl} --clients 200 --msgs 3 --interval 100 --jitter 0 --ramp 1000 --settle 500 --json`;
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile('bash', ['-c', cmd], { timeout: 60_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, RESULTS_DIR: '/tmp/rebound-test-results' } }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
    expect(out.code, out.stderr).toBe(2);
    const r = JSON.parse(out.stdout);
    expect(r.runnerOpenFileLimit).toBe(160);
    expect(r.connectFailureCauses.fd_limit).toBeGreaterThan(0);
    expect(r.validity.valid).toBe(false);
    expect(r.validity.flags.map((f: { code: string }) => f.code)).toContain('RUNNER_FD_LIMIT');
    // The server was fine all along.
    expect((await fetch(svc.httpUrl + '/health')).status).toBe(200);
  });
});

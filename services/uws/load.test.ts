/**
 * The optional dependency's two paths: the native binary loads (then it is uWS itself, never the
 * package's JavaScript fallback), or it does not (pointed at a module that does not exist) and
 * `uws` says "not installed here" with the reason, the server refusing to start with that code.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_UWS_PACKAGE, loadUws, uwsAvailability } from './load.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MISSING = '/nonexistent/uWebSockets.js';

describe('uWS loader', () => {
  it('a module that is not there: not installed here, with the reason', () => {
    const r = loadUws(MISSING);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/^uWebSockets\.js not installed here \(\/nonexistent\/uWebSockets\.js\): Cannot find module/);
    expect(uwsAvailability(MISSING)).toEqual({ available: false, reason: expect.stringContaining('not installed here') });
  });

  it('a module that loads but is not uWS is refused too', () => {
    const r = loadUws('node:path');
    expect(r).toEqual({ ok: false, reason: expect.stringContaining('does not export uWebSockets.js') });
  });

  it.skipIf(!loadUws().ok)('the pinned package loads its native binary, not its JavaScript fallback', () => {
    const r = loadUws(DEFAULT_UWS_PACKAGE);
    expect(r.ok && r.from).toMatch(new RegExp(`binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}\\.node$`));
    expect(r.ok && typeof r.uws.us_listen_socket_close).toBe('function');
  });

  it('the server, pointed at a missing module, exits 2 with RR_ERR_TARGET_UNAVAILABLE and the reason', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'services/uws/main.ts', '--port', '0'], { cwd: ROOT, env: { ...process.env, UWS_MODULE: MISSING }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toMatch(/^uws: RR_ERR_TARGET_UNAVAILABLE: uWebSockets\.js not installed here \(\/nonexistent\/uWebSockets\.js\)/);
  });
});

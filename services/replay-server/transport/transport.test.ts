/**
 * Choosing the transport: `ws` never touches uWS; `uws` where uWebSockets.js does not load is a
 * clear "not installed here" error (RR_ERR_TARGET_UNAVAILABLE) that stops the process with exit 2;
 * `auto` falls back to ws with a one-line notice. The missing binary is simulated by pointing
 * the loader at a module that is not there (UWS_MODULE, services/uws/load.ts).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ReboundError } from '../../../lib/errors.ts';
import { loadUws } from '../../uws/load.ts';
import { startTestServer } from '../testing.ts';
import { resolveTransport } from './index.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MISSING = '/nonexistent/uWebSockets.js';

function runMain(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/replay-server/main.ts', '--port', '0', ...args], { cwd: ROOT, env: { ...process.env, UWS_MODULE: MISSING, REPLAY_TRANSPORT: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
    // `auto` came up (on ws): its notice and the listening line are all this test needs.
    if (/listening/.test(out + err)) child.kill('SIGTERM');
  });
  child.stdout.on('data', () => {
    if (/listening/.test(out)) child.kill('SIGTERM');
  });
  return new Promise((r) => child.once('exit', (code) => r({ code, out, err })));
}

describe('transport choice', () => {
  it('uws where the binary does not load: RR_ERR_TARGET_UNAVAILABLE, "not installed here" with the reason', () => {
    let e: unknown;
    try {
      resolveTransport('uws', MISSING);
    } catch (err) {
      e = err;
    }
    expect(e).toBeInstanceOf(ReboundError);
    expect((e as ReboundError).code).toBe('RR_ERR_TARGET_UNAVAILABLE');
    expect((e as Error).message).toMatch(/^transport uws: uWebSockets\.js not installed here \(\/nonexistent\/uWebSockets\.js\): Cannot find module/);
  });

  it('ws is ws whether or not uWS loads; auto is uws where it loads', () => {
    expect(resolveTransport('ws', MISSING)).toBe('ws');
    expect(resolveTransport('auto')).toBe(loadUws().ok ? 'uws' : 'ws');
  });

  it('serve:replay --transport uws without the binary exits 2 with the error; auto falls back to ws with one notice', async () => {
    const uws = await runMain(['--transport', 'uws']);
    expect(uws.code).toBe(2);
    expect(uws.err).toMatch(/RR_ERR_TARGET_UNAVAILABLE: transport uws: uWebSockets\.js not installed here/);
    const auto = await runMain(['--transport', 'auto']);
    const notices = auto.err.split('\n').filter((l) => l.startsWith('replay: transport ws (uws unavailable: uWebSockets.js not installed here'));
    expect(notices).toHaveLength(1);
    expect(auto.out + auto.err).toMatch(/listening/);
  });

  it.each<'ws' | 'uws'>(['ws', ...(loadUws().ok ? (['uws'] as const) : [])])('/metrics says which transport serves (%s)', async (transport) => {
    const t = await startTestServer({ transport });
    try {
      const m = (await (await fetch(`${t.httpUrl}/metrics`)).json()) as { transport?: string };
      expect(m.transport).toBe(transport);
      expect(t.srv.transport).toBe(transport);
    } finally {
      await t.close();
    }
  });
});

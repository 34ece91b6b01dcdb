/**
 * soketi is installed on demand (npm run install:soketi): where it is not, the service and the
 * target say "not installed here" with that command, the server exiting 2 with
 * RR_ERR_TARGET_UNAVAILABLE before it touches a port. Also the one start-up refusal of its own
 * options (a public port with soketi's well-known secret).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { locateSoketi, soketiAvailability } from './load.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EMPTY = mkdtempSync(join(tmpdir(), 'rr-no-soketi-'));
afterAll(() => rmSync(EMPTY, { recursive: true, force: true }));

async function runMain(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/soketi/main.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  return { code, out, err };
}

describe('soketi loader', () => {
  it('a directory without soketi: not installed here, with the install command', () => {
    expect(locateSoketi(EMPTY)).toEqual({ ok: false, reason: `soketi not installed here: run \`npm run install:soketi\` (no @soketi/soketi under ${EMPTY})` });
    expect(soketiAvailability(EMPTY)).toEqual({ available: false, reason: expect.stringMatching(/^soketi not installed here: run `npm run install:soketi`/) });
  });

  it('the server, pointed (SOKETI_DIR) at a directory without soketi, exits 2 with RR_ERR_TARGET_UNAVAILABLE and the command', async () => {
    const r = await runMain(['--port', '0'], { SOKETI_DIR: EMPTY });
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(`soketi: RR_ERR_TARGET_UNAVAILABLE: soketi not installed here: run \`npm run install:soketi\` (no @soketi/soketi under ${EMPTY})\n`);
  });

  it.skipIf(!soketiAvailability().available)('installed: found with the native uWS binary its uWebSockets.js would load', () => {
    const r = locateSoketi();
    expect(r.ok && r.uwsBinary).toMatch(new RegExp(`binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}\\.node$`));
  });

  it.skipIf(!soketiAvailability().available)('a non-loopback host with the default app secret is refused (exit 2, naming the variable) unless --public', async () => {
    const r = await runMain(['--port', '0', '--host', '0.0.0.0']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^soketi: RR_ERR_OPTION_INVALID: refusing to bind 0\.0\.0\.0 with soketi's default app secret.*SOKETI_DEFAULT_APP_SECRET/);
  });
});

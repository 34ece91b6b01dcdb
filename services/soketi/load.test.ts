/**
 * soketi is installed on demand (npm run install:soketi): where it is not, the service and the
 * target say "not installed here" with that command, the server exiting 2 with
 * RR_ERR_TARGET_UNAVAILABLE before it touches a port. Also the start-up refusals of its own
 * options (a public port with soketi's well-known secret; several processes).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { locateSoketi, SOKETI_NO_WORKERS, soketiAvailability } from './load.ts';
import { SOKETI_OPTIONS } from './server.ts';

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

  it.skipIf(!soketiAvailability().available)('--workers 2 is refused (exit 2) with the reason the target declares as noWorkers', async () => {
    const r = await runMain(['--port', '0', '--workers', '2']);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`soketi: RR_ERR_OPTION_INVALID: --workers 2: ${SOKETI_NO_WORKERS}\n`);
  });

  it('every option is in docs/soketi.md and every env var in docs/env.md', () => {
    const env = readFileSync(join(ROOT, 'docs/env.md'), 'utf8');
    const doc = readFileSync(join(ROOT, 'docs/soketi.md'), 'utf8');
    const kebab = (k: string) => k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
    for (const [k, spec] of Object.entries(SOKETI_OPTIONS)) {
      expect(doc, k).toContain(`\`--${kebab(k)}\``);
      for (const e of (spec as { env?: readonly string[] }).env ?? []) expect(env, e).toContain(`\`${e}\``);
    }
    expect(env).toContain('`SOKETI_DIR`');
  });
});

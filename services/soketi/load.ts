import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { UwsModule } from '../uws/load.ts';

/**
 * Where soketi comes from. It pulls ~300 MB (aws-sdk, pm2, database drivers), so it is not a
 * dependency of the root package: `npm run install:soketi` installs the pinned version into
 * services/soketi/vendor (its own package.json and lock; docs/soketi.md), and `.ci/run` does so
 * before the tests. Where it is not installed the `soketi` service and target say so with that
 * command, and everything else runs.
 *
 * `SOKETI_DIR` points at another install (a directory whose node_modules holds @soketi/soketi).
 */
export const SOKETI_VERSION = '1.6.1';
export const SOKETI_INSTALL_COMMAND = 'npm run install:soketi';
export const DEFAULT_SOKETI_DIR = fileURLToPath(new URL('./vendor/', import.meta.url));

/** The few parts of soketi's Server this tree uses (typed here so typecheck needs no install). */
export interface SoketiServer {
  options: { port: number; host: string };
  closing: boolean;
  /** uWS listen sockets; `false` when uWS could not bind (soketi still calls back then). */
  serverProcess?: unknown;
  metricsServerProcess?: unknown;
  start(callback?: (server: SoketiServer) => void): Promise<void>;
  stop(): Promise<void>;
  configureDiscovery(): Promise<void>;
  configureHttp(server: unknown): Promise<unknown>;
  httpHandler: { healthCheck(res: unknown): void; attachMiddleware(res: unknown, fns: unknown[]): Promise<unknown> };
}
export interface SoketiModule {
  Server: new (options: Record<string, unknown>) => SoketiServer;
  Log: Record<string, unknown>;
}

/**
 * Why the local soketi runs as one process (the target's `noWorkers`). Its uWS listener could share
 * a port (SO_REUSEPORT), but soketi's processes share channels only through its cluster adapter
 * (UDP node discovery, broadcast from 0.0.0.0) or a Redis/NATS adapter, which this service does
 * not run; without one, an event published to one process would never reach another's subscribers.
 */
export const SOKETI_NO_WORKERS = "soketi shares channels between processes only through its UDP-discovery cluster adapter or a Redis/NATS adapter, which the local service does not run: it is one process (the server refuses --workers N)";

export type SoketiLoad = { ok: true; dir: string; packageDir: string; uwsBinary: string } | { ok: false; reason: string };

export const soketiDir = (env: Record<string, string | undefined> = process.env) => resolve(env.SOKETI_DIR || DEFAULT_SOKETI_DIR);

/**
 * Find the pinned soketi and the native uWS binary it will load, without loading soketi itself
 * (its import pulls aws-sdk: ~1 s). The binary is required, as services/uws/load.ts does, so a
 * binary that does not load here is "not installed" rather than the package's slow JavaScript
 * fallback quietly standing in for it.
 */
export function locateSoketi(dir = soketiDir(), loadBinary = true): SoketiLoad {
  const notInstalled = (why: string): SoketiLoad => ({ ok: false, reason: `soketi not installed here: run \`${SOKETI_INSTALL_COMMAND}\` (${why})` });
  const packageDir = join(dir, 'node_modules', '@soketi', 'soketi');
  const pkgFile = join(packageDir, 'package.json');
  if (!existsSync(pkgFile)) return notInstalled(`no @soketi/soketi under ${dir}`);
  let version: unknown;
  try {
    version = (JSON.parse(readFileSync(pkgFile, 'utf8')) as { version?: unknown }).version;
  } catch (err) {
    return notInstalled(`${pkgFile} is not readable JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (version !== SOKETI_VERSION) return notInstalled(`found @soketi/soketi ${String(version).slice(0, 40)} under ${dir}, this tree pins ${SOKETI_VERSION}`);
  try {
    const require = createRequire(pkgFile);
    const uwsDir = dirname(require.resolve('uWebSockets.js/package.json'));
    const uwsBinary = join(uwsDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
    if (!loadBinary) {
      if (!existsSync(uwsBinary)) throw new Error(`no ${uwsBinary}`);
      return { ok: true, dir, packageDir, uwsBinary };
    }
    const uws = require(uwsBinary) as UwsModule;
    if (typeof uws?.App !== 'function') throw new Error(`${uwsBinary} does not export uWebSockets.js (no App())`);
    return { ok: true, dir, packageDir, uwsBinary };
  } catch (err) {
    return notInstalled(`its uWebSockets.js does not load: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** Whether the `soketi` service can run on this machine; `reason` (with the install command) when it cannot. */
export function soketiAvailability(dir?: string): { available: boolean; reason?: string } {
  // Files only: a runner asks this for its target list, and a second copy of uWS's native module
  // (the root tree's uws target loads its own) has no business in a runner process. The service
  // process loads the binary itself and exits 2 with the reason if it does not load.
  const r = locateSoketi(dir, false);
  return r.ok ? { available: true } : { available: false, reason: r.reason };
}

/** Load soketi and the uWS binary it uses (the service process only: this is the ~1 s import). */
export function loadSoketi(found: Extract<SoketiLoad, { ok: true }>): { soketi: SoketiModule; uws: UwsModule } {
  const require = createRequire(join(found.packageDir, 'package.json'));
  return { soketi: require(found.packageDir) as SoketiModule, uws: require(found.uwsBinary) as UwsModule };
}

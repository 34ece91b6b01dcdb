import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReboundError } from '../../lib/errors.ts';
import { reapOnExit } from '../../lib/reaper.ts';
import { SERVICE_ENTRIES } from '../../services/common/spawn.ts';
import { processTree } from '../../engine/measure/target-usage.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Entry points the fleet runs, by role. */
export const ENTRIES = {
  runner: 'shards/runner/main.ts',
  idleWorker: 'runners/idle/worker.ts',
  replay: SERVICE_ENTRIES.replay,
  ws: SERVICE_ENTRIES.ws,
  socketio: SERVICE_ENTRIES.socketio,
} as const;
export type FleetTarget = 'replay' | 'ws' | 'socketio';
export const FLEET_TARGETS: readonly FleetTarget[] = ['replay', 'ws', 'socketio'];

/**
 * One JS bundle per entry (esbuild, packages left external), under results/ (git-ignored, and
 * inside the repo so node_modules resolves). Plain `node bundle.mjs` instead of `node --import tsx
 * x.ts`: each tsx process also loads the TypeScript loader and keeps an esbuild service child,
 * ~25-45 MB per process, and the fleet runs ~150 processes at 1M. Rebuilt when a source is newer
 * is not tracked: built once per run (70 ms).
 */
export function buildBundles(dir = join(ROOT, 'results', '.local-fleet-build')): Record<keyof typeof ENTRIES, string> {
  mkdirSync(dir, { recursive: true });
  const esbuild = join(ROOT, 'node_modules', '.bin', 'esbuild');
  if (!existsSync(esbuild)) throw new ReboundError('RR_ERR_SERVICE_START', `esbuild not found at ${esbuild} (it comes with tsx); pass --no-bundle to run the TypeScript entries through tsx`);
  const out = {} as Record<keyof typeof ENTRIES, string>;
  for (const [k, entry] of Object.entries(ENTRIES) as [keyof typeof ENTRIES, string][]) {
    const file = join(dir, `${k}.mjs`);
    const r = spawnSync(esbuild, [join(ROOT, entry), '--bundle', '--platform=node', '--format=esm', '--target=node20', '--packages=external', `--outfile=${file}`, '--log-level=error'], { encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0 || !existsSync(file) || statSync(file).size === 0) throw new ReboundError('RR_ERR_SERVICE_START', `bundling ${entry} failed: ${(r.stderr || r.error?.message || '').slice(0, 500)}`);
    out[k] = file;
  }
  // The report page inlines engine/pages/browser.js, read next to the (bundled) module.
  copyFileSync(join(ROOT, 'engine', 'pages', 'browser.js'), join(dir, 'browser.js'));
  return out;
}

export interface Proc {
  role: string;
  pid: number;
  port: number;
  url: string;
  child: ChildProcess;
  exited: Promise<void>;
  logFile: string;
}

/**
 * Start one service (it prints/sends `{"type":"listening","port"}`), stderr to `logFile`. A bundle
 * runs under plain node, a .ts entry under tsx; `nodeFlags` go to node itself (a cluster
 * primary's workers inherit them with its execArgv).
 */
export function startProc(role: string, entry: string, args: string[], env: Record<string, string>, logFile: string, startTimeoutMs = 120_000, nodeFlags: string[] = []): Promise<Proc> {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = fork(entry, args, { cwd: ROOT, execArgv: [...(entry.endsWith('.ts') ? ['--import', 'tsx'] : []), ...nodeFlags], env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  reapOnExit(child);
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise<Proc>((resolve, reject) => {
    const timer = setTimeout(() => {
      killTree(child.pid);
      reject(new ReboundError('RR_ERR_SERVICE_START', `${role} did not report a port within ${startTimeoutMs} ms (log: ${logFile})`));
    }, startTimeoutMs);
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new ReboundError('RR_ERR_SERVICE_START', `${role} exited before listening (code ${code}, signal ${sig}; log: ${logFile})`));
    });
    child.on('message', (m: { type?: string; port?: number }) => {
      if (m?.type !== 'listening' || typeof m.port !== 'number') return;
      clearTimeout(timer);
      resolve({ role, pid: child.pid!, port: m.port, url: `http://127.0.0.1:${m.port}`, child, exited, logFile });
    });
  });
}

/** SIGKILL these pids, deepest first (a tree as processTree lists it, parent before children). */
function killAll(tree: number[]): void {
  for (const p of [...tree].reverse()) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** SIGKILL a process and every descendant, by pid (each one we started or its children). */
export function killTree(pid: number | undefined): void {
  if (pid) killAll(processTree(pid));
}

/** SIGTERM, wait up to graceMs for the exit, then SIGKILL the whole tree. */
export async function stopProc(p: Proc, graceMs: number): Promise<void> {
  const tree = processTree(p.pid);
  try {
    p.child.kill('SIGTERM');
  } catch {
    // gone
  }
  await Promise.race([p.exited, new Promise((r) => setTimeout(r, graceMs).unref())]);
  // The tree as it was before SIGTERM: children the service leaves behind are reaped too.
  killAll(tree);
}

export const newToken = () => randomBytes(24).toString('hex');

/** Target worker processes the fd limit needs: each holds at most perProcess connections. */
export function targetWorkersFor(n: number, perProcess: number): number {
  return Math.max(1, Math.ceil(n / perProcess));
}

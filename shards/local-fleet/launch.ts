import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReboundError } from '../../lib/errors.ts';
import { killPids, processTree } from '../../services/common/process-info.ts';
import { forkListening, SERVICE_ENTRIES, type ListeningChild } from '../../services/common/spawn.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Entry points the fleet runs, by role. */
export const ENTRIES = {
  runner: 'shards/runner/main.ts',
  idleWorker: 'runners/idle/worker.ts',
  replay: SERVICE_ENTRIES.replay,
  ws: SERVICE_ENTRIES.ws,
  socketio: SERVICE_ENTRIES.socketio,
} as const;

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

export interface Proc extends ListeningChild {
  role: string;
  url: string;
  logFile: string;
}

/**
 * Start one service (it sends `{"type":"listening","port"}`), stdout and stderr to `logFile`. A
 * bundle runs under plain node, a .ts entry under tsx; `nodeFlags` go to node itself (a cluster
 * primary's workers inherit them with its execArgv).
 */
export async function startProc(role: string, entry: string, args: string[], env: Record<string, string>, logFile: string, startTimeoutMs = 120_000, nodeFlags: string[] = []): Promise<Proc> {
  const started = await forkListening(role, entry, { args, env, nodeFlags, startTimeoutMs, output: { logFile } });
  return { ...started, role, url: `http://127.0.0.1:${started.port}`, logFile };
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
  killPids(tree);
}

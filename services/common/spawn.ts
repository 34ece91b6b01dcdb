import { fork, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ReboundError } from '../../lib/errors.ts';
import { reapOnExit } from '../../lib/reaper.ts';
import { killTree } from './process-info.ts';
import type { ListeningMessage } from './service-main.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Entry point of each service process, relative to the repo root. */
export const SERVICE_ENTRIES = {
  ws: 'services/ws/main.ts',
  uws: 'services/uws/main.ts',
  socketio: 'services/socketio/main.ts',
  replay: 'services/replay-server/main.ts',
  soketi: 'services/soketi/main.ts',
} as const;
export type ServiceName = keyof typeof SERVICE_ENTRIES;

/**
 * How a child process is started and watched until it reports its port (ForkOptions' defaults
 * live in `forkListening`).
 */
export interface ForkOptions {
  /** CLI args after the entry. */
  args?: string[];
  env?: Record<string, string>;
  /** Flags for node itself (a cluster primary's workers inherit them with its execArgv). */
  nodeFlags?: string[];
  /** @default 20000 */
  startTimeoutMs?: number;
  /**
   * Where the child's stderr goes. `tail` (default): kept in memory, its last STDERR_TAIL_CHARS;
   * `inherit`: our stderr (logs); `{ logFile }`: stdout and stderr appended to the file, and the
   * tail kept as well. A start error quotes the tail's last lines either way they are kept.
   */
  output?: 'tail' | 'inherit' | { logFile: string };
  /** Start the child with this open-file limit (ulimit -n), e.g. to reproduce a small container. @default inherit */
  fdLimit?: number;
}

export type SpawnOptions = Omit<ForkOptions, 'nodeFlags'> & {
  /** @default 0 (any free port) */
  port?: number;
};

/** A child process that reported `{"type":"listening","port"}` over IPC. */
export interface ListeningChild {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  /** Resolves once the process has exited. */
  readonly exited: Promise<void>;
  /** What the child wrote to stderr so far, its last STDERR_TAIL_CHARS ('' with `output: 'inherit'`). */
  stderr(): string;
}

export interface ServiceHandle extends ListeningChild {
  readonly name: ServiceName;
  readonly httpUrl: string;
  /** SIGTERM, wait for exit (SIGKILL after `graceMs`). Resolves with how long the exit took. */
  stop(graceMs?: number): Promise<number>;
  /** Kill abruptly (SIGKILL by default): what a crash or a hard redeploy looks like to clients. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Start the same service again on the same port. */
  restart(): Promise<ServiceHandle>;
}

/** A child's stderr kept in memory: its start-up lines and last errors, bounded however chatty it is. */
export const STDERR_TAIL_CHARS = 16 * 1024;
/** A start error quotes this many of the last stderr lines. */
const QUOTED_LINES = 5;

/** The child's stderr, its last `STDERR_TAIL_CHARS` characters of UTF-8 text. */
export function stderrTail(child: ChildProcess): () => string {
  let tail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => {
    tail += d;
    if (tail.length > STDERR_TAIL_CHARS) tail = tail.slice(-STDERR_TAIL_CHARS);
  });
  return () => tail;
}

/**
 * Start `entry` (a .ts file through tsx, or a bundle under plain node) as its own process and wait
 * for its IPC `listening` message: the one way every service, proxy and runner shard is started.
 * The child is killed if this process exits; one that does not report its port in time is killed
 * with its whole tree (a cluster primary's workers too). Start errors are RR_ERR_SERVICE_START
 * and quote the child's last stderr lines.
 */
export function forkListening(label: string, entry: string, opts: ForkOptions = {}): Promise<ListeningChild> {
  const startTimeoutMs = opts.startTimeoutMs ?? 20_000;
  const output = opts.output ?? 'tail';
  const logFile = typeof output === 'object' ? output.logFile : undefined;
  const execArgv = [...(entry.endsWith('.ts') ? ['--import', 'tsx'] : []), ...(opts.nodeFlags ?? [])];
  const stdio = ['ignore', logFile ? 'pipe' : 'ignore', output === 'inherit' ? 'inherit' : 'pipe', 'ipc'] as const;
  const env = { ...process.env, ...opts.env };
  const args = opts.args ?? [];
  // A lowered fd limit needs a shell between us and node (ulimit applies to the exec'd process,
  // which keeps the shell's pid and the IPC channel).
  const child =
    opts.fdLimit && opts.fdLimit > 0
      ? spawn('/bin/sh', ['-c', `ulimit -n ${Math.floor(opts.fdLimit)} && exec "$0" "$@"`, process.execPath, ...execArgv, entry, ...args], { cwd: ROOT, env, stdio: [...stdio] })
      : fork(entry, args, { cwd: ROOT, execArgv, env, stdio: [...stdio] });
  reapOnExit(child);
  const stderr = stderrTail(child);
  if (logFile) {
    const log = createWriteStream(logFile, { flags: 'a' });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
  }
  const exited = childExited(child);

  return new Promise<ListeningChild>((resolve, reject) => {
    const fail = (why: string, details: Record<string, unknown>) => {
      const said = stderr().trim().split('\n').slice(-QUOTED_LINES).join('\n');
      const where = logFile ? ` (log: ${logFile})` : '';
      reject(new ReboundError('RR_ERR_SERVICE_START', `${label} ${why}${where}${said ? `: ${said}` : ''}`, { details: { ...details, stderr: stderr(), ...(logFile ? { logFile } : {}) } }));
    };
    const onEarlyExit = (exitCode: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      // Its last words may still be in the pipe: wait for it to close, a moment at most (a grandchild may hold it).
      void childEvent(child, 'close', 1000).then(() => fail(`exited before listening (code ${exitCode}, signal ${signal})`, { exitCode, signal }));
    };
    const timer = setTimeout(() => {
      child.off('exit', onEarlyExit);
      killTree(child.pid);
      fail(`did not report a port within ${startTimeoutMs} ms`, {});
    }, startTimeoutMs);
    child.once('exit', onEarlyExit);
    child.on('message', (m: ListeningMessage) => {
      if (m?.type !== 'listening' || !Number.isInteger(m.port)) return;
      clearTimeout(timer);
      child.off('exit', onEarlyExit);
      resolve({ child, pid: child.pid ?? 0, port: m.port, exited, stderr });
    });
  });
}

/** Start a service as its own Node process (TypeScript through tsx) and wait until it reports the port it bound. */
export async function startService(name: ServiceName, opts: SpawnOptions = {}): Promise<ServiceHandle> {
  const entry = SERVICE_ENTRIES[name];
  if (!entry) throw new ReboundError('RR_ERR_TARGET_UNKNOWN', `unknown service "${name}"`);
  const started = await forkListening(name, entry, { ...opts, args: [...(opts.args ?? []), '--port', String(opts.port ?? 0)] });
  const { child, exited } = started;
  return {
    ...started,
    name,
    httpUrl: `http://127.0.0.1:${started.port}`,
    stop: (graceMs = 10_000) => stopChild(started, graceMs),
    async kill(signal = 'SIGKILL') {
      if (gone(child)) return;
      child.kill(signal);
      await exited;
    },
    restart: () => startService(name, { ...opts, port: started.port }),
  };
}

const gone = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** SIGTERM, wait for the exit (SIGKILL after `graceMs`). Resolves with how long the exit took (0: it had exited). */
export async function stopChild({ child, exited }: Pick<ListeningChild, 'child' | 'exited'>, graceMs: number): Promise<number> {
  const t0 = Date.now();
  if (gone(child)) return 0;
  child.kill('SIGTERM');
  const hard = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(hard);
  return Date.now() - t0;
}

/**
 * Start `handle`'s service again on its port, retrying while the port is still held (a killed
 * cluster's workers, a socket the kernel has not released yet) until `retryForMs` has passed.
 * Resolves with the new handle and when it reported listening.
 */
export async function respawn(handle: ServiceHandle, retryForMs = 10_000): Promise<{ handle: ServiceHandle; listeningAt: number; attempts: number }> {
  const deadline = Date.now() + retryForMs;
  for (let attempts = 1; ; attempts++) {
    try {
      const next = await handle.restart();
      return { handle: next, listeningAt: Date.now(), attempts };
    } catch (err) {
      if (Date.now() >= deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Resolves on the child's `event` ('exit'; 'close': its stdio pipes have ended too), or after `ms` when given. */
function childEvent(child: ChildProcess, event: 'exit' | 'close', ms?: number): Promise<void> {
  return new Promise((resolve) => {
    const t = ms === undefined ? undefined : setTimeout(resolve, ms);
    child.once(event, () => {
      clearTimeout(t);
      resolve();
    });
  });
}

/** Resolves when `child` has exited (at once when it already has), or after `ms` when given. */
export function childExited(child: ChildProcess, ms?: number): Promise<void> {
  return gone(child) ? Promise.resolve() : childEvent(child, 'exit', ms);
}

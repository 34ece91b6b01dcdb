import { fork, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ReboundError } from '../../lib/errors.ts';
import { reapOnExit } from '../../lib/reaper.ts';
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

export interface SpawnOptions {
  /** Extra CLI args, e.g. ['--mode', 'csr']. */
  args?: string[];
  env?: Record<string, string>;
  /** @default 0 (any free port) */
  port?: number;
  /** @default 20000 */
  startTimeoutMs?: number;
  /** Inherit the child's stderr (logs) instead of discarding it. @default false */
  verbose?: boolean;
  /** Start the service with this open-file limit (ulimit -n), e.g. to reproduce a small container. @default inherit */
  fdLimit?: number;
}

export interface ServiceHandle {
  readonly name: ServiceName;
  readonly port: number;
  readonly pid: number;
  readonly httpUrl: string;
  readonly child: ChildProcess;
  /** SIGTERM, wait for exit (SIGKILL after `graceMs`). Resolves with how long the exit took. */
  stop(graceMs?: number): Promise<number>;
  /** Kill abruptly (SIGKILL by default): what a crash or a hard redeploy looks like to clients. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Start the same service again on the same port. */
  restart(): Promise<ServiceHandle>;
}

/**
 * Start a service as its own Node process (TypeScript through tsx) and wait until it reports the
 * port it bound. The child is killed if this process exits.
 */
export function startService(name: ServiceName, opts: SpawnOptions = {}): Promise<ServiceHandle> {
  const entry = SERVICE_ENTRIES[name];
  if (!entry) return Promise.reject(new ReboundError('RR_ERR_TARGET_UNKNOWN', `unknown service "${name}"`));
  const args = [...(opts.args ?? []), '--port', String(opts.port ?? 0)];
  const stdio = ['ignore', 'ignore', opts.verbose ? 'inherit' : 'ignore', 'ipc'] as const;
  const env = { ...process.env, ...opts.env };
  // A lowered fd limit needs a shell between us and node (ulimit applies to the exec'd process,
  // which keeps the shell's pid and the IPC channel).
  const child =
    opts.fdLimit && opts.fdLimit > 0
      ? spawn('/bin/sh', ['-c', `ulimit -n ${Math.floor(opts.fdLimit)} && exec "$0" "$@"`, process.execPath, '--import', 'tsx', entry, ...args], { cwd: ROOT, env, stdio: [...stdio] })
      : fork(entry, args, { cwd: ROOT, execArgv: ['--import', 'tsx'], env, stdio: [...stdio] });
  reapOnExit(child);

  return new Promise<ServiceHandle>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new ReboundError('RR_ERR_SERVICE_START', `${name} did not report a port within ${opts.startTimeoutMs ?? 20000} ms`));
    }, opts.startTimeoutMs ?? 20000);
    const onEarlyExit = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      reject(new ReboundError('RR_ERR_SERVICE_START', `${name} exited before listening (code ${code}, signal ${signal})`));
    };
    child.once('exit', onEarlyExit);
    child.on('message', (m: ListeningMessage) => {
      if (m?.type !== 'listening') return;
      clearTimeout(timer);
      child.off('exit', onEarlyExit);
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      const handle: ServiceHandle = {
        name,
        port: m.port,
        pid: child.pid ?? 0,
        httpUrl: `http://127.0.0.1:${m.port}`,
        child,
        async stop(graceMs = 10_000) {
          const t0 = Date.now();
          if (child.exitCode !== null || child.signalCode !== null) return 0;
          child.kill('SIGTERM');
          const hard = setTimeout(() => child.kill('SIGKILL'), graceMs);
          await exited;
          clearTimeout(hard);
          return Date.now() - t0;
        },
        async kill(signal = 'SIGKILL') {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill(signal);
          await exited;
        },
        restart: () => startService(name, { ...opts, port: m.port }),
      };
      resolve(handle);
    });
  });
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

/** Resolves when the service's process has exited (at once when it already has). */
export function exited(handle: ServiceHandle): Promise<void> {
  return childExited(handle.child);
}

/** Resolves when `child` has exited (at once when it already has), or after `ms` when given. */
export function childExited(child: ChildProcess, ms?: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = ms === undefined ? undefined : setTimeout(resolve, ms);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

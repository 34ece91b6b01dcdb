import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reapOnExit } from '../../lib/reaper.ts';
import { until } from '../../lib/time.ts';

/**
 * A local `redis-server` (Debian's, /usr/bin/redis-server; .ci/run installs it), for the runners
 * that need their own (sick-Redis, capacity loader nodes) and for tests: a free loopback port, a fresh temp dir, no shared state. `persist` turns on an fsync-always AOF in that
 * dir, so `stop()` + `start()` (even after SIGKILL) brings the same data back, like a production
 * Redis restarting; without it a restart starts empty.
 */
export interface RedisProcess {
  readonly port: number;
  readonly url: string;
  /** Running now. */
  readonly running: boolean;
  /** Start again on the same port (after stop). */
  start(): Promise<void>;
  /** Send a signal without waiting for an exit (SIGSTOP / SIGCONT: a hung Redis, then a live one again). */
  signal(signal: NodeJS.Signals): void;
  /** Stop it (SIGKILL by default: an outage, not a shutdown). */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Stop and remove the temp dir. */
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const addr = srv.address();
  await new Promise<void>((r) => srv.close(() => r()));
  if (typeof addr !== 'object' || !addr) throw new Error('no port');
  return addr.port;
}

export async function startRedisProcess(opts: { persist?: boolean; bin?: string } = {}): Promise<RedisProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'rr-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--daemonize', 'no', '--loglevel', 'warning', '--protected-mode', 'no'];
  args.push(...(opts.persist ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']));

  const start = async () => {
    if (child) return;
    const c = spawn(opts.bin ?? 'redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    // Never outlives its process (a bounded benchmark run that is stopped, a crashed test file).
    reapOnExit(c);
    child = c;
    let out = '';
    c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    c.once('exit', () => {
      if (child === c) child = undefined;
    });
    // Not installed (ENOENT): say what to install instead of an unhandled 'error' event.
    c.once('error', (err) => {
      out += `${err.message} (install Debian's redis-server; .ci/run does)`;
      if (child === c) child = undefined;
    });
    // Ready when it accepts a PING (bounded: 5 s); a process that exited ends the wait at once.
    if (!(await until(async () => !child || (await ping(port)), 5000)) || !child) {
      throw new Error(child ? `redis-server not ready on ${port}: ${out}` : `redis-server exited at start: ${out}`);
    }
  };
  const stop = async (signal: NodeJS.Signals = 'SIGKILL') => {
    const c = child;
    if (!c) return;
    // A stopped process cannot exit on SIGTERM until it runs again.
    if (signal !== 'SIGKILL') c.kill('SIGCONT');
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill(signal);
    await exited;
    child = undefined;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get running() {
      return child !== undefined;
    },
    start,
    stop,
    signal(sig) {
      child?.kill(sig);
    },
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One RESP PING over a raw socket: true on +PONG. */
async function ping(port: number): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(500, () => done(false));
    s.once('error', () => done(false));
    s.once('connect', () => s.write('PING\r\n'));
    s.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

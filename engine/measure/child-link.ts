import { fork, type ChildProcess, type Serializable } from 'node:child_process';
import { reapOnExit } from '../../lib/reaper.ts';
import { until } from '../../lib/time.ts';

/** Fork a TypeScript (or prebuilt JS) child with an IPC channel; it never outlives this process. */
export function forkChild(entry: string, o: { cwd?: string; execArgv?: string[]; stdout?: 'inherit' | 'ignore' } = {}): ChildProcess {
  const execArgv = [...(entry.endsWith('.ts') ? ['--import', 'tsx'] : []), ...(o.execArgv ?? [])];
  const child = fork(entry, [], { cwd: o.cwd, execArgv, stdio: ['ignore', o.stdout ?? 'inherit', 'inherit', 'ipc'] });
  reapOnExit(child);
  return child;
}

/**
 * The parent's side of one worker process that reports by IPC (idle workers, S6 holders,
 * capacity loaders, sick-Redis client processes): typed send when the channel is up, each message
 * handed to `receive`, the exit recorded, and a bounded wait until the child's messages make a
 * predicate true. Every message and the exit wake a waiting `until` at once instead of on its
 * next 250 ms poll.
 */
export class ChildLink<Out extends Serializable, In = unknown> {
  error: string | undefined;
  /** 'code X, signal Y' once the process exited. */
  exitedWith: string | undefined;
  private wake: () => void = () => {};

  constructor(readonly child: ChildProcess) {
    child.on('message', (m: In) => {
      this.receive(m);
      this.notify();
    });
    child.once('exit', (code, sig) => {
      this.exitedWith = `code ${code}, signal ${sig}`;
      this.exited(this.exitedWith, code);
      this.notify();
    });
  }

  /** One message from the child (subclasses record what they need). */
  protected receive(_m: In): void {}

  /** The child exited (subclasses decide whether that was early). */
  protected exited(_how: string, _code: number | null): void {}

  protected notify(): void {
    this.wake();
  }

  send(m: Out): void {
    if (this.child.connected) this.child.send(m);
  }

  /** Until `pred` holds, the child failed, `ms` passed or `signal` aborted. */
  async until(pred: () => boolean, ms: number, signal?: AbortSignal): Promise<boolean> {
    const woken = () =>
      new Promise<void>((r) => {
        const t = setTimeout(r, 250);
        this.wake = () => (clearTimeout(t), r());
      });
    await until(() => pred() || this.error !== undefined, ms, signal, woken);
    return pred();
  }

  /** SIGKILL unless it already exited. */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/** The default of an exhaustive switch over an IPC message union: a new message kind is a compile error until handled. */
export function assertNever(x: never): never {
  throw new Error(`unhandled message ${JSON.stringify(x)}`);
}

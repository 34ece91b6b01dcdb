import { fork, spawn, type ChildProcess, type Serializable, type StdioOptions } from 'node:child_process';
import { ReboundError } from '../../lib/errors.ts';
import { reapOnExit } from '../../lib/reaper.ts';
import { until } from '../../lib/time.ts';

/**
 * Fork a TypeScript (or prebuilt JS) child with an IPC channel; it never outlives this process.
 * `fdLimit` > 0: the child runs with that open-file limit (ulimit -n), e.g. to reproduce a small rig.
 */
export function forkChild(entry: string, o: { cwd?: string; execArgv?: string[]; stdout?: 'inherit' | 'ignore'; fdLimit?: number } = {}): ChildProcess {
  const execArgv = [...(entry.endsWith('.ts') ? ['--import', 'tsx'] : []), ...(o.execArgv ?? [])];
  const stdio: StdioOptions = ['ignore', o.stdout ?? 'inherit', 'inherit', 'ipc'];
  // A lowered fd limit needs a shell between us and node: ulimit applies to the exec'd process.
  const child = o.fdLimit && o.fdLimit > 0 ? spawn('/bin/sh', ['-c', `ulimit -n ${Math.floor(o.fdLimit)} && exec "$0" "$@"`, process.execPath, ...execArgv, entry], { cwd: o.cwd, stdio }) : fork(entry, [], { cwd: o.cwd, execArgv, stdio });
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
      this.wake();
    });
    child.once('exit', (code, sig) => {
      this.exitedWith = `code ${code}, signal ${sig}`;
      this.exited(this.exitedWith, code);
      this.wake();
    });
  }

  /** One message from the child (subclasses record what they need). */
  protected receive(_m: In): void {}

  /** The child exited (subclasses decide whether that was early). */
  protected exited(_how: string, _code: number | null): void {}

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

/**
 * A child that answers requests (capacity loaders, jitter workers): its messages wait in a mailbox
 * until `next` takes one by type. The child's `error` message, its exit, or the bound ends the
 * wait with RR_ERR_RUNNER_WORKER naming `label`.
 */
export class MailboxLink<Out extends Serializable, In extends { type: string }> extends ChildLink<Out, In> {
  private readonly inbox: In[] = [];

  constructor(child: ChildProcess, readonly label: string) {
    super(child);
  }

  protected override receive(m: In): void {
    this.inbox.push(m);
  }

  async next<T extends In['type']>(type: T, timeoutMs: number): Promise<Extract<In, { type: T }>> {
    const find = () => this.inbox.findIndex((m) => m.type === type || m.type === 'error');
    await this.until(() => find() >= 0 || this.exitedWith !== undefined, timeoutMs);
    // 'exit' can overtake the last message still being read from the channel: give it a moment.
    if (find() < 0 && this.exitedWith !== undefined) await this.until(() => find() >= 0, 2000);
    const i = find();
    if (i >= 0) {
      const m = this.inbox.splice(i, 1)[0]!;
      if (m.type === 'error') throw new ReboundError('RR_ERR_RUNNER_WORKER', `${this.label}: ${(m as { message?: string }).message}`);
      return m as Extract<In, { type: T }>;
    }
    if (this.exitedWith) throw new ReboundError('RR_ERR_RUNNER_WORKER', `${this.label} exited early (${this.exitedWith})`);
    throw new ReboundError('RR_ERR_RUNNER_WORKER', `${this.label}: no "${type}" within ${timeoutMs} ms`);
  }
}

/** The child's side: a typed send to the parent (then `then`, once the channel took it), a no-op once the parent is gone. */
export function sendToParent<Out extends Serializable>(m: Out, then?: () => void): void {
  if (process.connected) process.send?.(m, undefined, {}, () => then?.());
  else then?.();
}

/** The default of an exhaustive switch over an IPC message union: a new message kind is a compile error until handled. */
export function assertNever(x: never): never {
  throw new Error(`unhandled message ${JSON.stringify(x)}`);
}

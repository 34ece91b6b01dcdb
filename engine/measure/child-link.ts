import type { ChildProcess, Serializable } from 'node:child_process';
import { until } from '../../lib/time.ts';

/**
 * The parent's side of a child process that reports by IPC (idle workers, S6 holders): send when
 * the channel is up, and wait, bounded, until the child's messages make a predicate true. Each
 * subclass records its own messages and calls `notify()` after each one, so a wait wakes at once
 * instead of on its next 250 ms poll.
 */
export class ChildLink<Out extends Serializable> {
  error: string | undefined;
  private wake: () => void = () => {};

  constructor(readonly child: ChildProcess) {}

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
}

/** The default of an exhaustive switch over an IPC message union: a new message kind is a compile error until handled. */
export function assertNever(x: never): never {
  throw new Error(`unhandled message ${JSON.stringify(x)}`);
}

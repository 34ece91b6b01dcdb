import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { reapOnExit } from '../../../lib/reaper.ts';
import type { HolderStart, HolderTally, HolderToParent, ParentToHolder } from './messages.ts';

const ENTRY = fileURLToPath(new URL('./holder.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The parent's handle on one holder process: its last messages, bounded waits, and a kill. */
export class Holder {
  ready = false;
  ramped: HolderTally | undefined;
  done: HolderTally | undefined;
  error: string | undefined;
  private wake: () => void = () => {};
  readonly child: ChildProcess;

  constructor(readonly id: number, onArrivals: (rows: number[]) => void) {
    // A small young generation, as the idle runner's workers: holders allocate little per client.
    this.child = fork(ENTRY, [], { cwd: ROOT, execArgv: ['--import', 'tsx', '--max-semi-space-size=1'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    reapOnExit(this.child);
    this.child.on('message', (m: HolderToParent) => {
      if (m.type === 'ready') this.ready = true;
      else if (m.type === 'ramped') this.ramped = m.tally;
      else if (m.type === 'arrivals') onArrivals(m.rows);
      else if (m.type === 'done') this.done = m.tally;
      else if (m.type === 'error') this.error = m.message;
      this.wake();
    });
    this.child.once('exit', (code, sig) => {
      if (!this.done && !this.error) this.error = `holder ${id} exited early (code ${code}, signal ${sig})`;
      this.wake();
    });
  }

  send(m: ParentToHolder | HolderStart): void {
    if (this.child.connected) this.child.send(m);
  }

  /** Until `pred` holds, the holder failed, `ms` passed or `signal` aborted. */
  async until(pred: () => boolean, ms: number, signal?: AbortSignal): Promise<boolean> {
    const end = Date.now() + ms;
    while (!pred()) {
      if (this.error || signal?.aborted || Date.now() > end) return false;
      await new Promise<void>((r) => {
        const t = setTimeout(r, 250);
        this.wake = () => (clearTimeout(t), r());
      });
    }
    return true;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

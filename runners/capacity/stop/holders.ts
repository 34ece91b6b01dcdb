import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { reapOnExit } from '../../../lib/reaper.ts';
import { ChildLink } from '../../../engine/measure/child-link.ts';
import type { HolderStart, HolderTally, HolderToParent, ParentToHolder } from './messages.ts';

const ENTRY = fileURLToPath(new URL('./holder.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The parent's handle on one holder process: its last messages, bounded waits, and a kill. */
export class Holder extends ChildLink<ParentToHolder | HolderStart> {
  ready = false;
  ramped: HolderTally | undefined;
  done: HolderTally | undefined;

  constructor(readonly id: number, onArrivals: (rows: number[]) => void) {
    // A small young generation, as the idle runner's workers: holders allocate little per client.
    super(fork(ENTRY, [], { cwd: ROOT, execArgv: ['--import', 'tsx', '--max-semi-space-size=1'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    reapOnExit(this.child);
    this.child.on('message', (m: HolderToParent) => {
      if (m.type === 'ready') this.ready = true;
      else if (m.type === 'ramped') this.ramped = m.tally;
      else if (m.type === 'arrivals') onArrivals(m.rows);
      else if (m.type === 'done') this.done = m.tally;
      else if (m.type === 'error') this.error = m.message;
      this.notify();
    });
    this.child.once('exit', (code, sig) => {
      if (!this.done && !this.error) this.error = `holder ${id} exited early (code ${code}, signal ${sig})`;
      this.notify();
    });
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

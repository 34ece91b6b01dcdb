import { fileURLToPath } from 'node:url';
import { ChildLink, forkChild } from '../../../engine/measure/child-link.ts';
import type { HolderStart, HolderTally, HolderToParent, ParentToHolder } from './messages.ts';

const ENTRY = fileURLToPath(new URL('./holder.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The parent's handle on one holder process: its last messages, bounded waits, and a kill. */
export class Holder extends ChildLink<ParentToHolder | HolderStart, HolderToParent> {
  ready = false;
  ramped: HolderTally | undefined;
  done: HolderTally | undefined;

  constructor(readonly id: number, private readonly onArrivals: (rows: number[]) => void) {
    // A small young generation, as the idle runner's workers: holders allocate little per client.
    super(forkChild(ENTRY, { cwd: ROOT, execArgv: ['--max-semi-space-size=1'] }));
  }

  protected override receive(m: HolderToParent): void {
    if (m.type === 'ready') this.ready = true;
    else if (m.type === 'ramped') this.ramped = m.tally;
    else if (m.type === 'arrivals') this.onArrivals(m.rows);
    else if (m.type === 'done') this.done = m.tally;
    else if (m.type === 'error') this.error = m.message;
  }

  protected override exited(how: string): void {
    if (!this.done && !this.error) this.error = `holder ${this.id} exited early (${how})`;
  }
}

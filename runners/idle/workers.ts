import { fileURLToPath } from 'node:url';
import { assertNever, ChildLink, forkChild } from '../../engine/measure/child-link.ts';
import type { ParentToWorker, WorkerTally, WorkerToParent } from './messages.ts';

const WORKER_ENTRY = fileURLToPath(new URL('./worker.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The parent's side of one lean-client worker process (the idle runner's workers, capacity S6's
 * holders): its last tallies, its arrival batches handed to `onArrivals`, bounded waits, a kill.
 */
export class IdleWorker extends ChildLink<ParentToWorker, WorkerToParent> {
  readonly tally: { last?: WorkerTally; ramped?: WorkerTally; done?: WorkerTally } = {};
  ready: Extract<WorkerToParent, { type: 'ready' }> | undefined;

  constructor(readonly id: number, private readonly o: { fdLimit?: number; onArrivals?: (rows: number[]) => void } = {}) {
    // A small young generation: idle clients allocate little after connecting, and V8's default
    // semi-spaces (up to 3 x 16 MB) would otherwise show up as per-client runner RSS.
    // REBOUND_IDLE_WORKER_ENTRY: a prebuilt JS bundle of worker.ts (the local fleet's), run by plain
    // node: no tsx loader and esbuild service in each of dozens of worker processes (~35 MB each).
    super(forkChild(process.env.REBOUND_IDLE_WORKER_ENTRY || WORKER_ENTRY, { cwd: ROOT, execArgv: ['--max-semi-space-size=1'], fdLimit: o.fdLimit ?? 0 }));
  }

  protected override receive(m: WorkerToParent): void {
    switch (m.type) {
      case 'ready':
        this.ready = m;
        break;
      case 'progress':
      case 'ramped':
      case 'done':
        this.tally.last = m.tally;
        if (m.type !== 'progress') this.tally[m.type] = m.tally;
        break;
      case 'arrivals':
        this.o.onArrivals?.(m.rows);
        break;
      case 'error':
        this.error = m.message;
        break;
      default:
        assertNever(m);
    }
  }

  protected override exited(how: string): void {
    if (!this.tally.done && !this.error) this.error = `worker ${this.id} exited early (${how})`;
  }
}

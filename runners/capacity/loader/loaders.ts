import { fileURLToPath } from 'node:url';
import { childExited } from '../../../services/common/spawn.ts';
import { forkChild, MailboxLink } from '../../../engine/measure/child-link.ts';
import { mergeReady, mergeSteps, type MergedReady, type MergedStep } from './merge.ts';
import type { AcceptedRanges, FromLoader, LoaderAssignment, StepKey, ToLoader } from './messages.ts';
import { assignments } from './plan.ts';

const ENTRY = fileURLToPath(new URL('./child.ts', import.meta.url));

/** `connections` over `loaders` processes; the rest is each loader's assignment. */
export type FleetOptions = Pick<LoaderAssignment, 'target' | 'urls' | 'streams' | 'concurrency'> & { connections: number; loaders: number };

/**
 * K loader processes holding a run's connections. The parent drives steps: `start` (fresh
 * ledgers for the step's sequence spaces), the caller publishes, then `settle` with what the
 * publisher saw accepted; the loaders' figures merge exactly (merge.ts).
 */
export class LoaderGroup {
  private constructor(private readonly loaders: MailboxLink<ToLoader, FromLoader>[], readonly ready: MergedReady) {}

  static async open(o: FleetOptions): Promise<LoaderGroup> {
    const plan = assignments({ ...o, connectTimeoutMs: 15_000 });
    const loaders = plan.map((a) => {
      // One loader process: its answers waited on by type with a bound.
      const l = new MailboxLink<ToLoader, FromLoader>(forkChild(ENTRY), `capacity loader ${a.loader}`);
      l.send({ type: 'open', assignment: a });
      return l;
    });
    try {
      // Opening every connection is bounded at 5 minutes, each connect at 15 s.
      const ready = await Promise.all(loaders.map((l) => l.next('ready', 300_000)));
      return new LoaderGroup(loaders, mergeReady(ready));
    } catch (err) {
      for (const l of loaders) l.kill();
      throw err;
    }
  }

  get size(): number {
    return this.loaders.length;
  }

  async start(keys: StepKey[], messagesPerKey: number, pollMs = 0): Promise<void> {
    for (const l of this.loaders) l.send({ type: 'start', keys, messagesPerKey, pollMs });
    await Promise.all(this.loaders.map((l) => l.next('started', 30_000)));
  }

  async settle(accepted: AcceptedRanges): Promise<MergedStep> {
    for (const l of this.loaders) l.send({ type: 'settle', accepted });
    return mergeSteps(await Promise.all(this.loaders.map((l) => l.next('step', 60_000))));
  }

  async close(): Promise<void> {
    for (const l of this.loaders) l.send({ type: 'close' });
    await Promise.all(this.loaders.map((l) => l.next('closed', 10_000).catch(() => undefined)));
    // A loader exits on its own right after 'closed' (flushing what it must, e.g. a --cpu-prof
    // profile); only one that has not gone within the bound is killed.
    await Promise.all(this.loaders.map((l) => childExited(l.child, 5_000)));
    for (const l of this.loaders) l.kill();
  }
}


import { fileURLToPath } from 'node:url';
import { ReboundError } from '../../../lib/errors.ts';
import { childExited } from '../../../services/common/spawn.ts';
import { ChildLink, forkChild } from '../../../engine/measure/child-link.ts';
import { mergeReady, mergeSteps, type MergedReady, type MergedStep } from './merge.ts';
import type { AcceptedRanges, FromLoader, LoaderAssignment, StepKey, ToLoader } from './messages.ts';
import { assignments } from './plan.ts';

const ENTRY = fileURLToPath(new URL('./child.ts', import.meta.url));

/** `connections` over `loaders` processes; the rest is each loader's assignment. */
export type FleetOptions = Pick<LoaderAssignment, 'target' | 'urls' | 'streams' | 'concurrency'> & { connections: number; loaders: number };

/** One child process and a mailbox of what it sent, waited on by type with a bound. */
class Loader extends ChildLink<ToLoader, FromLoader> {
  private readonly inbox: FromLoader[] = [];

  constructor(readonly index: number) {
    super(forkChild(ENTRY));
  }

  protected override receive(m: FromLoader): void {
    this.inbox.push(m);
  }

  async next<T extends FromLoader['type']>(type: T, timeoutMs: number): Promise<Extract<FromLoader, { type: T }>> {
    const find = () => this.inbox.findIndex((m) => m.type === type || m.type === 'error');
    await this.until(() => find() >= 0 || this.exitedWith !== undefined, timeoutMs);
    const i = find();
    if (i >= 0) {
      const m = this.inbox.splice(i, 1)[0]!;
      if (m.type === 'error') throw new ReboundError('RR_ERR_RUNNER_WORKER', `capacity loader ${this.index}: ${m.message}`);
      return m as Extract<FromLoader, { type: T }>;
    }
    if (this.exitedWith) throw new ReboundError('RR_ERR_RUNNER_WORKER', `capacity loader ${this.index} exited early (${this.exitedWith})`);
    throw new ReboundError('RR_ERR_RUNNER_WORKER', `capacity loader ${this.index}: no "${type}" within ${timeoutMs} ms`);
  }
}

/**
 * K loader processes holding a run's connections. The parent drives steps: `start` (fresh
 * ledgers for the step's sequence spaces), the caller publishes, then `settle` with what the
 * publisher saw accepted; the loaders' figures merge exactly (merge.ts).
 */
export class LoaderGroup {
  private constructor(private readonly loaders: Loader[], readonly ready: MergedReady) {}

  static async open(o: FleetOptions): Promise<LoaderGroup> {
    const plan = assignments({ ...o, connectTimeoutMs: 15_000 });
    const loaders = plan.map((a) => {
      const l = new Loader(a.loader);
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


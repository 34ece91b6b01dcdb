import { fileURLToPath } from 'node:url';
import { ReboundError } from '../../lib/errors.ts';
import { ChildLink, forkChild } from '../../engine/measure/child-link.ts';
import type { PublisherReport, PublisherStart } from './publisher-process.ts';

const ENTRY = fileURLToPath(new URL('./publisher-process.ts', import.meta.url));

type Done = Extract<PublisherReport, { type: 'done' }>;

/** A running standalone publisher process. */
export class StandalonePublisher extends ChildLink<PublisherStart, PublisherReport> {
  pid = 0;
  private finish: (r: Done) => void = () => {};
  /** Resolves when this incarnation has published its last message (never, if it is killed first). */
  readonly done = new Promise<Done>((r) => (this.finish = r));

  constructor(private readonly onPublished: (r: Extract<PublisherReport, { type: 'published' | 'sent' }>) => void) {
    super(forkChild(ENTRY, { stdout: 'ignore' }));
  }

  protected override receive(m: PublisherReport): void {
    if (m.type === 'published' || m.type === 'sent') this.onPublished(m);
    else if (m.type === 'done') this.finish(m);
    // It could not publish at all (the target's file did not load here): said once, the deploy stops on it.
    else if (m.type === 'error') this.error ??= m.message.slice(0, 500);
    else if (m.type === 'ready') this.pid = m.pid;
  }

  start(cfg: Omit<PublisherStart, 'type'>): void {
    this.send({ type: 'start', ...cfg });
  }

  /** Stop it (SIGKILL: a crash or hard deploy; SIGTERM: the process exits as its runtime decides). Resolves on exit. */
  async stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    if (this.exitedWith === undefined) this.child.kill(signal);
    await this.until(() => this.exitedWith !== undefined, Number.MAX_SAFE_INTEGER);
  }
}

/** Fork a publisher process and wait until it is ready to take its start message. */
export async function spawnPublisher(onPublished: ConstructorParameters<typeof StandalonePublisher>[0], startTimeoutMs = 20_000): Promise<StandalonePublisher> {
  const p = new StandalonePublisher(onPublished);
  await p.until(() => p.pid > 0 || p.exitedWith !== undefined, startTimeoutMs);
  if (p.pid > 0) return p;
  p.kill();
  throw new ReboundError('RR_ERR_PUBLISHER_PROCESS', p.exitedWith ? `the standalone publisher exited before it was ready (${p.exitedWith})` : `the standalone publisher did not start within ${startTimeoutMs} ms`);
}

import { startPublisher, type PublisherOptions } from '../../engine/measure/publisher.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { childTargetModules } from '../../engine/targets/user-module.ts';

/**
 * The standalone publisher as its own process (the benchmark's standalone-publisher service):
 * the app side that a deploy restarts. The parent sends one `start` over IPC; every outcome goes
 * back as `published`, then `done`. A parent that goes away takes it down. It publishes the way
 * the target's server takes a message (`target`'s publish: a user's target file is loaded here
 * from TARGET_MODULES, inherited from the parent).
 */
export type PublisherStart = { type: 'start'; lastSeq: number; target: string } & Pick<PublisherOptions, 'broadcastKey'> &
  Required<Pick<PublisherOptions, 'url' | 'stream' | 'runId' | 'firstSeq' | 'intervalMs' | 'payloadBytes'>>;
export type PublisherReport =
  | { type: 'ready'; pid: number }
  | { type: 'sent'; seq: number; sentAt: number }
  | { type: 'published'; seq: number; ok: boolean; sentAt: number; at: number }
  | { type: 'done'; published: number; failed: number; failures: string[] }
  | { type: 'error'; message: string };

const send = (m: PublisherReport) => process.send?.(m);

process.on('disconnect', () => process.exit(0));
const targets = childTargetModules();
process.on('message', (m: PublisherStart) => {
  if (m?.type !== 'start') return;
  targets.then(
    () => start(m),
    (err: Error) => send({ type: 'error', message: err.message }),
  );
});

function start(m: PublisherStart): void {
  const { type: _t, lastSeq, target, ...cfg } = m;
  let publish: PublisherOptions['publish'];
  try {
    publish = getTarget(target).publish;
  } catch (err) {
    return void send({ type: 'error', message: (err as Error).message });
  }
  const sentAt = new Map<number, number>();
  const pub = startPublisher({
    ...cfg,
    ...(publish ? { publish } : {}),
    messages: lastSeq,
    timeoutMs: 5000,
    onSend: (seq, at) => {
      sentAt.set(seq, at);
      send({ type: 'sent', seq, sentAt: at });
    },
    onPublished: (seq, ok) => {
      send({ type: 'published', seq, ok, sentAt: sentAt.get(seq) ?? 0, at: Date.now() });
      sentAt.delete(seq);
    },
  });
  void pub.done.then((r) => send({ type: 'done', published: r.published, failed: r.failed, failures: r.failures }));
}
send({ type: 'ready', pid: process.pid });

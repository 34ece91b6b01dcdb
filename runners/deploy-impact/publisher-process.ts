import { startPublisher } from '../core/publisher.ts';

/**
 * The standalone publisher as its own process (the benchmark's standalone-publisher service):
 * the app side that a deploy restarts. The parent sends one `start` over IPC; every outcome goes
 * back as `published`, then `done`. A parent that goes away takes it down.
 */
export interface PublisherStart {
  type: 'start';
  url: string;
  stream: string;
  runId: string;
  firstSeq: number;
  lastSeq: number;
  intervalMs: number;
  payloadBytes: number;
  broadcastKey?: string;
}
export type PublisherReport =
  | { type: 'ready'; pid: number }
  | { type: 'sent'; seq: number; sentAt: number }
  | { type: 'published'; seq: number; ok: boolean; sentAt: number; at: number }
  | { type: 'done'; published: number; failed: number; failures: string[] };

const send = (m: PublisherReport) => process.send?.(m);

process.on('disconnect', () => process.exit(0));
process.on('message', (m: PublisherStart) => {
  if (m?.type !== 'start') return;
  const sentAt = new Map<number, number>();
  const pub = startPublisher({
    url: m.url,
    stream: m.stream,
    runId: m.runId,
    firstSeq: m.firstSeq,
    messages: m.lastSeq,
    intervalMs: m.intervalMs,
    payloadBytes: m.payloadBytes,
    timeoutMs: 5000,
    ...(m.broadcastKey ? { broadcastKey: m.broadcastKey } : {}),
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
});
send({ type: 'ready', pid: process.pid });

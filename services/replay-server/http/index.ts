import type { Broadcast } from '../../common/broadcast.ts';
import { createServiceApp } from '../../common/http-app.ts';
import type { Broker, PublishItem } from '../broker/types.ts';
import { toMessageJson } from '../protocol/codec.ts';

/** `/_broadcast` → broker items: `data` becomes the frame's `message` JSON once, here at the edge. */
export function toPublishItems(batch: readonly Broadcast[]): PublishItem[] {
  return batch.map((b) => {
    const item: PublishItem = { stream: b.stream, message: toMessageJson(b.data) };
    const ex = b.meta?.exclude_socket;
    if (ex) item.exclude = ex;
    return item;
  });
}

/** The shared service HTTP surface (/_broadcast, /publish-local, /health, /metrics) wired to the broker. */
export function createReplayHttp(opts: { broadcastKey: string; broker: Broker; stats(): Promise<Record<string, unknown>>; onPublishError(err: unknown): void }) {
  return createServiceApp({
    name: 'replay',
    broadcastKey: opts.broadcastKey || undefined,
    deliver: (batch) => {
      opts.broker.publish(toPublishItems(batch)).catch(opts.onPublishError);
    },
    stats: opts.stats,
  });
}

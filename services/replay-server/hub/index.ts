import { frames } from '../protocol/codec.ts';
import { textFrame } from '../protocol/wsframe.ts';
import type { StreamMessage } from '../broker/types.ts';
import type { Group, SubscriberConnection, Subscription } from './subscription.ts';

export { Subscription, type Group, type SubscriberConnection } from './subscription.ts';

/**
 * Local fan-out: stream → identifier → subscriptions. A data frame is encoded once per message
 * and identifier as a complete WebSocket frame (one Buffer shared by every subscriber of the
 * group), never per subscriber.
 */
/** Streams that occur more than once in a batch (undefined when none does). */
function repeatedStreams(msgs: readonly StreamMessage[]): Set<string> | undefined {
  const seen = new Set<string>();
  let out: Set<string> | undefined;
  for (const m of msgs) {
    if (seen.has(m.stream)) (out ??= new Set()).add(m.stream);
    else seen.add(m.stream);
  }
  return out;
}

export class Hub {
  /** `encode`: the transport's frame encoding (connection/transport.ts SocketOps.encode). */
  constructor(private readonly encode: (payload: string) => Buffer = textFrame) {}

  private readonly streams = new Map<string, Map<string, Group>>();
  /** Batches waiting for `queue`'s flush (one loop iteration's worth at most). */
  private queued: StreamMessage[] | undefined = undefined;
  private subCount = 0;
  /** Live fan-out targets so far (subscribers reached per message; excluded/held ones included). */
  deliveries = 0;

  /**
   * The canonical copy of an identifier string already in use for `stream` (10,000 subscribers
   * of one stream share one string), or `identifier` itself.
   */
  intern(stream: string, identifier: string): string {
    const groups = this.streams.get(stream);
    if (!groups) return identifier;
    for (const g of groups.values()) {
      const first = g.subs.values().next().value;
      if (first && first.identifier === identifier) return first.identifier;
    }
    return identifier;
  }

  add(sub: Subscription): void {
    let groups = this.streams.get(sub.stream);
    if (!groups) this.streams.set(sub.stream, (groups = new Map()));
    let g = groups.get(sub.identifier);
    if (!g) groups.set(sub.identifier, (g = { prefix: frames.dataPrefix(sub.identifier), subs: new Set() }));
    g.subs.add(sub);
    sub.group = g;
    this.subCount++;
  }

  remove(sub: Subscription): void {
    const groups = this.streams.get(sub.stream);
    const g = groups?.get(sub.identifier);
    if (!groups || !g || !g.subs.delete(sub)) return;
    this.subCount--;
    if (g.subs.size === 0) groups.delete(sub.identifier);
    if (groups.size === 0) this.streams.delete(sub.stream);
  }

  deliver(msgs: readonly StreamMessage[]): void {
    // Several messages of one batch for the same stream would cost each subscriber one write
    // syscall per message: cork those subscribers' sockets for the batch, so each gets one
    // writev. A stream with a single message in the batch keeps its plain single write.
    const repeated = msgs.length > 1 ? repeatedStreams(msgs) : undefined;
    const corked = repeated ? new Set<SubscriberConnection>() : undefined;
    for (const m of msgs) {
      const groups = this.streams.get(m.stream);
      if (!groups) continue;
      const suffix = frames.dataSuffix(m);
      const cork = corked !== undefined && repeated!.has(m.stream);
      for (const g of groups.values()) {
        const frame = this.encode(g.prefix + suffix);
        for (const sub of g.subs) {
          if (cork && !corked.has(sub.conn)) {
            corked.add(sub.conn);
            sub.conn.cork?.();
          }
          sub.live(m, frame);
        }
        this.deliveries += g.subs.size;
      }
    }
    if (corked) for (const c of corked) c.uncork?.();
  }

  /**
   * `deliver` from a setImmediate, with every batch queued in this loop iteration as one batch
   * (in order): for a transport whose writes inside its own callbacks cannot be corked
   * (SocketOps.deferFanOut), so each subscriber's frames of the iteration, and a due ping
   * (connection/ping.ts), leave in one write.
   */
  queue(msgs: readonly StreamMessage[]): void {
    if (this.queued !== undefined) {
      for (const m of msgs) this.queued.push(m);
      return;
    }
    this.queued = msgs.slice();
    setImmediate(this.flushQueued);
  }

  private readonly flushQueued = () => {
    const msgs = this.queued;
    this.queued = undefined;
    if (msgs !== undefined) this.deliver(msgs);
  };

  get streamCount(): number {
    return this.streams.size;
  }

  get subscriptionCount(): number {
    return this.subCount;
  }
}

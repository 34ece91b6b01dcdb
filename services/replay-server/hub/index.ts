import { frames } from '../protocol/codec.ts';
import { textFrame } from '../protocol/wsframe.ts';
import type { StreamMessage } from '../broker/types.ts';
import type { Group, Subscription } from './subscription.ts';

export { Subscription, type Group, type SubscriberConnection } from './subscription.ts';

/**
 * Local fan-out: stream → identifier → subscriptions. A data frame is encoded once per message
 * and identifier as a complete WebSocket frame (one Buffer shared by every subscriber of the
 * group), never per subscriber.
 */
export class Hub {
  private readonly streams = new Map<string, Map<string, Group>>();
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
    for (const m of msgs) {
      const groups = this.streams.get(m.stream);
      if (!groups) continue;
      const suffix = frames.dataSuffix(m);
      for (const g of groups.values()) {
        const frame = textFrame(g.prefix + suffix);
        for (const sub of g.subs) sub.live(m, frame);
        this.deliveries += g.subs.size;
      }
    }
  }

  get streamCount(): number {
    return this.streams.size;
  }

  get subscriptionCount(): number {
    return this.subCount;
  }
}

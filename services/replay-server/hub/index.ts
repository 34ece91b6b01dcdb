import { dataTail, frames, storedSuffix } from '../protocol/codec.ts';
import { textFrame } from '../protocol/wsframe.ts';
import type { StreamMessage } from '../broker/types.ts';
import type { Group, SubscriberConnection, Subscription } from './subscription.ts';

export { Subscription, type Group, type SubscriberConnection } from './subscription.ts';

/** The transport's topics as the hub uses them (connection/topic-members.ts). */
export interface HubTopics {
  publish(topic: string, frame: Buffer): void;
  /** A `deliver` batch is done: what waits for its end (pings going along) goes now. */
  endBatch(): void;
}

/** One stream's local subscribers, and what its data frames share. */
interface StreamEntry {
  /** identifier → its subscriptions. */
  readonly groups: Map<string, Group>;
  /** The `deliver` batch that last held a message of this stream, and the last that held two. */
  seen: number;
  repeated: number;
  /** `tail` is the stream's `dataTail` for this epoch (rebuilt when the epoch changes). */
  epoch: string | undefined;
  tail: string;
}

/**
 * Local fan-out: stream → identifier → subscriptions. A data frame is encoded once per message
 * and identifier as a complete WebSocket frame (one Buffer shared by every subscriber of the
 * group), never per subscriber.
 */
export class Hub {
  /**
   * `encode`: the transport's frame encoding (connection/transport.ts SocketOps.encode).
   * `topics`: the transport's topics (SocketOps.topics), where it has them: a group's members
   * that joined its topic get each stored frame through one publish (see Group).
   */
  constructor(
    private readonly encode: (payload: string) => Buffer = textFrame,
    private readonly topics?: HubTopics,
  ) {}

  private readonly streams = new Map<string, StreamEntry>();
  /** Batches waiting for `queue`'s flush (one loop iteration's worth at most). */
  private queued: StreamMessage[] | undefined = undefined;
  private subCount = 0;
  /** Topic names: one per group ever made, never reused (a short string: the library keys on it). */
  private topicSeq = 0;
  /** `deliver` calls so far: the batch number StreamEntry.seen/repeated compare against. */
  private batches = 0;
  /** Live fan-out targets so far (subscribers reached per message; excluded/held ones included). */
  deliveries = 0;

  /**
   * The canonical copy of an identifier string already in use for `stream` (10,000 subscribers
   * of one stream share one string), or `identifier` itself.
   */
  intern(stream: string, identifier: string): string {
    const entry = this.streams.get(stream);
    if (!entry) return identifier;
    for (const g of entry.groups.values()) {
      const first = g.subs.values().next().value ?? g.nat.values().next().value;
      if (first && first.identifier === identifier) return first.identifier;
    }
    return identifier;
  }

  add(sub: Subscription): void {
    let entry = this.streams.get(sub.stream);
    if (!entry) this.streams.set(sub.stream, (entry = { groups: new Map(), seen: 0, repeated: 0, epoch: undefined, tail: '' }));
    let g = entry.groups.get(sub.identifier);
    if (!g) {
      g = { prefix: frames.dataPrefix(sub.identifier), subs: new Set(), topic: `t${++this.topicSeq}`, nat: new Set(), natEpoch: undefined, natOffset: 0, natFloor: undefined, pingDue: undefined };
      entry.groups.set(sub.identifier, g);
    }
    g.subs.add(sub);
    sub.group = g;
    this.subCount++;
  }

  remove(sub: Subscription): void {
    const entry = this.streams.get(sub.stream);
    const g = entry?.groups.get(sub.identifier);
    if (!entry || !g || sub.group !== g) return;
    sub.leaveTopic();
    if (!g.subs.delete(sub)) return;
    this.subCount--;
    if (g.subs.size === 0 && g.nat.size === 0) entry.groups.delete(sub.identifier);
    if (entry.groups.size === 0) this.streams.delete(sub.stream);
  }

  deliver(msgs: readonly StreamMessage[]): void {
    // One lookup per message: the entries are found first, which also tells which streams occur
    // more than once in the batch. Several messages for one stream would cost each subscriber one
    // write syscall per message: those subscribers' sockets are corked for the batch, so each
    // gets one writev. A stream with a single message in the batch keeps its plain single write.
    const batch = ++this.batches;
    const entries = new Array<StreamEntry | undefined>(msgs.length);
    let anyRepeated = false;
    for (let i = 0; i < msgs.length; i++) {
      const entry = this.streams.get(msgs[i]!.stream);
      entries[i] = entry;
      if (entry === undefined) continue;
      if (entry.seen !== batch) entry.seen = batch;
      else {
        entry.repeated = batch;
        anyRepeated = true;
      }
    }
    const corked = anyRepeated ? new Set<SubscriberConnection>() : undefined;
    const topics = this.topics !== undefined;
    for (let i = 0; i < msgs.length; i++) {
      const entry = entries[i];
      if (entry === undefined) continue;
      const m = msgs[i]!;
      let suffix: string;
      if (m.offset === undefined || m.epoch === undefined) suffix = frames.dataSuffix(m);
      else {
        if (entry.epoch !== m.epoch) {
          entry.epoch = m.epoch;
          entry.tail = dataTail(m.stream, m.epoch);
        }
        suffix = storedSuffix(m.message, entry.tail, m.offset);
      }
      const cork = corked !== undefined && entry.repeated === batch;
      for (const g of entry.groups.values()) {
        const frame = this.encode(g.prefix + suffix);
        this.deliveries += g.subs.size + g.nat.size;
        // Members first: one that joins below (tryTopic) has this frame already and is at its offset.
        if (g.nat.size > 0) this.toTopic(g, m, frame);
        for (const sub of g.subs) {
          if (cork && !corked.has(sub.conn)) {
            corked.add(sub.conn);
            sub.conn.cork?.();
          }
          sub.live(m, frame);
          if (topics) sub.tryTopic();
        }
      }
    }
    if (corked) for (const c of corked) c.uncork?.();
    this.topics?.endBatch();
  }

  /** A frame for a group's topic members (Group): stored frames above the group's position are published once. */
  private toTopic(g: Group, m: StreamMessage, frame: Buffer): void {
    if (m.offset === undefined || m.epoch === undefined) {
      // Transient (whispers): no position, and the sender is excluded: one by one (uWS writes
      // what was published to a socket before any frame sent to it).
      for (const sub of g.nat) sub.live(m, frame);
      return;
    }
    if (m.exclude !== undefined) {
      // A stored frame one connection must not get (meta.exclude_socket): every member goes back
      // to one-by-one delivery at the group's position, where exclusion is checked; rare.
      for (const sub of g.nat) sub.leaveTopic();
      return;
    }
    if (m.epoch !== g.natEpoch) {
      g.natEpoch = m.epoch;
      g.natFloor = m.offset;
    } else if (m.offset <= g.natOffset) return;
    g.natOffset = m.offset;
    this.topics!.publish(g.topic, frame);
    const due = g.pingDue;
    if (due !== undefined && due.size > 0) {
      for (const sub of due) sub.conn.pingAlong?.();
      due.clear();
    }
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

  /** Subscriptions delivered through the transport's topics now (Group.nat; counted on demand: /metrics). */
  get topicSubscriptionCount(): number {
    let n = 0;
    for (const e of this.streams.values()) for (const g of e.groups.values()) n += g.nat.size;
    return n;
  }

  get subscriptionCount(): number {
    return this.subCount;
  }
}

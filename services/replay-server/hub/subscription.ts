import { frames } from '../protocol/codec.ts';
import type { HistoryPosition, StreamMessage } from '../broker/types.ts';

/** What a subscription needs from its connection. */
export interface SubscriberConnection {
  readonly sid: string;
  /** True once the connection is going away: nothing more is sent. */
  readonly closing: boolean;
  /** A per-connection frame (JSON text). */
  send(frame: string): void;
  /** A prebuilt, shared WebSocket frame (see protocol/wsframe.ts). */
  sendFrame(frame: Buffer): void;
  /** The held-frames bound was hit: treat like a slow consumer. */
  overflow(): void;
  /** Live frames a held subscription may park (maxHeldFrames; the connection's, not a field per subscription). */
  readonly maxHeldFrames: number;
  /** Hold this connection's writes until `uncork` (a batch's frames then leave in one writev). */
  cork?(): void;
  uncork?(): void;
  /**
   * The transport has topics (SocketOps.topics) and nothing of this connection waits outside the
   * library (no outbox, no batch, no pressure): a subscription may join its group's topic now.
   */
  topicReady?(): boolean;
  joinTopic?(topic: string): void;
  leaveTopic?(topic: string): void;
  /** A ping due for this connection goes with what was just published to it (in its write). */
  pingAlong?(): void;
}

/**
 * One hub group: every subscription of one stream under one identifier string shares the prefix
 * and each data frame. Its members are in one of two sets:
 * - `subs`: delivered one by one (Subscription.live: exclusion, holds, each its own position);
 * - `nat`: members of the transport's topic `topic`, all at one position (`natEpoch`/`natOffset`,
 *   `natFloor` the first offset published in that epoch): the hub checks a stored frame once
 *   against that position and publishes it once; the library writes it to every member. A
 *   subscription joins when its own position is the group's (Subscription.tryTopic) and leaves,
 *   taking the group's position as its own, before anything reads or changes its position.
 */
export interface Group {
  readonly prefix: string;
  readonly subs: Set<Subscription>;
  readonly topic: string;
  readonly nat: Set<Subscription>;
  natEpoch: string | undefined;
  natOffset: number;
  natFloor: number | undefined;
  /** Members of `nat` whose connection has a ping due (connection/ping.ts): it leaves with the group's next publish. */
  pingDue: Set<Subscription> | undefined;
}

/**
 * One (connection, identifier) subscription to one stream, and the single place that enforces
 * "each offset exactly once, in order, and never a gap confirmed" across the history/live
 * boundary:
 * - `lastEpoch`/`lastOffset` is the newest position this subscription has delivered and
 *   `floor` the oldest offset of the contiguous run it delivered in that epoch: a history
 *   request that reaches below `floor` would need offsets this subscription skipped, so it is
 *   rejected instead of being confirmed with a hole;
 * - while held (a history read is in flight, or a restored session awaits the client's
 *   `history` command) live stored frames are parked; once the last hold ends the connection
 *   flushes them (paced by the socket) above the replayed offset, parking newer ones behind.
 */
interface HoldState {
  /** Holds in force (+1 while a restored subscription awaits the client's `history`). 0 = flushing. */
  count: number;
  /** Restored sub: the first `history` command takes over the initial hold instead of adding one. */
  awaitingHistory: boolean;
  pending: StreamMessage[];
}

export class Subscription {
  group: Group | undefined = undefined;
  /** In `group.nat`: its position is the group's until it leaves (leaveTopic). */
  nat = false;
  lastEpoch: string | undefined = undefined;
  lastOffset = 0;
  /** Oldest offset of the contiguous run delivered in `lastEpoch` (undefined: nothing delivered). */
  floor: number | undefined = undefined;
  /** Present only while frames are being held or flushed (most subscriptions never carry one). */
  private held: HoldState | undefined = undefined;

  constructor(
    readonly conn: SubscriberConnection,
    readonly identifier: string,
    readonly stream: string,
    readonly whisper: boolean,
  ) {}

  get holding(): boolean {
    return this.held !== undefined;
  }

  get awaitingHistory(): boolean {
    return this.held?.awaitingHistory === true;
  }

  /** Restored subscription: park live frames until the client's first `history` command. */
  holdForHistory(): void {
    this.leaveTopic();
    this.held = { count: 1, awaitingHistory: true, pending: [] };
  }

  /** The restore hold expired without a `history` command: release it (true: flush parked frames now). */
  releaseAwaiting(): boolean {
    if (!this.held?.awaitingHistory) return false;
    this.held.awaitingHistory = false;
    return this.endHold();
  }

  /** Forget parked frames (unsubscribe). */
  dropHeld(): void {
    this.held = undefined;
  }

  /** Live delivery from the hub; `frame` is the prebuilt shared WebSocket frame for this group. */
  live(msg: StreamMessage, frame: Buffer): void {
    const conn = this.conn;
    if (conn.closing || (msg.exclude !== undefined && msg.exclude === conn.sid)) return;
    if (msg.offset === undefined) {
      if (!this.held) conn.sendFrame(frame); // transient frames are never replayed, never held
      return;
    }
    if (this.held) {
      if (this.held.pending.length >= conn.maxHeldFrames) return conn.overflow();
      this.held.pending.push(msg);
      return;
    }
    if (this.accept(msg)) conn.sendFrame(frame);
  }

  /**
   * After a live delivery: join the group's topic when nothing is held, the connection is
   * ready, and this subscription's position is the group's (or the group has no member yet:
   * the group then takes this one's).
   */
  tryTopic(): void {
    const g = this.group;
    if (g === undefined || this.held !== undefined || this.conn.topicReady?.() !== true) return;
    if (g.nat.size === 0) {
      g.natEpoch = this.lastEpoch;
      g.natOffset = this.lastOffset;
    } else if (g.natEpoch !== this.lastEpoch || g.natOffset !== this.lastOffset) return;
    g.subs.delete(this);
    g.nat.add(this);
    this.nat = true;
    this.conn.joinTopic!(g.topic);
  }

  /** Back to one-by-one delivery, at the group's position (a no-op when not a member). */
  leaveTopic(): void {
    if (!this.nat) return;
    const g = this.group!;
    // An epoch that changed while a member started a new contiguous run at the group's first offset of it.
    if (g.natEpoch !== this.lastEpoch) this.floor = g.natFloor;
    this.lastEpoch = g.natEpoch;
    this.lastOffset = g.natOffset;
    g.nat.delete(this);
    g.pingDue?.delete(this);
    g.subs.add(this);
    this.nat = false;
    this.conn.leaveTopic!(g.topic);
  }

  /** Backlog delivery (history): one frame per message, only above the delivered position. */
  replay(msgs: readonly StreamMessage[]): void {
    this.leaveTopic();
    for (const m of msgs) {
      if (this.conn.closing) return;
      if (this.accept(m)) this.conn.send(this.frameFor(m));
    }
  }

  beginHold(): void {
    this.leaveTopic();
    if (!this.held) this.held = { count: 1, awaitingHistory: false, pending: [] };
    else if (this.held.awaitingHistory) this.held.awaitingHistory = false;
    else this.held.count++;
  }

  /** One hold ends; true when it was the last and the parked frames must now be flushed (see nextHeld). */
  endHold(): boolean {
    const h = this.held;
    if (!h || h.count === 0) return false;
    return --h.count === 0;
  }

  /**
   * Flushing: the next parked frame to deliver, or undefined when there is none left (the hold
   * is then over) or a new hold began (its end flushes the rest).
   */
  nextHeld(): StreamMessage | undefined {
    const h = this.held;
    if (!h || h.count > 0) return undefined;
    const m = h.pending.shift();
    if (m === undefined) this.held = undefined;
    return m;
  }

  /** Deliver one parked frame (above the delivered position only). */
  deliverHeld(m: StreamMessage): void {
    if (this.accept(m)) this.conn.send(this.frameFor(m));
  }

  /**
   * Where to start reading for a history request: after what this subscription already
   * delivered contiguously when the request's position lies inside that run (repeated requests
   * then read nothing twice).
   */
  startAfter(pos: HistoryPosition): HistoryPosition {
    this.leaveTopic();
    if ('since' in pos || this.floor === undefined || pos.epoch !== this.lastEpoch) return pos;
    if (pos.offset + 1 >= this.floor && pos.offset < this.lastOffset) return { epoch: pos.epoch, offset: this.lastOffset };
    return pos;
  }

  /** True when a backlog starting with `first` holds offsets this subscription skipped. */
  wouldGap(first: StreamMessage | undefined): boolean {
    this.leaveTopic();
    return first?.offset !== undefined && this.floor !== undefined && first.epoch === this.lastEpoch && first.offset < this.floor;
  }

  private accept(m: StreamMessage): boolean {
    if (m.offset === undefined) return true;
    if (m.epoch !== this.lastEpoch) {
      this.lastEpoch = m.epoch;
      this.floor = m.offset;
    } else if (m.offset <= this.lastOffset) return false;
    this.lastOffset = m.offset;
    return true;
  }

  private frameFor(m: StreamMessage): string {
    return (this.group?.prefix ?? frames.dataPrefix(this.identifier)) + frames.dataSuffix(m);
  }
}

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
}

/** One hub group: every subscription of one stream under one identifier string shares the prefix. */
export interface Group {
  readonly prefix: string;
  readonly subs: Set<Subscription>;
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

  /** Backlog delivery (history): one frame per message, only above the delivered position. */
  replay(msgs: readonly StreamMessage[]): void {
    for (const m of msgs) {
      if (this.conn.closing) return;
      if (this.accept(m)) this.conn.send(this.frameFor(m));
    }
  }

  beginHold(): void {
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
    if ('since' in pos || this.floor === undefined || pos.epoch !== this.lastEpoch) return pos;
    if (pos.offset + 1 >= this.floor && pos.offset < this.lastOffset) return { epoch: pos.epoch, offset: this.lastOffset };
    return pos;
  }

  /** True when a backlog starting with `first` holds offsets this subscription skipped. */
  wouldGap(first: StreamMessage | undefined): boolean {
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

import { frames } from '../protocol/codec.ts';
import type { StreamMessage } from '../broker/types.ts';

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
}

/** One hub group: every subscription of one stream under one identifier string shares the prefix. */
export interface Group {
  readonly prefix: string;
  readonly subs: Set<Subscription>;
}

/**
 * One (connection, identifier) subscription to one stream, and the single place that enforces
 * "each offset exactly once, in order" across the history/live boundary:
 * - `lastEpoch`/`lastOffset` is the newest position this subscription has delivered;
 * - while held (a history read is in flight, or a restored session awaits the client's
 *   `history` command) live stored frames are parked, and flushed above the
 *   replayed offset once the last read finishes.
 */
interface HoldState {
  /** History reads in flight (+1 while a restored subscription awaits the client's `history`). */
  count: number;
  /** Restored sub: the first `history` command takes over the initial hold instead of adding one. */
  awaitingHistory: boolean;
  pending: StreamMessage[];
}

export class Subscription {
  group: Group | undefined = undefined;
  lastEpoch: string | undefined = undefined;
  lastOffset = 0;
  /** Present only while frames are being held (most subscriptions never carry one). */
  private held: HoldState | undefined = undefined;

  constructor(
    readonly conn: SubscriberConnection,
    readonly identifier: string,
    readonly stream: string,
    readonly whisper: boolean,
    private readonly maxPending: number,
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

  /** The restore hold expired without a `history` command: release it. */
  releaseAwaiting(): void {
    if (!this.held?.awaitingHistory) return;
    this.held.awaitingHistory = false;
    this.endHold();
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
      if (this.held.pending.length >= this.maxPending) return conn.overflow();
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

  endHold(): void {
    const h = this.held;
    if (!h || --h.count > 0) return;
    this.held = undefined;
    this.replay(h.pending);
  }

  private accept(m: StreamMessage): boolean {
    if (m.offset === undefined) return true;
    if (m.epoch === this.lastEpoch && m.offset <= this.lastOffset) return false;
    this.lastEpoch = m.epoch;
    this.lastOffset = m.offset;
    return true;
  }

  private frameFor(m: StreamMessage): string {
    return (this.group?.prefix ?? frames.dataPrefix(this.identifier)) + frames.dataSuffix(m);
  }
}

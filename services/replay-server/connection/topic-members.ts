import type { HubTopics } from '../hub/index.ts';
import type { TopicOps } from './transport.ts';

/**
 * Held by every topic member for as long as its socket lives: uWS frees a socket's subscriber
 * state when it leaves its last topic, and with it the frames published to it and not yet
 * written (seen on v20.30). Group topics are `t<n>` (hub/index.ts), so this name is never one.
 */
export const ANCHOR_TOPIC = '#';
/** Pings going along in one `deliver` batch: published once to the members that take one, then left. */
export const PING_TOPIC = 'p';

export interface TopicMember {
  /** Called by the sweep: a member whose socket holds too much leaves its topics (see Connection). */
  checkTopicPressure(): void;
}

/** How often the sweep looks at members' sockets: a quarter of slowConsumerMs, within 25 ms-1 s. */
export const topicSweepMs = (slowConsumerMs: number) => Math.max(25, Math.min(1000, Math.floor(slowConsumerMs / 4)));

/**
 * The connections in the transport's topics (hub/subscription.ts Group.nat), and the sweep that
 * keeps the slow-consumer rule for them. Frames published to a topic never pass the connection's
 * own check before a write (that per-delivery work is what publishing saves), so each member's
 * socket is looked at instead (Connection.checkTopicPressure): every `periodMs` (the no-progress
 * clock), and as soon as `sweepBytes` have been published since the last look (no member's
 * buffer can have grown by more than what was published, so the byte bounds hold within that).
 */
export class TopicMembers<C extends TopicMember> implements HubTopics {
  private readonly conns = new Set<C>();
  private timer: NodeJS.Timeout | undefined = undefined;
  /** Sockets in PING_TOPIC until the batch ends, and the ping frame they get. */
  private pingSocks: unknown[] = [];
  private pingFrame: Buffer | undefined = undefined;

  /** Bytes published since the last sweep. */
  private published = 0;

  constructor(
    readonly ops: TopicOps,
    /** SocketOps.writable: a socket the library closed takes no call. */
    private readonly writable: (sock: unknown) => boolean,
    private readonly periodMs: number,
    private readonly sweepBytes: number,
  ) {}

  /** The hub's publish (hub/index.ts): the frame goes to the topic, and its bytes count toward a sweep. */
  publish(topic: string, frame: Buffer): void {
    this.ops.publish(topic, frame);
    this.published += frame.length;
    if (this.published >= this.sweepBytes) this.sweep();
  }

  /**
   * A member's due ping goes with the frames just published to it. A send would not share their
   * write (uWS writes a socket's published frames first, then the send, in two), while frames
   * published to one socket in one loop iteration leave in one write: so the ping is published
   * too, once per batch, to a topic its takers join for that moment (any ping frame will do: its
   * message is the server's time in seconds).
   */
  pingAlong(sock: unknown, frame: Buffer): void {
    this.ops.subscribe(sock, PING_TOPIC);
    this.pingSocks.push(sock);
    this.pingFrame = frame;
  }

  endBatch(): void {
    const frame = this.pingFrame;
    if (frame === undefined) return;
    const socks = this.pingSocks;
    this.pingSocks = [];
    this.pingFrame = undefined;
    this.ops.publish(PING_TOPIC, frame);
    // The anchor keeps each socket's published frames across the unsubscribe.
    for (const s of socks) if (this.writable(s)) this.ops.unsubscribe(s, PING_TOPIC);
  }

  /** `c` joins a topic: it holds the anchor from now until it closes. */
  add(c: C, sock: unknown): void {
    if (this.conns.has(c)) return;
    this.ops.subscribe(sock, ANCHOR_TOPIC);
    this.conns.add(c);
    if (this.timer === undefined) {
      this.timer = setInterval(this.sweep, this.periodMs);
      this.timer.unref();
    }
  }

  /** The socket is gone (uWS dropped its topics with it). */
  delete(c: C): void {
    if (!this.conns.delete(c) || this.conns.size > 0) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private readonly sweep = () => {
    this.published = 0;
    for (const c of this.conns) c.checkTopicPressure();
  };

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.conns.clear();
  }
}

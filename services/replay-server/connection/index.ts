import type { SessionChange } from '../broker/types.ts';
import { Subscription, type SubscriberConnection } from '../hub/index.ts';
import { frames, parseFrame } from '../protocol/codec.ts';
import type { ClientCommand, DisconnectReason } from '../protocol/types.ts';
import { decodeSession, newSid } from '../session/index.ts';
import { flushHeld, historyPosition, HistoryQueue } from './history.ts';
import { Outbox } from './outbox.ts';
import type { Pingable } from './ping.ts';
import type { TopicMember } from './topic-members.ts';
import type { SocketOps } from './transport.ts';
import type { ConnectionContext, ConnectParams } from './types.ts';
import { WhisperBudget } from './whisper-budget.ts';

const REASONS: readonly DisconnectReason[] = ['server_restart', 'too_slow', 'unauthorized', 'invalid_request'];
/** The disconnect frames of one transport, prebuilt once per reason. */
export function disconnectFrames(io: SocketOps): Record<DisconnectReason, Buffer> {
  return Object.fromEntries(REASONS.map((r) => [r, io.encode(frames.disconnect(r))])) as Record<DisconnectReason, Buffer>;
}
const CLOSE_CODES: Record<DisconnectReason, number> = { server_restart: 1012, too_slow: 1013, unauthorized: 1008, invalid_request: 1008 };
/**
 * Frames that arrive while a session restore is still being looked up are queued; past this
 * many the socket stops being read (TCP pushes back on the client) until the restore is done.
 */
const EARLY_FRAMES_BEFORE_PAUSE = 64;
const EARLY_BYTES_BEFORE_PAUSE = 262_144;
/**
 * Frames ws had already read when the socket paused still arrive (at most one socket read plus
 * a frame), and uWS cannot pause at all; past these hard bounds the client is refused.
 */
const MAX_EARLY_FRAMES = 10_000;
const earlyBytesLimit = (maxPayloadBytes: number) => EARLY_BYTES_BEFORE_PAUSE + 2 * maxPayloadBytes + 65_536;
/**
 * Rare, short-lived per-connection state lives in side tables instead of fields on every
 * connection: frames that arrive while a restore lookup is in flight, the restore hold timer,
 * history work and the whisper budget.
 */
const earlyFrames = new WeakMap<Connection, { frames: string[]; bytes: number; paused: boolean }>();
const holdTimers = new WeakMap<Connection, NodeJS.Timeout>();
const histories = new WeakMap<Connection, HistoryQueue>();
const whisperBudgets = new WeakMap<Connection, WhisperBudget>();

/**
 * One client connection: welcome/restore, command dispatch, sends with the slow-consumer check.
 * Kept deliberately small per instance (a few fields; `subs` is created on first subscribe).
 */
export class Connection implements SubscriberConnection, Pingable, TopicMember {
  sid: string = newSid();
  closing = false;
  /** Most connections hold one subscription: kept inline, a Map only from the second one on. */
  private subs: Subscription | Map<string, Subscription> | undefined = undefined;
  /** Output waiting for the socket (only while it is over maxBufferedBytes); read on every send. */
  private outbox: Outbox | undefined = undefined;
  /** Set by the ping scheduler (connection/ping.ts, piggyback): the next frame takes it along. */
  duePing: Buffer | undefined = undefined;
  /**
   * Open `cork`s of this connection's socket: while any is, frames join the batch in order.
   * Counted here rather than read from the transport's batch, so `sendNow`'s path reads nothing
   * of the socket.
   */
  private corks = 0;
  /** The last `sendNow` left bytes in the library's buffer (SocketOps.sendNow): check before the next. */
  private pressured = false;

  /** `sock`: the transport's native socket (ctx.io operates on it); the transport delivers its events here. */
  constructor(
    readonly sock: unknown,
    readonly ext: boolean,
    private readonly ctx: ConnectionContext,
  ) {}

  get maxHeldFrames(): number {
    return this.ctx.opts.maxHeldFrames;
  }

  getSub(identifier: string): Subscription | undefined {
    const s = this.subs;
    if (s === undefined) return undefined;
    if (s instanceof Map) return s.get(identifier);
    return s.identifier === identifier ? s : undefined;
  }

  subCount(): number {
    const s = this.subs;
    return s === undefined ? 0 : s instanceof Map ? s.size : 1;
  }

  subList(): Subscription[] {
    const s = this.subs;
    return s === undefined ? [] : s instanceof Map ? [...s.values()] : [s];
  }

  private addSub(sub: Subscription): void {
    const s = this.subs;
    if (s === undefined) this.subs = sub;
    else if (s instanceof Map) s.set(sub.identifier, sub);
    else this.subs = new Map([[s.identifier, s], [sub.identifier, sub]]);
  }

  private deleteSub(sub: Subscription): void {
    const s = this.subs;
    if (s === sub) this.subs = undefined;
    else if (s instanceof Map) {
      s.delete(sub.identifier);
      if (s.size === 1) this.subs = s.values().next().value;
    }
  }

  socketError(): void {
    this.ctx.counters.badFrames.socket_error++;
  }

  /** Welcome (after a restore lookup when the client presented a sid) or `unauthorized`. */
  start(p: ConnectParams): void {
    const { opts, broker, counters } = this.ctx;
    if (opts.accessToken && p.token !== opts.accessToken) return this.disconnect('unauthorized');
    if (!(this.ext && opts.sessionTtlSec > 0 && p.restoreSid)) return this.send(frames.welcome(this.sid));
    earlyFrames.set(this, { frames: [], bytes: 0, paused: false });
    broker.restoreSession(p.restoreSid).then(
      (state) => {
        if (this.closing) return;
        if (state === undefined) {
          counters.restoreMisses++;
          this.send(frames.welcome(this.sid));
        } else {
          counters.restoreHits++;
          this.restore(decodeSession(state));
        }
        this.drainEarly();
      },
      () => {
        if (this.closing) return;
        counters.restoreMisses++;
        this.send(frames.welcome(this.sid));
        this.drainEarly();
      },
    );
  }

  /** Whether one more identifier fits the per-identifier and per-session byte bounds. */
  private fits(identifier: string): boolean {
    const { opts } = this.ctx;
    const bytes = Buffer.byteLength(identifier);
    if (bytes > opts.maxIdentifierBytes) return false;
    // Identifier bytes held (bounded by maxSessionBytes: what a session and a restore welcome
    // carry), summed here, on a subscribe, rather than kept in a field on every connection.
    let held = bytes;
    for (const sub of this.subList()) held += Buffer.byteLength(sub.identifier);
    return held <= opts.maxSessionBytes;
  }

  /** Re-create the subscriptions server-side; each parks live frames until the client's `history`. */
  private restore(ids: string[]): void {
    const { opts, hub, resolve, counters } = this.ctx;
    const restored: string[] = [];
    for (const id of ids) {
      const r = resolve(id);
      if (!r || this.getSub(id) || this.subCount() >= opts.maxSubscriptions) continue;
      if (!this.fits(id)) {
        counters.sessionLimitRejects++;
        continue;
      }
      const sub = new Subscription(this, hub.intern(r.stream, id), r.stream, r.whisper);
      if (opts.restoreHoldMs > 0) sub.holdForHistory();
      hub.add(sub);
      this.addSub(sub);
      restored.push(sub.identifier);
    }
    if (restored.length > 0 && opts.restoreHoldMs > 0) {
      const t = setTimeout(() => this.releaseAwaiting(), opts.restoreHoldMs);
      t.unref();
      holdTimers.set(this, t);
    }
    this.send(frames.welcomeRestored(this.sid, restored));
    if (restored.length > 0) this.commit({ add: restored });
  }

  private releaseAwaiting(): void {
    holdTimers.delete(this);
    for (const sub of this.subList()) if (sub.releaseAwaiting()) void flushHeld(this, sub);
  }

  private drainEarly(): void {
    const q = earlyFrames.get(this);
    earlyFrames.delete(this);
    if (q) for (const t of q.frames) if (!this.closing) this.handleText(t);
    if (q?.paused && !this.closing) this.ctx.io.resume(this.sock);
  }

  receive(data: unknown, _isBinary: boolean): void {
    if (this.closing) return;
    const text = Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data as Buffer[]).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
    const early = earlyFrames.get(this);
    if (early) {
      // A client may talk before the restore answered (pings, subscribes): queue, and past a
      // few dozen frames stop reading the socket instead of refusing the client.
      if (early.frames.length >= MAX_EARLY_FRAMES || early.bytes > earlyBytesLimit(this.ctx.opts.maxPayloadBytes)) return this.disconnect('invalid_request');
      early.frames.push(text);
      early.bytes += text.length;
      if (!early.paused && (early.frames.length >= EARLY_FRAMES_BEFORE_PAUSE || early.bytes >= EARLY_BYTES_BEFORE_PAUSE)) {
        early.paused = true;
        this.ctx.counters.earlyFramePauses++;
        this.ctx.io.pause(this.sock);
      }
      return;
    }
    this.handleText(text);
  }

  private handleText(text: string): void {
    const parsed = parseFrame(text);
    if (!parsed.ok) {
      this.ctx.counters.badFrames[parsed.error]++;
      return this.disconnect('invalid_request');
    }
    this.dispatch(parsed.cmd);
  }

  private dispatch(cmd: ClientCommand): void {
    switch (cmd.command) {
      case 'subscribe':
        return this.subscribe(cmd.identifier, cmd.history);
      case 'unsubscribe':
        return this.unsubscribe(cmd.identifier);
      case 'history': {
        const sub = this.getSub(cmd.identifier);
        if (!sub) {
          this.ctx.counters.historyRejected++;
          return this.send(frames.rejectHistory(cmd.identifier));
        }
        return this.history(sub, cmd.history);
      }
      case 'whisper':
        return this.whisper(cmd.identifier, cmd.data);
      case 'presence':
        return this.send(frames.presenceError(cmd.identifier));
      case 'ping':
        return this.send(frames.pong());
      case 'message': // `$pubsub` has no actions; anycable-go ignores it too
        this.ctx.counters.ignoredCommands++;
        return;
      case 'pong':
        return;
      default: {
        const never: never = cmd;
        void never;
      }
    }
  }

  private subscribe(identifier: string, history: unknown): void {
    const { opts, hub, resolve, counters } = this.ctx;
    // anycable-go answers a duplicate subscribe with nothing; a confirm would make the client unsubscribe.
    if (this.getSub(identifier)) return;
    const fits = this.fits(identifier);
    if (!fits) counters.sessionLimitRejects++;
    const r = fits && this.subCount() < opts.maxSubscriptions ? resolve(identifier) : null;
    if (!r) {
      counters.subscribesRejected++;
      return this.send(frames.rejectSubscription(identifier));
    }
    const id = hub.intern(r.stream, identifier);
    const sub = new Subscription(this, id, r.stream, r.whisper);
    hub.add(sub);
    this.addSub(sub);
    counters.subscribesConfirmed++;
    this.send(frames.confirmSubscription(identifier));
    this.commit({ add: [sub.identifier] });
    if (history !== undefined) this.history(sub, history);
  }

  private unsubscribe(identifier: string): void {
    const sub = this.getSub(identifier);
    if (!sub) return;
    this.deleteSub(sub);
    this.ctx.hub.remove(sub);
    sub.dropHeld();
    this.commit({ remove: [sub.identifier] });
  }

  /** Serve a history request (paced, bounded per connection: see HistoryQueue). */
  private history(sub: Subscription, req: unknown): void {
    let q = histories.get(this);
    if (!q) histories.set(this, (q = new HistoryQueue(this, { broker: this.ctx.broker, counters: this.ctx.counters, pageBytes: this.ctx.opts.historyPageBytes }, historyPosition)));
    q.request(sub, req);
  }

  private whisper(identifier: string, data: unknown): void {
    const { counters, opts, broker } = this.ctx;
    const sub = this.getSub(identifier);
    if (!sub || !sub.whisper) {
      counters.whispersRefused++;
      counters.ignoredCommands++;
      return;
    }
    const message = JSON.stringify(data);
    const size = Buffer.byteLength(message);
    const now = Date.now();
    let budget = whisperBudgets.get(this);
    if (!budget) whisperBudgets.set(this, (budget = new WhisperBudget(opts.whisperRatePerSec, opts.whisperBytesPerSec, now)));
    if (!budget.take(size, now)) {
      counters.whispersDropped++;
      return;
    }
    counters.whispers++;
    counters.whisperBytes += size;
    void broker.publish([{ stream: sub.stream, message, exclude: this.sid, transient: true }]).catch(() => {});
  }

  /** Sessions are stored incrementally: a subscribe sends its own identifier, not the whole session. */
  private commit(change: SessionChange): void {
    if (!this.ext || this.ctx.opts.sessionTtlSec <= 0) return;
    void this.ctx.broker.updateSession(this.sid, change).catch(() => {});
  }

  /** Send one JSON frame unless the connection is closing (queued behind the socket when it is full). */
  send(frame: string): void {
    if (this.closing) return;
    this.sendFrame(this.ctx.io.encode(frame));
  }

  /**
   * A prebuilt frame (SocketOps.encode; shared by many connections: data, ping): one socket
   * write, or queued in order while the socket is over maxBufferedBytes.
   */
  sendFrame(frame: Buffer): void {
    if (this.closing) return;
    const ping = this.duePing;
    if (ping === undefined) return this.put(frame);
    // A ping was due (connection/ping.ts, piggyback): it leaves ahead of this frame, in its write.
    this.duePing = undefined;
    this.cork();
    this.put(ping);
    this.put(frame);
    this.uncork();
  }

  /** sendFrame's write: one socket write, or queued in order behind the outbox. */
  private put(frame: Buffer): void {
    if (this.closing) return;
    const { io } = this.ctx;
    const sock = this.sock;
    let box = this.outbox;
    // A socket that kept up (nothing buffered after its last send, no batch open, nothing queued)
    // takes the frame at once. Not closing means the socket is open: the transports' close
    // handlers run cleanup() before any other delivery.
    if (box === undefined && this.corks === 0 && !this.pressured && io.sendNow !== undefined) {
      this.pressured = !io.sendNow(sock, frame);
      return;
    }
    if (!io.writable(sock)) return;
    if (box === undefined) {
      const buffered = io.buffered(sock);
      if (buffered <= this.ctx.opts.maxBufferedBytes) {
        this.pressured = buffered > 0;
        io.write(sock, frame);
        return;
      }
      box = this.openOutbox();
    }
    if (!box.push(frame)) this.queueOverflow();
  }

  /** More waiting than maxQueuedBytes allows (the outbox's, or a topic member's buffer past both bounds). */
  private queueOverflow(): void {
    this.ctx.counters.queueOverflows++;
    this.disconnect('too_slow');
  }

  private openOutbox(): Outbox {
    // Frames wait here in order from now on: nothing may reach the socket past them through a topic.
    this.leaveTopics();
    const box = new Outbox(
      this.sock,
      this.ctx.io,
      this.ctx.opts,
      () => {
        this.ctx.counters.slowConsumerStalls++;
        this.disconnect('too_slow');
      },
      () => {
        if (this.outbox === box) this.outbox = undefined;
      },
    );
    this.outbox = box;
    return box;
  }

  /** Undefined when the socket can take more now; else resolves when it can (or the connection closes). */
  writable(): Promise<void> | undefined {
    if (this.closing) return undefined;
    const { io } = this.ctx;
    if (!io.writable(this.sock)) return undefined;
    let box = this.outbox;
    if (!box) {
      if (io.buffered(this.sock) <= this.ctx.opts.maxBufferedBytes) return undefined;
      box = this.openOutbox();
    }
    const b = box;
    return new Promise((r) => b.wait(r));
  }

  cork(): void {
    this.corks++;
    this.ctx.io.cork(this.sock);
  }

  uncork(): void {
    this.corks--;
    this.ctx.io.uncork(this.sock);
  }

  overflow(): void {
    this.disconnect('too_slow');
  }

  /** See SubscriberConnection.topicReady: topics exist and every frame of this connection can go straight to its socket. */
  topicReady(): boolean {
    if (this.ctx.topics === undefined || this.closing || this.outbox !== undefined || this.corks > 0) return false;
    // uWS answers BACKPRESSURE for a send that only waits in its cork buffer for the end of the
    // loop iteration (a fifth of the first live sends at 2,000 connections): ask what is really there.
    if (this.pressured) this.pressured = this.ctx.io.buffered(this.sock) > 0;
    return !this.pressured;
  }

  joinTopic(topic: string): void {
    const members = this.ctx.topics!;
    members.add(this, this.sock);
    members.ops.subscribe(this.sock, topic);
  }

  leaveTopic(topic: string): void {
    // A socket uWS already closed has left every topic (and throws on any call).
    if (this.ctx.io.writable(this.sock)) this.ctx.topics!.ops.unsubscribe(this.sock, topic);
  }

  /** Each subscription, without the array subList() makes (pingDue runs for every due ping). */
  private eachSub(fn: (sub: Subscription) => void): void {
    const s = this.subs;
    if (s instanceof Map) for (const sub of s.values()) fn(sub);
    else if (s !== undefined) fn(s);
  }

  /** Every subscription back to one-by-one delivery. */
  private leaveTopics(): void {
    this.eachSub((sub) => sub.leaveTopic());
  }

  /**
   * Ping scheduler: a ping became due. A topic member's data never passes sendFrame, so the
   * ping waits in its groups instead (Group.pingDue) and leaves with the next frame published to
   * one of them (pingAlong), in that frame's write.
   */
  pingDue(): void {
    if (this.ctx.topics === undefined) return;
    this.eachSub((sub) => {
      if (sub.nat) (sub.group!.pingDue ??= new Set()).add(sub);
    });
  }

  pingAlong(): void {
    const ping = this.duePing;
    if (ping === undefined || this.closing) return;
    this.duePing = undefined;
    this.ctx.topics!.pingAlong(this.sock, ping);
  }

  /**
   * The topic sweep (connection/topic-members.ts), the check put() makes before a write: past
   * maxBufferedBytes + maxQueuedBytes the consumer is too slow (what overflows the outbox); past
   * maxBufferedBytes the topics are left and the outbox's no-progress clock starts.
   */
  checkTopicPressure(): void {
    if (this.closing || this.outbox !== undefined) return;
    const { opts } = this.ctx;
    const buffered = this.ctx.topics!.ops.buffered(this.sock);
    if (buffered <= opts.maxBufferedBytes) return;
    if (buffered > opts.maxBufferedBytes + opts.maxQueuedBytes) return this.queueOverflow();
    this.pressured = true;
    this.openOutbox();
  }

  /**
   * Say why, close, and make sure the socket is gone after `graceMs` (a negative grace leaves
   * terminating to the caller: graceful stop sweeps every socket with one timer).
   */
  disconnect(reason: DisconnectReason, graceMs = 1000): void {
    if (this.closing) return;
    this.closing = true;
    this.outbox?.abort();
    // Nothing is published to it any more; what was is written ahead of the goodbye (uWS drains first).
    this.leaveTopics();
    this.ctx.counters.disconnects[reason]++;
    const { io } = this.ctx;
    const sock = this.sock;
    if (!io.writable(sock)) return io.terminate(sock);
    // One write for both frames (syscalls are what a 10,000-client stop costs); the disconnect
    // frame is prebuilt once per reason.
    io.close(sock, CLOSE_CODES[reason], this.ctx.disconnectFrames[reason]);
    if (graceMs >= 0) setTimeout(() => io.terminate(sock), graceMs).unref();
  }

  /**
   * Graceful-stop variant: the server stops the leftovers itself after its grace period. With
   * `stopReading` (the process is about to exit) the socket stops reading, so thousands of close
   * handshakes cannot keep the event loop busy past the grace period; the kernel delivers the
   * frames already written and closes the sockets when the process exits.
   */
  shutdown(stopReading = false): void {
    this.disconnect('server_restart', -1);
    if (stopReading) this.ctx.io.pause(this.sock);
  }

  cleanup(): void {
    this.closing = true;
    const t = holdTimers.get(this);
    if (t) clearTimeout(t);
    holdTimers.delete(this);
    earlyFrames.delete(this);
    this.outbox?.abort();
    const subs = this.subList();
    if (subs.length > 0) {
      // Refresh the session TTL from the moment the client went away.
      if (!this.ctx.stopping) this.commit({});
      for (const sub of subs) this.ctx.hub.remove(sub);
    }
    this.subs = undefined;
    this.ctx.topics?.delete(this);
    this.ctx.closed(this);
  }
}

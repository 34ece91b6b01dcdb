import type { SocketOps } from './transport.ts';

export interface OutboxLimits {
  /** Socket write buffer a connection may fill; beyond it frames wait here. */
  maxBufferedBytes: number;
  /** Bytes that may wait here (a single frame always fits). */
  maxQueuedBytes: number;
  /** No drain for this long while something waits: the consumer stopped reading. */
  slowConsumerMs: number;
}

/**
 * Output a connection could not hand to its socket yet, and the slow-consumer clock. Exists only
 * while the socket is over `maxBufferedBytes` (most connections never have one): frames wait
 * here in order, go out as the socket drains, and history replay waits (`wait`) for room.
 *
 * A consumer is too slow when it makes no progress (no drain for `slowConsumerMs`) or lets more
 * than `maxQueuedBytes` pile up; a burst the server created itself (a large batch, a backlog)
 * is paced, not punished.
 */
export class Outbox {
  private frames: Array<Buffer | undefined> = [];
  private head = 0;
  private bytes = 0;
  private waiters: Array<() => void> = [];
  private closed = false;
  private readonly timer: NodeJS.Timeout;
  private readonly onDrain = () => this.flush();

  constructor(
    private readonly sock: unknown,
    private readonly io: SocketOps,
    private readonly limits: OutboxLimits,
    onStall: () => void,
    private readonly onEmpty: () => void,
  ) {
    this.timer = setTimeout(onStall, limits.slowConsumerMs);
    this.timer.unref();
    this.awaitDrain();
  }

  get queuedBytes(): number {
    return this.bytes;
  }

  /** Queue a frame behind the others; false when that would exceed `maxQueuedBytes`. */
  push(frame: Buffer): boolean {
    if (this.bytes > 0 && this.bytes + frame.length > this.limits.maxQueuedBytes) return false;
    this.frames.push(frame);
    this.bytes += frame.length;
    return true;
  }

  /** Call `cb` once everything queued is written and the socket is below the mark again. */
  wait(cb: () => void): void {
    this.waiters.push(cb);
  }

  private awaitDrain(): void {
    this.io.awaitDrain(this.sock, this.onDrain);
  }

  private flush(): void {
    if (this.closed) return;
    const { io, sock } = this;
    if (!io.writable(sock)) return this.abort();
    const max = this.limits.maxBufferedBytes;
    while (this.head < this.frames.length && io.buffered(sock) <= max) {
      const f = this.frames[this.head]!;
      this.frames[this.head++] = undefined;
      this.bytes -= f.length;
      io.write(sock, f);
    }
    if (this.head >= this.frames.length && io.buffered(sock) <= max) {
      this.close();
      this.onEmpty();
      this.wake();
      return;
    }
    if (this.head > 1024 && this.head * 2 > this.frames.length) {
      this.frames = this.frames.slice(this.head);
      this.head = 0;
    }
    this.timer.refresh(); // progress: the consumer read something
    this.awaitDrain();
  }

  private close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.io.cancelDrain(this.sock, this.onDrain);
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** The connection is going away: drop the queue and wake waiters (they see `closing`). */
  abort(): void {
    if (this.closed) return;
    this.close();
    this.frames = [];
    this.bytes = 0;
    this.onEmpty();
    this.wake();
  }
}

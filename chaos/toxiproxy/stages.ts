import type { ToxicRecord } from './toxics.ts';
import type { ToxicType } from './types.ts';

/**
 * One toxic running on one link (connection × direction). A port of Toxiproxy's `toxics/*.go`
 * Pipe loops onto Node's event loop: instead of a goroutine per stage, a stage holds a FIFO and
 * at most one timer, armed only while it holds data (idle links arm nothing).
 */

/** End of stream travelling through the chain after the data read before it. */
export const EOF = Symbol('eof');
/** One `read()` from the source, timestamped at read time (ms, performance.now()). */
interface Chunk {
  data: Buffer;
  at: number;
}
export type Item = Chunk | typeof EOF;

export interface Sink {
  accept(item: Item): void;
}

/** What a stage needs from its link. */
export interface StageHost {
  now(): number;
  rng(): number;
  /** `bytes` left the chain without being written (dropped by a toxic). */
  release(bytes: number): void;
  /** Tear the connection down with RST on both sockets (reset_peer). */
  reset(): void;
  timers: { armed: number };
}

/** Returned by `step()`: keep the head until the stage is re-run (bandwidth rate 0). */
const HOLD = Infinity;

class Fifo<T> {
  private items: T[] = [];
  private head = 0;
  get length() {
    return this.items.length - this.head;
  }
  push(v: T) {
    this.items.push(v);
  }
  peek(): T | undefined {
    return this.items[this.head];
  }
  /** Drop the head (nothing when empty). */
  shift(): void {
    if (this.length === 0) return;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
  takeAll(): T[] {
    const out = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return out;
  }
}

export abstract class Stage implements Sink {
  next!: Sink;
  /** The toxicity roll of this run: false = behave as noop. */
  active = false;
  protected attrs: Record<string, number> = {};
  protected readonly queue = new Fifo<Item>();
  /** This stage emitted EOF (closed its output); later input is dropped. */
  protected closed = false;
  /** Removed or its connection closed: never emit again. */
  protected disposed = false;
  private timer: NodeJS.Timeout | undefined;
  /** `step()` asked to keep the head until the next run (no timer armed). */
  private holding = false;

  constructor(
    readonly name: string,
    protected readonly host: StageHost,
  ) {}

  /** (Re)run with the toxic's current attributes: Toxiproxy re-rolls toxicity and restarts timers. */
  run(record: Pick<ToxicRecord, 'attributes' | 'toxicity'>): void {
    const held = this.interrupt();
    this.attrs = { ...record.attributes };
    this.active = this.host.rng() < record.toxicity;
    this.start();
    for (const item of held) this.accept(item);
  }

  accept(item: Item): void {
    if (this.closed || this.disposed) return this.drop(item);
    if (!this.active) return this.emit(item);
    this.onItem(item);
  }

  /** Removal: stop, hand back what is held (in order) and whether the link must close. */
  remove(): { held: Item[]; close: boolean } {
    const held = this.interrupt();
    this.disposed = true;
    return { held, close: false };
  }

  /** Connection gone: forget everything. */
  dispose(): void {
    this.disposed = true;
    this.clearTimer();
    this.queue.takeAll();
  }

  /** Called after attributes change and on first run. */
  protected start(): void {}

  /** Default item handling: queue and pump through `step()`. */
  protected onItem(item: Item): void {
    this.queue.push(item);
    if (this.timer === undefined && !this.holding && this.queue.length === 1) this.pump();
  }

  /**
   * Process the head of the queue. Return 0 to continue with the next head, a wait in ms to be
   * called again later, or HOLD to wait for the next run.
   */
  protected step(head: Item): number {
    return this.pass(head);
  }

  /** Emit the head and go on with the next: `step()`'s 0. */
  protected pass(head: Item): number {
    this.queue.shift();
    this.emit(head);
    return 0;
  }

  /** Stop timers and take back held items. */
  protected interrupt(): Item[] {
    this.clearTimer();
    this.holding = false;
    this.resetRun();
    return this.queue.takeAll();
  }

  /** Subclasses forget their per-run state here (a re-run or a removal starts afresh). */
  protected resetRun(): void {}

  protected emit(item: Item): void {
    if (this.closed || this.disposed) return this.drop(item);
    if (item === EOF) this.closed = true;
    this.next.accept(item);
  }

  protected drop(item: Item): void {
    if (item !== EOF) this.host.release(item.data.length);
  }

  protected setTimer(ms: number, fn: () => void): void {
    this.clearTimer();
    this.host.timers.armed++;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.host.timers.armed--;
      fn();
    }, Math.max(1, Math.round(ms)));
  }

  protected clearTimer(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.host.timers.armed--;
  }

  private readonly pump = (): void => {
    this.holding = false;
    for (let head = this.queue.peek(); head !== undefined && !this.disposed; head = this.queue.peek()) {
      const wait = this.step(head);
      if (wait === 0) continue;
      if (wait === HOLD) this.holding = true;
      else this.setTimer(wait, this.pump);
      return;
    }
  };
}

/** Waits below a millisecond are not worth a timer (Node timers have 1 ms resolution). */
const due = (wait: number) => wait < 1;
/** A whole number drawn uniformly from [-range, +range) (0 for no range): latency jitter, slicer size variation. */
const spread = (host: StageHost, range: number) => (range > 0 ? Math.floor(host.rng() * 2 * range) - range : 0);

class NoopStage extends Stage {
  protected override onItem(item: Item): void {
    this.emit(item);
  }
}

/**
 * latency: each chunk leaves at read time + latency ± jitter (jitter uniform in [-j, +j)), in
 * order. A chunk that had to wait is re-stamped with its release time, so two latency toxics add up
 * (Go: `c.Timestamp = c.Timestamp.Add(sleep)`).
 */
class LatencyStage extends Stage {
  private deadline: number | undefined;
  private slept = false;
  protected override step(head: Item): number {
    if (head === EOF) return this.pass(EOF);
    this.deadline ??= head.at + (this.attrs.latency ?? 0) + spread(this.host, this.attrs.jitter ?? 0);
    const wait = this.deadline - this.host.now();
    if (!due(wait)) {
      this.slept = true;
      return wait;
    }
    if (this.slept) head.at = this.deadline;
    this.resetRun();
    return this.pass(head);
  }
  protected override resetRun(): void {
    this.deadline = undefined;
    this.slept = false;
  }
}

/**
 * bandwidth: `rate` KB/s (KB = 1000 bytes). Pieces of at most rate × 100 bytes, each released
 * when a virtual clock (advanced by size / rate ms) allows, so timer slop never accumulates.
 * rate 0 stalls the link: data is held, not dropped, until the toxic changes or goes.
 */
class BandwidthStage extends Stage {
  private free = 0;
  private pieceAt: number | undefined;
  protected override step(head: Item): number {
    if (head === EOF) return this.pass(EOF);
    const rate = this.attrs.rate ?? 0;
    if (rate <= 0) return HOLD;
    const size = Math.min(head.data.length, rate * 100);
    if (this.pieceAt === undefined) {
      this.pieceAt = Math.max(this.free, this.host.now()) + size / rate;
      this.free = this.pieceAt;
    }
    const wait = this.pieceAt - this.host.now();
    if (!due(wait)) return wait;
    this.pieceAt = undefined;
    if (size === head.data.length) return this.pass(head);
    this.emit({ data: head.data.subarray(0, size), at: head.at });
    head.data = head.data.subarray(size);
    return 0;
  }
  protected override resetRun(): void {
    this.pieceAt = undefined;
    this.free = 0;
  }
}

/** slow_close: data passes; EOF waits `delay` ms before closing the destination. */
class SlowCloseStage extends Stage {
  private closeAt: number | undefined;
  protected override step(head: Item): number {
    if (head !== EOF) return this.pass(head);
    this.closeAt ??= this.host.now() + (this.attrs.delay ?? 0);
    const wait = this.closeAt - this.host.now();
    return due(wait) ? this.pass(EOF) : wait;
  }
  protected override resetRun(): void {
    this.closeAt = undefined;
  }
}

/**
 * timeout: drops every byte; closes the link `timeout` ms after this run started or after the
 * last chunk it dropped, whichever is later (0 = never). Go re-arms `time.After` on each pass of
 * its select loop, so a client that keeps talking keeps the connection open: what a plan measures
 * is "closed `timeout` ms after the peer went quiet", not a fixed lifetime.
 * Removing it closes the link too (Go `TimeoutToxic.Cleanup`, PR #168): data was lost, so the
 * stream is corrupt. Like Go, that happens whatever the toxicity roll was.
 */
class TimeoutStage extends Stage {
  protected override start(): void {
    this.arm();
  }
  protected override onItem(item: Item): void {
    if (item === EOF) {
      this.clearTimer();
      this.emit(EOF);
    } else {
      this.drop(item);
      this.arm();
    }
  }
  private arm(): void {
    const timeout = this.attrs.timeout ?? 0;
    if (this.active && timeout > 0) this.setTimer(timeout, () => this.emit(EOF));
  }
  override remove(): { held: Item[]; close: boolean } {
    return { held: super.remove().held, close: !this.closed };
  }
}

/**
 * reset_peer: on the first chunk (or EOF) in its direction, drop it, wait `timeout` ms, then
 * reset both sockets (RST via `resetAndDestroy()`). Once armed the wait is not interruptible,
 * as in Go (`<-time.After(timeout)` outside the select).
 */
class ResetPeerStage extends Stage {
  private fired = false;
  protected override onItem(item: Item): void {
    this.drop(item);
    if (this.fired) return;
    this.fired = true;
    this.setTimer(this.attrs.timeout ?? 0, () => this.host.reset());
  }
  /** An armed reset survives re-runs and removal (Go sleeps outside the select). */
  protected override interrupt(): Item[] {
    if (this.fired) return this.queue.takeAll();
    return super.interrupt();
  }
}

/**
 * slicer: splits each chunk into pieces of about average_size ± size_variation bytes (Go's
 * recursive halving) and waits `delay` µs after each piece. Node timers have ms resolution, so
 * sub-ms delays are accumulated and paid in whole milliseconds.
 */
class SlicerStage extends Stage {
  private pieces: number[] | undefined;
  private owedUs = 0;
  protected override step(head: Item): number {
    if (head === EOF) return this.pass(EOF);
    this.pieces ??= this.slice(head.data.length);
    const size = this.pieces.shift() ?? head.data.length;
    if (this.pieces.length === 0 || size >= head.data.length) {
      this.pieces = undefined;
      this.pass(head);
    } else {
      this.emit({ data: head.data.subarray(0, size), at: head.at });
      head.data = head.data.subarray(size);
    }
    this.owedUs += this.attrs.delay ?? 0;
    if (this.owedUs < 1000) return 0;
    const ms = Math.floor(this.owedUs / 1000);
    this.owedUs -= ms * 1000;
    return ms;
  }
  protected override resetRun(): void {
    this.pieces = undefined;
    this.owedUs = 0;
  }
  /** Piece sizes for a chunk of `n` bytes (SlicerToxic.chunk). */
  private slice(n: number): number[] {
    const avg = Math.max(1, this.attrs.average_size ?? 1);
    const variation = Math.max(0, this.attrs.size_variation ?? 0);
    const out: number[] = [];
    const stack: Array<[number, number]> = [[0, n]];
    while (stack.length > 0) {
      const [start, end] = stack.pop()!;
      if (end - start - avg <= variation) {
        if (end > start) out.push(end - start);
        continue;
      }
      const mid = Math.min(end - 1, Math.max(start + 1, start + Math.floor((end - start) / 2) + spread(this.host, variation)));
      stack.push([mid, end], [start, mid]);
    }
    return out;
  }
}

/**
 * limit_data: forwards until `bytes` bytes have passed in this direction (truncating the chunk
 * that crosses the limit), then closes. The count survives re-runs (Go keeps it as toxic state).
 */
class LimitDataStage extends Stage {
  private transmitted = 0;
  protected override onItem(item: Item): void {
    if (item === EOF) return this.emit(EOF);
    const limit = this.attrs.bytes ?? 0;
    const remaining = Math.max(0, limit - this.transmitted);
    let data = item.data;
    if (remaining < data.length) {
      this.host.release(data.length - remaining);
      data = data.subarray(0, remaining);
    }
    if (data.length > 0) {
      this.transmitted += data.length;
      this.emit({ data, at: item.at });
    }
    if (limit - this.transmitted <= 0) this.emit(EOF);
  }
}

const STAGES: Record<ToxicType, new (name: string, host: StageHost) => Stage> = {
  latency: LatencyStage,
  bandwidth: BandwidthStage,
  slow_close: SlowCloseStage,
  timeout: TimeoutStage,
  reset_peer: ResetPeerStage,
  slicer: SlicerStage,
  limit_data: LimitDataStage,
  noop: NoopStage,
};

/** A stage for `toxic` on one link, already running (toxicity rolled). */
export function createStage(toxic: ToxicRecord, host: StageHost): Stage {
  const stage = new STAGES[toxic.type](toxic.name, host);
  stage.run(toxic);
  return stage;
}

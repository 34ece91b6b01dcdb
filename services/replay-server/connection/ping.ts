import { frames } from '../protocol/codec.ts';
import { textFrame } from '../protocol/wsframe.ts';

export interface Pingable {
  sendFrame(frame: Buffer): void;
}

/** Each interval is spread over this many ticks (at the default 3 s, one every 30 ms). */
const SLICES = 100;

interface Group<C> {
  timer: NodeJS.Timeout;
  conns: Set<C>;
  cursor: IterableIterator<C> | undefined;
  /** Ticks since the current pass started: a pass starts at most once per SLICES ticks. */
  sincePass: number;
}

/**
 * Pings: one timer per distinct interval (normally exactly one, the default) and one prebuilt
 * frame per tick. The timer ticks SLICES times per interval and each tick pings the next
 * 1/SLICES of the connections, so 10,000 pings are never written in one burst: each write is a
 * syscall of several µs, and a burst adds its whole duration to every data frame queued behind
 * it (at 10 slices, 1,000 pings per tick put the replay server's S5 p99 at twice the raw ws
 * server's). A pass takes one interval and starts at most once per interval, so a connection
 * is pinged once per interval even when there are fewer connections than slices. `?pi=` moves
 * a connection to another interval's group.
 */
export class PingScheduler<C extends Pingable> {
  private readonly groups = new Map<number, Group<C>>();

  constructor(
    private readonly now: () => number = Date.now,
    /** The transport's frame encoding (SocketOps.encode). */
    private readonly encode: (payload: string) => Buffer = textFrame,
  ) {}

  add(conn: C, intervalSec: number): void {
    let g = this.groups.get(intervalSec);
    if (!g) {
      const group: Group<C> = { conns: new Set<C>(), cursor: undefined, sincePass: SLICES - 1, timer: setInterval(() => this.tick(group), (intervalSec * 1000) / SLICES) };
      group.timer.unref();
      this.groups.set(intervalSec, (g = group));
    }
    g.conns.add(conn);
  }

  private tick(g: Group<C>): void {
    g.sincePass++;
    let budget = Math.ceil(g.conns.size / SLICES);
    let frame: Buffer | undefined;
    while (budget > 0) {
      if (!g.cursor) {
        if (g.sincePass < SLICES) return;
        g.cursor = g.conns.values();
        g.sincePass = 0;
      }
      const next = g.cursor.next();
      if (next.done) {
        g.cursor = undefined; // pass complete; the next starts once a whole interval has passed since this one did
        continue;
      }
      frame ??= this.encode(frames.ping(Math.floor(this.now() / 1000)));
      next.value.sendFrame(frame);
      budget--;
    }
  }

  remove(conn: C, intervalSec: number): void {
    const g = this.groups.get(intervalSec);
    if (!g) return;
    g.conns.delete(conn);
    if (g.conns.size === 0) {
      clearInterval(g.timer);
      this.groups.delete(intervalSec);
    }
  }

  /** Every registered connection (each is in exactly one group). */
  *all(): IterableIterator<C> {
    for (const g of this.groups.values()) yield* g.conns;
  }

  get size(): number {
    let n = 0;
    for (const g of this.groups.values()) n += g.conns.size;
    return n;
  }

  stop(): void {
    for (const g of this.groups.values()) clearInterval(g.timer);
    this.groups.clear();
  }
}

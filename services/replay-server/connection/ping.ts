import { frames } from '../protocol/codec.ts';
import { textFrame } from '../protocol/wsframe.ts';

export interface Pingable {
  sendFrame(frame: Buffer): void;
}

/** Each interval is spread over this many ticks. */
const SLICES = 10;

interface Group<C> {
  timer: NodeJS.Timeout;
  conns: Set<C>;
  cursor: IterableIterator<C> | undefined;
}

/**
 * Pings: one timer per distinct interval (normally exactly one, the default) and one prebuilt
 * frame per tick. The timer ticks SLICES times per interval and each tick pings the next
 * 1/SLICES of the connections, so 10,000 pings are never written in one burst (each write is a
 * syscall; a burst would add its whole duration to every data frame queued behind it). Every
 * connection is visited once per pass and a pass takes one interval. `?pi=` moves a connection
 * to another interval's group.
 */
export class PingScheduler<C extends Pingable> {
  private readonly groups = new Map<number, Group<C>>();

  constructor(private readonly now: () => number = Date.now) {}

  add(conn: C, intervalSec: number): void {
    let g = this.groups.get(intervalSec);
    if (!g) {
      const group: Group<C> = { conns: new Set<C>(), cursor: undefined, timer: setInterval(() => this.tick(group), (intervalSec * 1000) / SLICES) };
      group.timer.unref();
      this.groups.set(intervalSec, (g = group));
    }
    g.conns.add(conn);
  }

  private tick(g: Group<C>): void {
    if (g.conns.size === 0) return;
    const frame = textFrame(frames.ping(Math.floor(this.now() / 1000)));
    let budget = Math.ceil(g.conns.size / SLICES);
    while (budget > 0) {
      g.cursor ??= g.conns.values();
      const next = g.cursor.next();
      if (next.done) {
        g.cursor = undefined; // pass complete; the next pass starts on the next tick
        return;
      }
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

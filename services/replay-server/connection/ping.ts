import { frames } from '../protocol/codec.ts';
import { textFrame } from '../protocol/wsframe.ts';

export interface Pingable {
  sendFrame(frame: Buffer): void;
  /**
   * Piggyback: the ping due for this connection (set by the scheduler). Its next frame takes it
   * along: read it, clear it, send it first. A field, not a scheduler-side map: it is read on
   * every delivery.
   */
  duePing: Buffer | undefined;
  /** Told right after `duePing` is set (a connection whose frames bypass sendFrame takes it along otherwise). */
  pingDue?(): void;
}

/** Each interval is spread over this many ticks (at the default 3 s, one every 30 ms). */
const SLICES = 100;
/**
 * Piggyback: the longest a due ping waits for a data frame to leave with (a third of the
 * interval, at most 1 s): well inside a client's staleness check (anycable-client: two missed
 * intervals, and any frame counts as a heartbeat), and long enough that most pings of a busy
 * connection share a data frame's write.
 */
const PIGGYBACK_MAX_MS = 1000;
const piggybackTicks = (intervalSec: number) => Math.max(1, Math.min(Math.floor(SLICES / 3), Math.floor(PIGGYBACK_MAX_MS / ((intervalSec * 1000) / SLICES))));

/** The pings one tick made due (flushed alone `slack` ticks later, unless taken by then). */
interface DueSlot<C> {
  frame: Buffer;
  conns: C[];
}

interface Group<C> {
  timer: NodeJS.Timeout;
  conns: Set<C>;
  cursor: IterableIterator<C> | undefined;
  /** Ticks since the current pass started: a pass starts at most once per SLICES ticks. */
  sincePass: number;
  /** Piggyback only: a ring of `slack` slots, the current tick's at `ticks % slack`. */
  slack: number;
  ticks: number;
  due: Array<DueSlot<C> | undefined>;
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
 *
 * With `piggyback`, a tick does not write its pings: it makes them due, and the connection's next
 * frame takes its due ping along (Pingable.duePing: ping first, both in one write). A ping still due after
 * `piggybackTicks` goes out alone. A write is a syscall, and on a busy server a ping alone costs
 * as much as a delivery (10,000 connections at the default 3 s: 3,333 writes/s besides the data).
 */
export class PingScheduler<C extends Pingable> {
  private readonly groups = new Map<number, Group<C>>();

  constructor(
    private readonly now: () => number = Date.now,
    /** The transport's frame encoding (SocketOps.encode). */
    private readonly encode: (payload: string) => Buffer = textFrame,
    private readonly piggyback = false,
  ) {}

  add(conn: C, intervalSec: number): void {
    let g = this.groups.get(intervalSec);
    if (!g) {
      const slack = this.piggyback ? piggybackTicks(intervalSec) : 0;
      const group: Group<C> = { conns: new Set<C>(), cursor: undefined, sincePass: SLICES - 1, slack, ticks: 0, due: [], timer: setInterval(() => this.tick(group), (intervalSec * 1000) / SLICES) };
      group.timer.unref();
      this.groups.set(intervalSec, (g = group));
    }
    g.conns.add(conn);
  }

  private tick(g: Group<C>): void {
    g.sincePass++;
    let slot: DueSlot<C> | undefined;
    if (g.slack > 0) {
      const i = g.ticks++ % g.slack;
      this.flushDue(g.due[i]);
      g.due[i] = undefined;
    }
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
      if (g.slack > 0) {
        if (!slot) g.due[(g.ticks - 1) % g.slack] = slot = { frame, conns: [] };
        slot.conns.push(next.value);
        next.value.duePing = frame;
        next.value.pingDue?.();
      } else next.value.sendFrame(frame);
      budget--;
    }
  }

  /** Pings of one tick that no frame took along: each goes alone now. */
  private flushDue(slot: DueSlot<C> | undefined): void {
    if (!slot) return;
    for (const c of slot.conns) {
      if (c.duePing !== slot.frame) continue; // taken along (or removed)
      c.duePing = undefined;
      c.sendFrame(slot.frame);
    }
  }

  /** A connection is in one group; there is one per distinct `?pi=` (at most maxPingIntervalSec), normally one. */
  remove(conn: C): void {
    conn.duePing = undefined;
    for (const [intervalSec, g] of this.groups) {
      if (!g.conns.delete(conn)) continue;
      if (g.conns.size === 0) {
        clearInterval(g.timer);
        this.groups.delete(intervalSec);
      }
      return;
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
    for (const g of this.groups.values()) for (const slot of g.due) if (slot) for (const c of slot.conns) c.duePing = undefined;
    this.groups.clear();
  }
}

/** One session write as the SESSION script takes it: mode 'commit' replaces the set, 'update' adds/removes. */
export interface SessionOp {
  mode: 'commit' | 'update';
  add: readonly string[];
  remove: readonly string[];
}

/** Sessions with changes waiting, and ops per session, at most (beyond: the change is dropped and counted). */
export const MAX_DEFERRED_SESSIONS = 10_000;
const MAX_OPS_PER_SESSION = 64;

/**
 * Session changes made while Redis was unreachable, replayed in order once it is back: without
 * them a client that subscribed (or unsubscribed) during an outage would restore a stale set
 * after its next reconnect. A session with changes waiting takes every later change through the
 * queue too, so a change never overtakes an older one. A `commit` (the whole set) supersedes what
 * was waiting for its session. Bounded: past the caps a change is dropped and counted
 * (`dropped`), the outage having outlasted what a node holds for it.
 */
export class DeferredSessions {
  private readonly waiting = new Map<string, SessionOp[]>();
  private flushing: Promise<void> | undefined;
  dropped = 0;

  /**
   * @param write the Redis write
   * @param outage whether a failure means Redis is unreachable (worth replaying later; a change cut
   *   mid-flight may have been applied, and replaying an add/remove/commit is harmless); any other
   *   failure (a refused script) would fail again and is dropped instead of blocking the queue
   */
  constructor(
    private readonly write: (sid: string, op: SessionOp) => Promise<unknown>,
    private readonly outage: (err: unknown) => boolean,
  ) {}

  get size(): number {
    return this.waiting.size;
  }

  /** Write now, or queue behind this session's waiting changes; a write failed by an outage is queued. */
  async submit(sid: string, op: SessionOp): Promise<void> {
    if (this.waiting.has(sid)) return this.defer(sid, op);
    try {
      await this.write(sid, op);
    } catch (err) {
      if (!this.outage(err)) throw err;
      this.defer(sid, op);
    }
  }

  private defer(sid: string, op: SessionOp): void {
    let ops = this.waiting.get(sid);
    if (!ops) {
      if (this.waiting.size >= MAX_DEFERRED_SESSIONS) return void this.dropped++;
      this.waiting.set(sid, (ops = []));
    }
    if (op.mode === 'commit') ops.length = 0;
    if (ops.length >= MAX_OPS_PER_SESSION) return void this.dropped++;
    ops.push(op);
  }

  /** Replay what is waiting (Redis is back); stops at the first failure, keeping the rest for the next call. */
  flush(): Promise<void> {
    this.flushing ??= this.drain().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async drain(): Promise<void> {
    for (const [sid, ops] of this.waiting) {
      while (ops.length > 0) {
        try {
          await this.write(sid, ops[0]!);
        } catch (err) {
          if (this.outage(err)) return;
          this.dropped++;
        }
        ops.shift();
      }
      this.waiting.delete(sid);
    }
  }
}

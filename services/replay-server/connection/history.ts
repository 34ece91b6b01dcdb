import type { Broker, HistoryPosition, HistoryResult } from '../broker/types.ts';
import type { Subscription } from '../hub/index.ts';
import { frames } from '../protocol/codec.ts';
import type { ServerCounters } from './types.ts';

/** What the history runner needs from its connection. */
export interface HistoryHost {
  readonly closing: boolean;
  getSub(identifier: string): Subscription | undefined;
  send(frame: string): void;
  /** Undefined when the socket can take more now, else a promise for when it can. */
  writable(): Promise<void> | undefined;
  cork(): void;
  uncork(): void;
}

export interface HistoryDeps {
  broker: Broker;
  counters: ServerCounters;
  pageBytes: number;
}

/** One client `history` request (or several coalesced into one): `answers` replies are owed. */
interface Job {
  sub: Subscription;
  req: unknown;
  answers: number;
}

/**
 * Per-connection history work, bounded: one request is served at a time per connection, at most
 * one more waits per subscription and repeats coalesce into it (each still gets its answer). A
 * request reads the backlog in pages and sends each page only when the socket has room, so a
 * large backlog is paced by the client's reading instead of being queued at once, and (with
 * --workers) never crosses processes as one message.
 */
export class HistoryQueue {
  private readonly jobs: Job[] = [];
  private running = false;

  constructor(
    private readonly host: HistoryHost,
    private readonly deps: HistoryDeps,
    private readonly toPosition: (stream: string, req: unknown) => HistoryPosition | undefined,
  ) {}

  get idle(): boolean {
    return this.jobs.length === 0;
  }

  request(sub: Subscription, req: unknown): void {
    const waiting = this.jobs.find((j, i) => (i > 0 || !this.running) && j.sub === sub);
    if (waiting) {
      waiting.req = req;
      waiting.answers++;
      this.deps.counters.historyCoalesced++;
      return;
    }
    // Park live frames from the moment of the request, so none slips between backlog and live.
    sub.beginHold();
    this.jobs.push({ sub, req, answers: 1 });
    if (!this.running) void this.run();
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.jobs.length > 0 && !this.host.closing) {
        await this.serve(this.jobs[0]!);
        this.jobs.shift();
      }
    } finally {
      this.running = false;
      if (this.host.closing) this.jobs.length = 0;
    }
  }

  private current(sub: Subscription): boolean {
    return !this.host.closing && this.host.getSub(sub.identifier) === sub;
  }

  private async serve(job: Job): Promise<void> {
    const { sub } = job;
    const asked = this.toPosition(sub.stream, job.req);
    if (!asked) return this.finish(job, false);
    let pos = sub.startAfter(asked);
    let first = true;
    let handedOver = false;
    for (;;) {
      let res: HistoryResult;
      try {
        res = await this.deps.broker.history(sub.stream, pos, { maxBytes: this.deps.pageBytes });
      } catch {
        // The broker failed the read (Redis lost, an IPC request unanswered): not a verdict on
        // the stream, and the client's runner must not read it as one (engine/measure/epoch-book.ts).
        res = { ok: false, reason: 'broker_unavailable' };
      }
      if (!this.current(sub)) return;
      this.deps.counters.historyPages++;
      if (!res.ok && res.reason === 'unknown_epoch' && !handedOver && 'epoch' in pos && this.deps.broker.isPastEpoch?.(pos.epoch)) {
        // Redis came back empty: the asked epoch is gone for good, and everything in the new one
        // was published after it ended. Say so, then the new epoch's history from its start.
        handedOver = true;
        for (let i = 0; i < job.answers; i++) this.host.send(frames.rejectHistoryEpochChanged(sub.identifier));
        this.deps.counters.historyRejected += job.answers;
        this.deps.counters.historyEpochHandovers += job.answers;
        pos = { since: 0 };
        continue;
      }
      if (!res.ok) return this.finish(job, false, handedOver, res.reason);
      if (first && sub.wouldGap(res.messages[0])) {
        // Confirming would hide offsets this subscription skipped (e.g. live frames flushed
        // after restoreHoldMs): say the history cannot be served instead.
        this.deps.counters.historyGapsRejected++;
        return this.finish(job, false, false, 'history_gap');
      }
      first = false;
      this.host.cork();
      sub.replay(res.messages);
      this.host.uncork();
      const last = res.messages.at(-1);
      if (!res.more || last?.offset === undefined || last.epoch === undefined) return this.finish(job, true, handedOver);
      pos = { epoch: last.epoch, offset: sub.lastEpoch === last.epoch ? Math.max(last.offset, sub.lastOffset) : last.offset };
      const room = this.host.writable();
      if (room) await room;
      if (!this.current(sub)) return;
    }
  }

  /** Answer (once per coalesced request), then flush what was parked, paced like the backlog. */
  private async finish(job: Job, ok: boolean, answered = false, reason?: string): Promise<void> {
    const { sub } = job;
    const c = this.deps.counters;
    if (!answered) {
      const frame = ok ? frames.confirmHistory(sub.identifier) : frames.rejectHistory(sub.identifier, reason);
      for (let i = 0; i < job.answers; i++) this.host.send(frame);
      if (ok) c.historyConfirmed += job.answers;
      else c.historyRejected += job.answers;
    }
    if (sub.endHold()) await flushHeld(this.host, sub);
  }
}

/** Deliver a subscription's parked frames once its last hold ended, pausing while the socket is full. */
export async function flushHeld(host: HistoryHost, sub: Subscription): Promise<void> {
  for (;;) {
    if (host.closing) return;
    const m = sub.nextHeld();
    if (m === undefined) return;
    sub.deliverHeld(m);
    const room = host.writable();
    if (room) await room;
  }
}

const isPosition = (p: unknown): p is { epoch: string; offset: number } => {
  if (p === null || typeof p !== 'object') return false;
  const o = p as Record<string, unknown>;
  return typeof o.epoch === 'string' && typeof o.offset === 'number' && Number.isSafeInteger(o.offset) && o.offset >= 0;
};

/**
 * anycable-go `retreiveHistory`: a position for the stream wins, else `since` (unix seconds;
 * values that only make sense as milliseconds are scaled down), else the request is invalid.
 */
export function historyPosition(stream: string, req: unknown): HistoryPosition | undefined {
  if (req === null || typeof req !== 'object' || Array.isArray(req)) return undefined;
  const h = req as Record<string, unknown>;
  const streams = h.streams;
  if (streams !== null && typeof streams === 'object' && !Array.isArray(streams) && Object.hasOwn(streams, stream)) {
    const p = (streams as Record<string, unknown>)[stream];
    return isPosition(p) ? { epoch: p.epoch, offset: p.offset } : undefined;
  }
  const since = h.since;
  if (typeof since === 'number' && Number.isFinite(since) && since > 0) return { since: Math.floor(since > 1e12 ? since / 1000 : since) };
  return undefined;
}

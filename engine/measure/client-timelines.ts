import type { DeliveryLedger } from './ledger.ts';
import { DEFAULT_IN_FLIGHT_MS, deliveryPath, LOSS_CAUSES, tallyLoss, tallyOutcomes, type ClassifyOptions, type ClientTimeline, type LossByCause, type MessageWindow, type ResumeProtocol } from './loss-causes.ts';

/**
 * Records each client's timeline while a run goes (first subscription, every offline span, how
 * each ended and what its resume saw) and each message's publisher window, then books every lost
 * delivery to a cause (engine/measure/loss-causes.ts). The runner calls the recording methods from
 * its client events; nothing here reads a clock.
 */
export interface LossReport {
  /** Late deliveries split by path (see LateReport). */
  lateDeliveries: LateReport;
  /** Lost deliveries by cause; sums to lostDeliveries exactly. */
  lossByCause: LossByCause;
  /** Reconnects by resume outcome (`rejected:<cause>` for a rejection). */
  resumeOutcomes: Record<string, number>;
  /** First deliveries of a message sent while that client was offline (history, session restore): the rest were live. */
  replayedDeliveries: number;
}

/** Late deliveries: above the p99 latency of the run's live deliveries, split by how they came. */
export interface LateReport {
  /** p99 of first deliveries that arrived live (no offline span around them), ms; null with none. */
  liveP99Ms: number | null;
  /** First deliveries slower than liveP99Ms. */
  late: number;
  /** `late` by path: `live` (slow while connected) or the resume outcome that delivered them (`history_filled`, `session_restored`, ...). */
  byPath: Record<string, number>;
}

export class ClientTimelines {
  /**
   * `REBOUND_LOSS_CAUSES=off`: a measurement switch, never for results anyone quotes. Every
   * recording method returns at once and `report` books nothing, so the result carries none of the
   * loss-cause fields (like a result from before they existed): the A/B arm that prices loss
   * attribution inside one tree (docs/performance.md, "Loss attribution's cost").
   */
  private readonly off = process.env.REBOUND_LOSS_CAUSES === 'off';
  private readonly timelines: ClientTimeline[];
  private readonly sentAt: Float64Array;
  private readonly answeredAt: Float64Array;
  /** Replayed first deliveries per client (a weather condition's report sums its own). */
  private readonly replayed: Uint32Array;
  /** The highest seq each client has received (a span records it when the client notices it is down). */
  private readonly maxSeq: Uint32Array;

  constructor(clients: number, messages: number, private readonly protocol: ResumeProtocol, private readonly inFlightMs = DEFAULT_IN_FLIGHT_MS) {
    this.timelines = Array.from({ length: clients }, () => ({ spans: [] }));
    this.replayed = new Uint32Array(clients);
    this.maxSeq = new Uint32Array(clients);
    this.sentAt = new Float64Array(messages + 1).fill(NaN);
    this.answeredAt = new Float64Array(messages + 1).fill(NaN);
  }

  /** The publisher sent the accepted attempt of `seq` at `sentAt` and got its 201 at `answeredAt`. */
  accepted(seq: number, sentAt: number, answeredAt: number): void {
    if (this.off) return;
    if (seq < 1 || seq >= this.sentAt.length) return;
    this.sentAt[seq] = sentAt;
    this.answeredAt[seq] = answeredAt;
  }

  /** A disruption hit connected client `i` at `at`: its offline span starts here even if the library notices later. */
  disrupted(i: number, at: number): void {
    if (this.off) return;
    const t = this.timelines[i];
    if (!t || t.firstUpAt === undefined) return;
    const last = t.spans.at(-1);
    if (last && last.upAt === undefined) return;
    t.spans.push({ downAt: at });
  }

  /**
   * A network disruption on client `i` was lifted. A span it opened that the client never noticed
   * (latency, bandwidth, a partition shorter than the library's liveness check) is dropped: the
   * connection stayed up, so what it lost meanwhile it lost while connected.
   */
  lifted(i: number): void {
    if (this.off) return;
    const t = this.timelines[i];
    const last = t?.spans.at(-1);
    if (last && last.upAt === undefined && last.reason === undefined) t!.spans.pop();
  }

  /** Client `i` noticed it was down. */
  disconnected(i: number, at: number, reason: string, detail?: string): void {
    if (this.off) return;
    const t = this.timelines[i];
    if (!t || t.firstUpAt === undefined) return;
    const last = t.spans.at(-1);
    const lastSeq = this.maxSeq[i]!;
    if (last && last.upAt === undefined) {
      // A span a disruption opened, noticed now: the notice says who ended the connection.
      if (last.reason === undefined) {
        last.reason = reason;
        if (detail !== undefined) last.detail = detail;
        if (lastSeq > 0) last.lastSeq = lastSeq;
      }
      return;
    }
    t.spans.push({ downAt: at, reason, ...(detail === undefined ? {} : { detail }), ...(lastSeq > 0 ? { lastSeq } : {}) });
  }

  /** Client `i` is subscribed (again); `restored`: the server said it restored the session. */
  connected(i: number, at: number, restored: boolean): void {
    if (this.off) return;
    const t = this.timelines[i];
    if (!t) return;
    if (t.firstUpAt === undefined) return void (t.firstUpAt = at);
    const last = t.spans.at(-1);
    if (!last || last.upAt !== undefined) return; // a disruption that never took it down
    last.upAt = at;
    // A history answer may have come first (read off the wire before the library announced the channel).
    last.evidence = last.evidence?.history ? { restored, history: last.evidence.history } : { restored };
  }

  /**
   * A history answer at client `i`: it belongs to the reconnect of the last span, which may not be
   * announced yet (adapters read the answer off the wire, before the library's own event). The
   * first subscribe's answer is not a resume; only a reconnect's first answer counts.
   */
  history(i: number, ok: boolean, reason?: string): void {
    if (this.off) return;
    const last = this.timelines[i]?.spans.at(-1);
    if (!last || last.evidence?.history) return;
    if (last.upAt === undefined && last.reason === undefined) return; // a disruption not yet noticed: still the old connection's
    last.evidence = { restored: last.evidence?.restored ?? false, history: reason === undefined ? { ok } : { ok, reason } };
  }

  /**
   * A first delivery of `seq` at client `i`: replayed when the target had handled it (its 201 came
   * back) while the client was down, i.e. before it was subscribed again (or, arriving before the
   * reconnect was announced, after the client noticed it was down). A message still in the
   * publisher's hands at arrival was live. At-most-once protocols replay nothing.
   */
  arrival(i: number, seq: number): void {
    if (this.off) return;
    if (seq > (this.maxSeq[i] ?? Infinity)) this.maxSeq[i] = seq;
    if (this.protocol === 'none') return;
    const last = this.timelines[i]?.spans.at(-1);
    if (!last) return;
    const answeredAt = this.answeredAt[seq] ?? NaN;
    if (!(answeredAt >= last.downAt)) return;
    if (last.upAt !== undefined) {
      if (answeredAt < last.upAt) this.replayed[i]!++;
      return;
    }
    // Arrived while the span is still open, after the client noticed it was down: the new
    // connection brought it before the library announced the reconnect (Socket.IO's recovery
    // sends the missed packets ahead of its CONNECT, and the client hands them over first). A
    // span a disruption opened that the client has not noticed is still the old connection: live.
    if (last.reason !== undefined) this.replayed[i]!++;
  }

  private classifyOptions(): ClassifyOptions {
    return { protocol: this.protocol, inFlightMs: this.inFlightMs, windowOf: (s) => this.windowOf(s) };
  }

  timeline(i: number): ClientTimeline {
    return this.timelines[i]!;
  }

  windowOf(seq: number): MessageWindow | undefined {
    const sentAt = this.sentAt[seq];
    const answeredAt = this.answeredAt[seq];
    return sentAt === undefined || answeredAt === undefined || Number.isNaN(sentAt) ? undefined : { sentAt, answeredAt };
  }

  /**
   * Late deliveries: a first pass takes the p99 of live first deliveries (1 ms buckets), a second
   * splits every first delivery above it by its path. Two passes over clients x messages.
   */
  lateReport(ledger: DeliveryLedger, of?: readonly number[]): LateReport {
    const o = this.classifyOptions();
    const BUCKETS = 600_000; // 10 min at 1 ms: anything slower counts in the last bucket
    const hist = new Uint32Array(BUCKETS + 1);
    let live = 0;
    const each = (fn: (path: string, lat: number) => void) => {
      for (let k = 0; k < (of?.length ?? this.timelines.length); k++) {
        const c = of ? of[k]! : k;
        const t = this.timelines[c]!;
        for (let s = 1; s < this.sentAt.length; s++) {
          const lat = ledger.latencyOf(c, s);
          if (lat !== undefined) fn(deliveryPath(t, this.windowOf(s), o), lat);
        }
      }
    };
    each((path, lat) => {
      if (path !== 'live') return;
      hist[Math.min(BUCKETS, Math.max(0, Math.ceil(lat)))]!++;
      live++;
    });
    if (live === 0) return { liveP99Ms: null, late: 0, byPath: {} };
    // The first bucket whose running count reaches the p99 rank (it does by the last: live >= rank).
    const rank = Math.ceil(live * 0.99);
    let p99 = 0;
    for (let seen = hist[0]!; seen < rank; ) seen += hist[++p99]!;
    const byPath: Record<string, number> = {};
    let late = 0;
    each((path, lat) => {
      if (lat <= p99) return;
      byPath[path] = (byPath[path] ?? 0) + 1;
      late++;
    });
    return { liveP99Ms: p99, late, byPath };
  }

  /**
   * Book every lost delivery of `ledger` (throws when the books do not balance) and count the
   * resume outcomes. `lostToEpoch` (engine/measure/epoch-book.ts): deliveries a broker's empty
   * restart took, booked `epoch_changed` whatever the client's timeline says (nobody could deliver them).
   */
  report(ledger: DeliveryLedger, lostDeliveries: number, lostToEpoch?: (client: number, seq: number) => boolean, of?: readonly number[]): LossReport {
    // The switch's arm: no fields at all (a result from before loss causes), not zeros that would read as "nothing lost".
    if (this.off) return {} as LossReport;
    // `of`: these clients only (a weather condition's); `lostDeliveries` is then theirs.
    const at = (k: number) => (of ? of[k]! : k);
    const lossByCause = tallyLoss({
      ...(lostToEpoch ? { overrideOf: (k: number, s: number) => (lostToEpoch(at(k), s) ? ('epoch_changed' as const) : undefined) } : {}),
      clients: of?.length ?? this.timelines.length,
      lostSeqsOf: (k) => ledger.lostSeqsOf(at(k)),
      timelineOf: (k) => this.timelines[at(k)]!,
      windowOf: (s) => this.windowOf(s),
      lostDeliveries,
      options: this.classifyOptions(),
    });
    // Report order: the union's.
    const ordered: LossByCause = {};
    for (const k of LOSS_CAUSES) if (lossByCause[k]) ordered[k] = lossByCause[k];
    const timelines = of ? of.map((c) => this.timelines[c]!) : this.timelines;
    const replayedDeliveries = (of ?? [...this.replayed.keys()]).reduce((n, c) => n + this.replayed[c]!, 0);
    return { lossByCause: ordered, resumeOutcomes: tallyOutcomes(timelines, this.protocol), replayedDeliveries, lateDeliveries: this.lateReport(ledger, of) };
  }
}

/**
 * Delivery ledger: for every client and every published sequence number, how many times it
 * arrived and the latency of its first arrival. Five bytes per (client, message): the benchmark's
 * 10,000 × 120 takes 6 MB; runners cap clients × messages at LEDGER_MAX_CELLS.
 *
 * Only messages the target accepted (`accept(seq)`, from the publisher) are expected: a message
 * the target refused or the publisher failed to send is the publisher's failure, reported by the
 * publisher, never the target's delivery loss.
 */
export const LEDGER_MAX_CELLS = 20_000_000;

/** A seq's publish outcome in `accepted`: not (yet) accepted, accepted (201), or failed with its outcome unknown. */
const NOT_ACCEPTED = 0;
const ACCEPTED = 1;
const UNCONFIRMED = 2;

/** One client's deliveries. */
export interface ClientTally {
  index: number;
  /** Distinct seqs in 1..messages that arrived (accepted or not). */
  received: number;
  /** Accepted seqs that never arrived. */
  lost: number;
  /** Distinct seqs that arrived although the publisher never saw them accepted. */
  unaccepted: number;
  /** The part of `unaccepted` whose publish outcome was unknown (`unconfirmed(seq)`). */
  unconfirmed: number;
  duplicates: number;
  outOfOrder: number;
  /** Arrivals whose seq was outside 1..messages (another run's or a corrupt payload). */
  foreign: number;
  maxLatencyMs: number;
}

/** Totals over every client. `expectedDeliveries` = clients × accepted messages. */
export interface LedgerTotals {
  expectedDeliveries: number;
  /** Distinct (client, seq) arrivals, accepted or not: above `expectedDeliveries` only when the target delivered messages the publisher counted as failed. */
  receivedDeliveries: number;
  /** Accepted messages a client never got, over every client. */
  lostDeliveries: number;
  /** The part of `receivedDeliveries` whose message the publisher never saw accepted. */
  unacceptedDeliveries: number;
  /** The part of `unacceptedDeliveries` whose publish outcome was unknown: arriving, they prove only that the target stored them. */
  unconfirmedDeliveries: number;
  duplicates: number;
  outOfOrder: number;
  foreign: number;
  /** Clients that got every message exactly once, in order. */
  perfectClients: number;
}

/** Whether client `b` did worse than `a`: more losses (ties: more duplicates, then the higher max latency). */
export const worseClient = (a: ClientTally, b: ClientTally) => b.lost > a.lost || (b.lost === a.lost && (b.duplicates > a.duplicates || (b.duplicates === a.duplicates && b.maxLatencyMs > a.maxLatencyMs)));

/**
 * Totals of ledgers over disjoint connections (loader processes, S6's streams): every count is a
 * sum, exactly. A merged p99 comes from merged histograms (mergeLatency), never from these.
 */
export function addTotals(parts: readonly LedgerTotals[]): LedgerTotals {
  const out: LedgerTotals = { expectedDeliveries: 0, receivedDeliveries: 0, lostDeliveries: 0, unacceptedDeliveries: 0, unconfirmedDeliveries: 0, duplicates: 0, outOfOrder: 0, foreign: 0, perfectClients: 0 };
  for (const p of parts) for (const k of Object.keys(out) as (keyof LedgerTotals)[]) out[k] += p[k];
  return out;
}

export class DeliveryLedger {
  private readonly counts: Uint8Array[];
  private readonly firstLatency: Float32Array[];
  private readonly highest: Int32Array;
  private readonly dup: Int32Array;
  private readonly ooo: Int32Array;
  private readonly foreignCount: Int32Array;
  private readonly maxLat: Float64Array;
  private readonly accepted: Uint8Array;
  private acceptedCount = 0;

  constructor(readonly clients: number, readonly messages: number) {
    this.accepted = new Uint8Array(messages + 1);
    this.counts = Array.from({ length: clients }, () => new Uint8Array(messages + 1));
    this.firstLatency = Array.from({ length: clients }, () => new Float32Array(messages + 1).fill(NaN));
    this.highest = new Int32Array(clients);
    this.dup = new Int32Array(clients);
    this.ooo = new Int32Array(clients);
    this.foreignCount = new Int32Array(clients);
    this.maxLat = new Float64Array(clients);
  }

  /** The target accepted `seq` (the publisher got its 201): every client is now expected to get it. */
  accept(seq: number): void {
    if (!Number.isInteger(seq) || seq < 1 || seq > this.messages || this.accepted[seq] === ACCEPTED) return;
    this.accepted[seq] = ACCEPTED;
    this.acceptedCount++;
  }

  /**
   * `seq` failed with its outcome unknown (an attempt timed out or was answered "may have been
   * stored"): still not expected, but its arrivals are the target's stored copy, not a count error.
   */
  unconfirmed(seq: number): void {
    if (Number.isInteger(seq) && seq >= 1 && seq <= this.messages && this.accepted[seq] === NOT_ACCEPTED) this.accepted[seq] = UNCONFIRMED;
  }

  /** Every seq 1..messages accepted (tests; runners whose publisher cannot fail). */
  acceptAll(): void {
    for (let s = 1; s <= this.messages; s++) this.accept(s);
  }

  isAccepted(seq: number): boolean {
    return this.accepted[seq] === ACCEPTED;
  }

  /**
   * Distinct clients that got each seq (index 0 is seq 1): with the publisher's accepted set this
   * gives a subscribe-only shard's expected, received and lost deliveries exactly.
   */
  arrivalsBySeq(): number[] {
    const out = new Array<number>(this.messages).fill(0);
    for (const row of this.counts) for (let s = 1; s <= this.messages; s++) if (row[s]! > 0) out[s - 1]!++;
    return out;
  }

  /** The seqs `client` never got, ascending: the accepted ones, or those `wanted` asks of it. */
  *lostSeqsOf(client: number, wanted?: (client: number, seq: number) => boolean): Generator<number> {
    for (let s = this.firstMissing(client, 1, wanted); s <= this.messages; s = this.firstMissing(client, s + 1, wanted)) yield s;
  }

  /**
   * The first seq from `from` on that `client` has not got and `wanted` asks of it (by default:
   * the target accepted the seq); messages + 1 when there is none.
   */
  firstMissing(client: number, from = 1, wanted?: (client: number, seq: number) => boolean): number {
    const row = this.counts[client];
    if (!row) return this.messages + 1;
    let s = Math.max(1, from);
    while (s <= this.messages && (row[s] !== 0 || !(wanted ? wanted(client, s) : this.accepted[s] === ACCEPTED))) s++;
    return s;
  }

  /** How many distinct messages the target accepted so far. */
  get acceptedMessages(): number {
    return this.acceptedCount;
  }

  /**
   * Record one arrival. Returns 'new' for a first delivery (the only kind whose latency counts),
   * 'duplicate' or 'foreign'. A first delivery below the highest seq already seen is out of order.
   */
  record(client: number, seq: number, latencyMs?: number): 'new' | 'duplicate' | 'foreign' {
    const row = this.counts[client];
    if (!row || !Number.isInteger(seq) || seq < 1 || seq > this.messages) {
      if (row) this.foreignCount[client]!++;
      return 'foreign';
    }
    const n = row[seq]!;
    if (n < 255) row[seq] = n + 1;
    if (n > 0) {
      this.dup[client]!++;
      return 'duplicate';
    }
    if (seq < this.highest[client]!) this.ooo[client]!++;
    else this.highest[client] = seq;
    if (latencyMs !== undefined) {
      this.firstLatency[client]![seq] = latencyMs;
      if (latencyMs > this.maxLat[client]!) this.maxLat[client] = latencyMs;
    }
    return 'new';
  }

  /** Latency of the first arrival of `seq` at `client`, ms; undefined when it never arrived. */
  latencyOf(client: number, seq: number): number | undefined {
    const v = this.firstLatency[client]?.[seq];
    return v === undefined || Number.isNaN(v) ? undefined : v;
  }

  tally(client: number): ClientTally {
    const row = this.counts[client]!;
    let received = 0;
    let unaccepted = 0;
    let unconfirmed = 0;
    for (let s = 1; s <= this.messages; s++) {
      if (row[s]! === 0) continue;
      received++;
      if (this.accepted[s] !== ACCEPTED) unaccepted++;
      if (this.accepted[s] === UNCONFIRMED) unconfirmed++;
    }
    return {
      index: client,
      received,
      lost: this.acceptedCount - (received - unaccepted),
      unaccepted,
      unconfirmed,
      duplicates: this.dup[client]!,
      outOfOrder: this.ooo[client]!,
      foreign: this.foreignCount[client]!,
      maxLatencyMs: this.maxLat[client]!,
    };
  }

  /** Expected = clients × accepted messages; lost = accepted messages a client never got. `of`: these clients only (a weather condition's). */
  totals(of?: readonly number[]): LedgerTotals {
    const n = of?.length ?? this.clients;
    const t: LedgerTotals = { expectedDeliveries: n * this.acceptedCount, receivedDeliveries: 0, lostDeliveries: 0, unacceptedDeliveries: 0, unconfirmedDeliveries: 0, duplicates: 0, outOfOrder: 0, foreign: 0, perfectClients: 0 };
    for (let k = 0; k < n; k++) {
      const c = of ? of[k]! : k;
      const x = this.tally(c);
      t.receivedDeliveries += x.received;
      t.lostDeliveries += x.lost;
      t.unacceptedDeliveries += x.unaccepted;
      t.unconfirmedDeliveries += x.unconfirmed;
      t.duplicates += x.duplicates;
      t.outOfOrder += x.outOfOrder;
      t.foreign += x.foreign;
      if (x.lost === 0 && x.duplicates === 0 && x.outOfOrder === 0) t.perfectClients++;
    }
    return t;
  }

  /** The client with the most losses (ties: most duplicates, then highest max latency). */
  worstClient(): ClientTally | undefined {
    let worst: ClientTally | undefined;
    for (let c = 0; c < this.clients; c++) {
      const x = this.tally(c);
      if (!worst || worseClient(worst, x)) worst = x;
    }
    return worst;
  }
}

import { sum } from '../session/results.ts';
import type { DeliveryLedger } from './ledger.ts';

/**
 * Loss to a broker restart, told apart from the target's own loss (BROKER_EPOCH_CHANGED).
 *
 * A replay target stamps every message frame with its stream's epoch; a broker that came back
 * empty (Redis restarted without persistence, a memory broker's process restarted) starts a new
 * one and answers a history request naming the old one with `reject_history` reason
 * `epoch_changed`. Messages stored in an ended epoch are gone with it: a client that had not got
 * them by then cannot get them from anyone. Those losses are the broker restart's, and the run
 * books them here with counts instead of letting them pass as the target's delivery loss (or as
 * nothing at all). Everything else stays plain loss, in particular every message accepted after
 * the broker came back.
 *
 * What the book is told: each arrival's epoch and offset (the clients' frames), each
 * `reject_history` reason, and each accepted message's accepted attempt (send time, answer time,
 * from the publisher). The rule, per lost (client, seq) of an accepted message:
 *
 * 1. The message is of an ended epoch: some client got it in an epoch that is not the last seen;
 *    or nobody got it and it was accepted before the boundary. The boundary is the send time of
 *    the accepted attempt of the new epoch's offset-1 message when a client saw offset 1 (anything
 *    answered before that request left was stored before the new epoch's first message, so in the
 *    old epoch); otherwise, conservatively, that of the last old-epoch message seen (stored before
 *    the restart).
 * 2. And the client was cut off from it: its seq is above the highest seq that client got in that
 *    epoch (a message the client missed below its own position was a gap while the epoch was live:
 *    the target's loss), or above the client's position when the broker failed its history request
 *    in that epoch (`reject_history` reason `broker_unavailable`: the server then delivers what it
 *    held back, so the client moves past the hole, and the epoch ended before anything could fill
 *    it). For a message nobody got, above the client's highest in every ended epoch.
 *
 * An epoch change is seen when arrivals carry two or more epochs or a history request was rejected
 * with `epoch_changed`; with neither, nothing is booked and the report says no change.
 */

const EPOCH_CHANGED_REASON = 'epoch_changed';
/** The replay server's reason when its broker failed a history read (services/replay-server/connection/history.ts). */
const BROKER_UNAVAILABLE_REASON = 'broker_unavailable';

/** What the book reports: part of a run's result (`brokerEpoch`). */
export interface EpochReport {
  /** Epochs in the order clients first saw them (message frames), oldest first. */
  epochs: string[];
  /** Each change, old → new, as seen in that order. */
  changes: { from: string; to: string }[];
  /** History requests rejected with reason `epoch_changed` (the client's position named an ended epoch). */
  historyRejectedEpochChanged: number;
  /** Accepted messages judged to be of an ended epoch (stored before the broker came back empty). */
  oldEpochMessages: number;
  /** Lost deliveries booked to the broker's restart (rule above). */
  lostDeliveries: number;
  /** Distinct messages with at least one delivery booked here. */
  lostMessages: number;
  /** Clients with at least one delivery booked here. */
  affectedClients: number;
  /** Lost deliveries that remain the target's: the ledger's lostDeliveries minus `lostDeliveries`. */
  plainLostDeliveries: number;
  /**
   * Lost deliveries of messages answered at or after the boundary: accepted after the broker came
   * back (or, with the fallback boundary, not provably before it). Always plain loss.
   */
  lostAfterBoundaryDeliveries: number;
  /** How the boundary was set: the new epoch's offset-1 message, else the last old-epoch message seen. */
  boundary: { seq: number; by: 'new_epoch_first' | 'old_epoch_last'; attemptSentAt: number } | null;
}

/** The publisher's accepted attempt of a message. */
export interface AcceptTimes {
  /** When the attempt that got the 201 was sent (a retry's own send time). */
  attemptSentAt: number;
  /** When its 201 arrived. */
  answeredAt: number;
}

export class EpochBook {
  private readonly epochs: string[] = [];
  private readonly index = new Map<string, number>();
  /** seq → epoch index + 1 (0: no client saw it). */
  private readonly seqEpoch: Uint8Array;
  /** Per epoch index: per client, the highest seq it got in that epoch (0: none). */
  private readonly highest: Int32Array[] = [];
  private readonly minOffset: ({ offset: number; seq: number } | null)[] = [];
  /** Per epoch index: per client, its position when the broker failed its history request there (0: never). */
  private readonly brokerCut: Int32Array[] = [];
  /** Per client, the epoch index of its latest arrival (-1: none yet): where its position lies. */
  private readonly lastEpoch: Int16Array;
  private readonly accepts = new Map<number, AcceptTimes>();
  private rejectedEpochChanged = 0;

  constructor(readonly clients: number, readonly messages: number) {
    this.seqEpoch = new Uint8Array(messages + 1);
    this.lastEpoch = new Int16Array(clients).fill(-1);
  }

  private epochIndex(epoch: string): number {
    let i = this.index.get(epoch);
    if (i === undefined) {
      // 255 epochs in one run would mean a broker restarting all the time; later ones fold into the last.
      if (this.epochs.length >= 255) return this.epochs.length - 1;
      i = this.epochs.length;
      this.epochs.push(epoch);
      this.index.set(epoch, i);
      this.highest.push(new Int32Array(this.clients));
      this.brokerCut.push(new Int32Array(this.clients));
      this.minOffset.push(null);
    }
    return i;
  }

  /** Client `client` got `seq` in `epoch` at `offset` (a live or a history frame). */
  arrival(client: number, seq: number, epoch: string | undefined, offset: number | undefined): void {
    if (epoch === undefined || epoch === '' || !Number.isInteger(seq) || seq < 1 || seq > this.messages || client < 0 || client >= this.clients) return;
    const e = this.epochIndex(epoch);
    if (this.seqEpoch[seq] === 0) this.seqEpoch[seq] = e + 1;
    const h = this.highest[e]!;
    if (seq > h[client]!) h[client] = seq;
    this.lastEpoch[client] = e;
    if (offset !== undefined && Number.isFinite(offset)) {
      const m = this.minOffset[e];
      if (!m || offset < m.offset) this.minOffset[e] = { offset, seq };
    }
  }

  /**
   * A history request was rejected; `reason` as the server gave it. `client`: whose request, told
   * in order with its arrivals (its position is then what it got so far): a broker failure cuts it
   * off from the rest of that epoch (rule 2).
   */
  historyRejected(reason: string | undefined, client?: number): void {
    if (reason === EPOCH_CHANGED_REASON) this.rejectedEpochChanged++;
    if (reason !== BROKER_UNAVAILABLE_REASON || client === undefined || !(client >= 0 && client < this.clients)) return;
    const e = this.lastEpoch[client]!;
    if (e < 0) return;
    const cut = this.brokerCut[e]!;
    const at = this.highest[e]![client]!;
    if (cut[client] === 0 || at < cut[client]!) cut[client] = at;
  }

  /** The publisher's 201 for `seq`. */
  accepted(seq: number, at: AcceptTimes): void {
    if (!this.accepts.has(seq)) this.accepts.set(seq, at);
  }

  /** Judge every lost delivery in `ledger` (same clients and messages as this book). */
  report(ledger: DeliveryLedger): EpochReport {
    const totalLost = ledger.totals().lostDeliveries;
    const changes = this.epochs.slice(1).map((to, i) => ({ from: this.epochs[i]!, to }));
    const boundary = this.boundary();
    const base: EpochReport = { epochs: [...this.epochs], changes, historyRejectedEpochChanged: this.rejectedEpochChanged, oldEpochMessages: 0, lostDeliveries: 0, lostMessages: 0, affectedClients: 0, plainLostDeliveries: totalLost, lostAfterBoundaryDeliveries: 0, boundary };
    const judged = this.judge(ledger);
    if (!judged) return base;
    const { oldSeq, afterReturn, cutOff } = judged;
    for (let s = 1; s <= this.messages; s++) base.oldEpochMessages += oldSeq[s]!;
    const lostSeqs = new Uint8Array(this.messages + 1);
    for (let c = 0; c < this.clients; c++) {
      let mine = 0;
      for (const s of ledger.lostSeqsOf(c)) {
        if (cutOff(c, s)) {
          mine++;
          lostSeqs[s] = 1;
        } else if (afterReturn[s]) base.lostAfterBoundaryDeliveries++;
      }
      base.lostDeliveries += mine;
      if (mine > 0) base.affectedClients++;
    }
    for (let s = 1; s <= this.messages; s++) base.lostMessages += lostSeqs[s]!;
    base.plainLostDeliveries = totalLost - base.lostDeliveries;
    return base;
  }

  /**
   * The lost (client, seq) this book charges to the broker's empty restart, as a predicate over
   * lost deliveries (engine/measure/loss-causes.ts books them `epoch_changed`); undefined when no
   * epoch change was seen. Same rule as `report`.
   */
  lostToEpoch(ledger: DeliveryLedger): ((client: number, seq: number) => boolean) | undefined {
    return this.judge(ledger)?.cutOff;
  }

  /**
   * The two rules `report` and `lostToEpoch` share; undefined when no epoch change was seen.
   * Rule 1 (`oldSeq`): accepted seqs of an ended epoch, by the epoch a client got them in or, for
   * a seq nobody got, by its 201 against the boundary. `afterReturn`: accepted after the boundary
   * (always plain loss). Rule 2 (`cutOff`): was this client cut off from that old-epoch seq?
   */
  private judge(ledger: DeliveryLedger): { oldSeq: Uint8Array; afterReturn: Uint8Array; cutOff: (client: number, seq: number) => boolean } | undefined {
    const last = this.epochs.length - 1;
    if (last <= 0 && this.rejectedEpochChanged === 0) return undefined;
    // With only rejections (nothing of a new epoch arrived), every epoch seen is an ended one; a
    // message nobody got is then plain loss (no boundary to place it before the restart).
    const ended = (e: number) => (last > 0 ? e < last : true);
    const boundary = this.boundary();
    const oldSeq = new Uint8Array(this.messages + 1);
    const afterReturn = new Uint8Array(this.messages + 1);
    for (let s = 1; s <= this.messages; s++) {
      if (!ledger.isAccepted(s)) continue;
      const e = this.seqEpoch[s]! - 1;
      const at = this.accepts.get(s);
      if (e >= 0) oldSeq[s] = ended(e) ? 1 : 0;
      else if (boundary && at) oldSeq[s] = at.answeredAt < boundary.attemptSentAt ? 1 : 0;
      if (!oldSeq[s] && boundary && at && at.answeredAt >= boundary.attemptSentAt) afterReturn[s] = 1;
    }
    // Rule 2: above the client's highest seq in the message's epoch (in every ended one for a seq nobody got).
    const cutOffFromAll = new Int32Array(this.clients);
    for (let c = 0; c < this.clients; c++) for (let e = 0; e < this.epochs.length; e++) if (ended(e)) cutOffFromAll[c] = Math.max(cutOffFromAll[c]!, this.highest[e]![c]!);
    const cutOff = (c: number, s: number) => {
      if (oldSeq[s] !== 1) return false;
      const e = this.seqEpoch[s]! - 1;
      if (e < 0) return s > cutOffFromAll[c]!;
      const brokerCut = this.brokerCut[e]![c]!;
      return s > this.highest[e]![c]! || (brokerCut > 0 && s > brokerCut);
    };
    return { oldSeq, afterReturn, cutOff };
  }

  private boundary(): EpochReport['boundary'] {
    if (this.epochs.length < 2) return null;
    const first = this.minOffset[this.epochs.length - 1];
    const firstAt = first && first.offset === 1 ? this.accepts.get(first.seq) : undefined;
    if (first && firstAt) return { seq: first.seq, by: 'new_epoch_first', attemptSentAt: firstAt.attemptSentAt };
    let best: EpochReport['boundary'] = null;
    for (let s = 1; s <= this.messages; s++) {
      const e = this.seqEpoch[s]! - 1;
      const at = this.accepts.get(s);
      if (e < 0 || e >= this.epochs.length - 1 || !at) continue;
      if (!best || at.attemptSentAt > best.attemptSentAt) best = { seq: s, by: 'old_epoch_last', attemptSentAt: at.attemptSentAt };
    }
    return best;
  }
}

/** The counts of EpochReport, in its key order: what mergeEpochReports sums. */
const SUMMED = ['historyRejectedEpochChanged', 'oldEpochMessages', 'lostDeliveries', 'lostMessages', 'affectedClients', 'plainLostDeliveries', 'lostAfterBoundaryDeliveries'] as const;

/** Sum of per-worker reports, each on its own stream (jitter --workers). */
export function mergeEpochReports(rs: (EpochReport | null | undefined)[]): EpochReport | null {
  const live = rs.filter((r): r is EpochReport => !!r);
  if (!live.length) return null;
  const epochs = [...new Set(live.flatMap((r) => r.epochs))];
  const seen = new Set<string>();
  const changes = live.flatMap((r) => r.changes).filter((c) => !seen.has(`${c.from}>${c.to}`) && seen.add(`${c.from}>${c.to}`));
  // Every count summed, in the report's key order.
  const counts = Object.fromEntries(SUMMED.map((k) => [k, sum(live, (r) => r[k])])) as Pick<EpochReport, (typeof SUMMED)[number]>;
  return { epochs, changes, ...counts, boundary: live.find((r) => r.boundary)?.boundary ?? null };
}

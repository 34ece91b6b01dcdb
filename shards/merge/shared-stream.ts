import { decodeRanges } from '../../engine/measure/seq-ranges.ts';
import { pct } from '../../engine/session/results.ts';
import { num, type FleetFlag, type ShardOutcome, type ShardResult } from './types.ts';

/** Delivery counters a subscriber cannot have without its publisher's accepted set. */
const DELIVERY_FIELDS: ReadonlySet<string> = new Set(['expectedDeliveries', 'receivedDeliveries', 'lostDeliveries', 'unacceptedDeliveries', 'deliveryRatePct', 'deliveryRateOfConnectedPct', 'perfectClients']);
const strip = (r: ShardResult): ShardResult => Object.fromEntries(Object.entries(r).filter(([k]) => !DELIVERY_FIELDS.has(k)));

/**
 * Shared-stream mode: re-judge every subscribe-only shard against the publishing shard's accepted
 * set. A subscriber only knows which seqs reached its clients (`arrivalsBySeq`); the messages the
 * target refused are the publisher's failure, never a subscriber's loss, and a message the target
 * accepted that none of its clients got is loss. With the accepted set A and per-seq arrivals:
 * expected = clients × |A|, received = Σ arrivals, unaccepted = Σ arrivals outside A,
 * lost = expected − (received − unaccepted): the same definitions as a publishing runner's ledger.
 */
export function judgeOnPublisher(outcomes: readonly ShardOutcome[], publisher: string): { outcomes: ShardOutcome[]; flags: FleetFlag[] } {
  const pub = outcomes.find((o) => o.name === publisher);
  const pr = pub?.status === 'done' ? pub.result : undefined;
  const msgs = num(pr?.totalMessages);
  const accepted = pr && msgs !== undefined && typeof pr.acceptedSeqs === 'string' ? decodeRanges(pr.acceptedSeqs, msgs) : undefined;
  const isSub = (o: ShardOutcome) => o.status === 'done' && o.result?.role === 'subscriber';
  const subs = outcomes.filter(isSub).map((o) => o.name);
  if (!pr || !accepted || msgs === undefined) {
    const why = !pr ? `the publishing shard ${publisher} did not finish (${pub?.status ?? 'missing'})` : `the publishing shard ${publisher} reported no accepted set (acceptedSeqs): an older runner`;
    const stripped = outcomes.map((o) => (isSub(o) ? { ...o, result: strip(o.result!) } : o));
    return { outcomes: stripped, flags: subs.length ? [{ code: 'SHARED_PUBLISHER_FAILED', severity: 'fatal', shards: [publisher], message: `${why}: what the target accepted is unknown, so no subscriber's deliveries can be judged (${subs.join(', ')})` }] : [] };
  }
  let acceptedCount = 0;
  for (let s = 1; s <= msgs; s++) acceptedCount += accepted[s]!;
  const flags: FleetFlag[] = [];
  const judged = outcomes.map((o): ShardOutcome => {
    if (!isSub(o)) return o;
    const r = o.result!;
    const arr = r.arrivalsBySeq;
    if (!Array.isArray(arr) || arr.length !== msgs || num(r.totalMessages) !== msgs || !arr.every((x) => num(x) !== undefined)) {
      flags.push({ code: 'SHARED_SUBSCRIBER_MISMATCH', severity: 'fatal', shards: [o.name], message: `${o.name} did not report arrivals for the publisher's ${msgs} messages (arrivalsBySeq): it ran a different test than ${publisher}` });
      return { ...o, result: strip(r) };
    }
    let received = 0;
    let unaccepted = 0;
    let unseenAccepted = false;
    for (let s = 1; s <= msgs; s++) {
      const n = arr[s - 1] as number;
      received += n;
      if (!accepted[s]) unaccepted += n;
      else if (n === 0) unseenAccepted = true;
    }
    const clients = num(r.clients) ?? 0;
    const connected = num(r.connectedClients) ?? clients;
    const expected = clients * acceptedCount;
    return {
      ...o,
      result: {
        ...r,
        published: num(pr.published),
        // The publisher's refusals are counted once, on the publishing shard.
        publishFailures: 0,
        acceptedSeqs: pr.acceptedSeqs,
        expectedDeliveries: expected,
        receivedDeliveries: received,
        unacceptedDeliveries: unaccepted,
        lostDeliveries: expected - (received - unaccepted),
        deliveryRatePct: pct(received, expected),
        deliveryRateOfConnectedPct: pct(received, connected * acceptedCount),
        // The shard counted a client perfect if it got every seq any of its clients got: exact
        // against A unless some accepted seq reached none of them (then no client is perfect).
        perfectClients: unseenAccepted ? 0 : num(r.perfectClients),
      },
    };
  });
  return { outcomes: judged, flags };
}

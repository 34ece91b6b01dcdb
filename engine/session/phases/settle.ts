import type { SettleOutcome } from '../events.ts';
import type { DeliveryLedger } from '../../measure/ledger.ts';
import type { Phase, Session } from '../types.ts';

export interface SettleConfig {
  /** Longest wait, ms. */
  maxMs: number;
  /** Done once this holds (checked before each nap). */
  until: (s: Session) => boolean;
  /** Between checks, ms. @default 250 */
  stepMs?: number;
  /** Phase name in the event (a throughput run calls it drain). @default 'settle' */
  label?: 'settle' | 'drain' | 'herd';
  detail?: string;
}

/**
 * Wait for replays and reconnects: end as soon as `until` holds, when `maxMs` is up, or on abort.
 * Every runner's settle is this loop with its own predicate.
 */
export function settlePhase(c: SettleConfig): Phase<{ outcome: SettleOutcome; waitedMs: number }> {
  const name = c.label ?? 'settle';
  return {
    name,
    async run(s: Session) {
      s.events.emit('phase', name, c.detail ?? `up to ${c.maxMs} ms`);
      const start = s.clock.now();
      const end = start + c.maxMs;
      let outcome: SettleOutcome | undefined;
      while (!outcome && s.clock.now() < end) {
        outcome = s.aborted ? 'aborted' : c.until(s) ? 'done' : undefined;
        if (!outcome) await s.nap(Math.min(c.stepMs ?? 250, end - s.clock.now()));
      }
      outcome ??= c.until(s) ? 'done' : 'timeout';
      const waitedMs = s.clock.now() - start;
      s.events.emit('settled', outcome, waitedMs);
      return { outcome, waitedMs };
    },
  };
}

/**
 * A settle predicate: every client `waitedFor` names has each message `wanted` asks of it (by
 * default, each the target accepted). Exact where a count of arrivals is not: an arrival outside
 * that set (a publish refused after its broadcast went out, a client no longer waited for) fills
 * nobody's hole, so the wait cannot end while an accepted message is still on its way (a count
 * ended an avalanche's settle with its last message in flight, booked lost). A cursor per client
 * passes each seq once, so a check costs what arrived since the last. Build it once publishing
 * has ended: a seq must not become wanted behind a cursor.
 */
export function deliveredToAll(ledger: DeliveryLedger, waitedFor: (client: number) => boolean, wanted?: (client: number, seq: number) => boolean): () => boolean {
  const next = new Int32Array(ledger.clients).fill(1);
  return () => {
    for (let c = 0; c < ledger.clients; c++) {
      if (!waitedFor(c)) continue;
      next[c] = ledger.firstMissing(c, next[c], wanted);
      if (next[c]! <= ledger.messages) return false;
    }
    return true;
  };
}

/** Every client seen connected has every accepted message (deliveredToAll; build it after publishing). */
export const allDelivered = (s: Pick<Session, 'ledger' | 'book'>): (() => boolean) => deliveredToAll(s.ledger, (c) => s.book.has(c));

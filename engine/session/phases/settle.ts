import type { SettleOutcome } from '../events.ts';
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

/** Every client seen connected has every accepted message (distinct first deliveries). */
export const allDelivered = (s: Session): boolean => s.ledger.acceptedMessages > 0 && s.latency.count >= s.book.connectedCount * s.ledger.acceptedMessages;

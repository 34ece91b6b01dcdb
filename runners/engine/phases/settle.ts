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
  return {
    name: c.label ?? 'settle',
    async run(s: Session) {
      s.events.emit('phase', c.label ?? 'settle', c.detail ?? `up to ${c.maxMs} ms`);
      const start = s.clock.now();
      const end = start + c.maxMs;
      let outcome: SettleOutcome = 'timeout';
      while (s.clock.now() < end) {
        if (s.aborted) {
          outcome = 'aborted';
          break;
        }
        if (c.until(s)) {
          outcome = 'done';
          break;
        }
        await s.nap(Math.min(c.stepMs ?? 250, end - s.clock.now()));
      }
      if (outcome === 'timeout' && c.until(s)) outcome = 'done';
      const waitedMs = s.clock.now() - start;
      s.events.emit('settled', outcome, waitedMs);
      return { outcome, waitedMs };
    },
  };
}

/** Every client seen connected has every accepted message (distinct first deliveries). */
export const allDelivered = (s: Session): boolean => s.ledger.acceptedMessages > 0 && s.latency.count >= s.book.connectedCount * s.ledger.acceptedMessages;

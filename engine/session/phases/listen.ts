import { progressEvents, type FlowConfig } from './publish.ts';
import type { Phase, Session } from '../types.ts';

export interface ListenConfig extends FlowConfig {
  /** Give up waiting for the first message after this long, ms. */
  firstMessageMs: number;
  /** After the first message, stop once the last is seen or this long has passed, ms. */
  lastMessageMs: number;
  /** When the first of the run's messages reached a client (the runner records it from its delivery hook). */
  firstAt: () => number | undefined;
  lastSeen: () => boolean;
  planned: number;
}

/**
 * Subscribe-only: another process publishes the shared stream; wait for its first message, run
 * what goes alongside from there, and stop listening once its last message arrived (or the
 * window ends). `t0` is the first message's arrival (or now, when none came).
 */
export function listenPhase(c: ListenConfig): Phase<{ t0: number; heard: boolean; elapsedMs: number }> {
  return {
    name: 'listen',
    async run(s: Session) {
      s.events.emit('phase', 'listen', c.detail ?? `subscribe-only: ${s.book.connectedCount} clients waiting for ${c.planned} messages tagged ${s.runId} on ${s.stream}`);
      const firstBy = s.clock.now() + c.firstMessageMs;
      // Bounded by the deadline: one look every 50 ms.
      while (c.firstAt() === undefined && s.clock.now() < firstBy && !s.aborted) await s.nap(50);
      const first = c.firstAt();
      const t0 = first ?? s.clock.now();
      const stopProgress = progressEvents(s, c, 'listen', c.planned, () => ({ sent: s.ledger.acceptedMessages, published: s.ledger.acceptedMessages, publishFailures: 0 }));
      try {
        const tasks = first === undefined ? [] : (c.alongside?.(t0) ?? []);
        const lastBy = t0 + c.lastMessageMs;
        while (first !== undefined && !c.lastSeen() && s.clock.now() < lastBy && !s.aborted) await s.nap(100);
        await Promise.all(tasks);
        return { t0, heard: first !== undefined, elapsedMs: s.clock.now() - t0 };
      } finally {
        stopProgress();
      }
    },
  };
}

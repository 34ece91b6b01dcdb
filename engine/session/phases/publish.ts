import { ReboundError } from '../../../lib/errors.ts';
import { startPublisher, type PublisherOptions, type PublisherResult } from '../../measure/publisher.ts';
import { pct } from '../results.ts';
import type { PhaseName, Progress } from '../events.ts';
import type { Phase, Session } from '../types.ts';

/** The publisher's options (engine/measure/publisher.ts) the phase passes through, and its own. */
export interface PublishConfig extends FlowConfig, Pick<PublisherOptions, 'url' | 'messages' | 'intervalMs' | 'firstSeq' | 'payloadBytes' | 'broadcastKey' | 'concurrency' | 'timeoutMs' | 'onSend' | 'onAttempt' | 'onPublished'> {
  /** Book each 201 into the session (ledger + the message's window for loss causes). @default true */
  accept?: boolean;
  /** Publishing stops when this resolves (a soak's last health window), before the schedule ends; the phase waits for it too. */
  stopWith?: (t0: number) => Promise<unknown>;
  /** Called with t0 just before the first message goes out. */
  onStart?: (t0: number) => void;
}

/** What the phases that let messages flow (publish, listen) share: their progress events and what runs alongside them. */
export interface FlowConfig {
  /** A progress event every this many ms (0: none). @default 2000 */
  progressEveryMs?: number;
  /** Extra progress fields: disruptions so far, the runner's loop lag. */
  drops?: () => number;
  loopLag?: () => { p99: number; max: number };
  /**
   * Started once messages flow, publish: when the first is due, listen: when the first arrived
   * (chaos timers run from there); the phase waits for them too.
   */
  alongside?: (t0: number) => Promise<unknown>[];
  detail?: string;
}

/** A progress event every `progressEveryMs` from `counts` and the session's own; returns its stop. */
export function progressEvents(s: Session, c: FlowConfig, phase: PhaseName, planned: number, counts: () => { sent: number; published: number; publishFailures: number }): () => void {
  const every = c.progressEveryMs ?? 2000;
  if (!(every > 0)) return () => {};
  const timer = setInterval(() => {
    const { sent, published, publishFailures } = counts();
    // Over messages sent and not failed: a message reaches clients before its 201 comes back.
    const p: Progress = { phase, sent, planned, published, publishFailures, connected: s.upCount, clients: s.clients.length, received: s.latency.count, deliveredPct: pct(s.latency.count, s.book.connectedCount * (sent - publishFailures)), drops: c.drops?.() ?? 0, ...(c.loopLag ? { loopLagMs: c.loopLag() } : {}) };
    s.events.emit('progress', p);
  }, every);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Publish seq firstSeq..messages on the publisher's drift-free schedule, booking every accepted
 * message into the session; an abort stops it. Emits progress while it runs. `t0`: when
 * publishing started (session clock).
 */
export function publishPhase(c: PublishConfig): Phase<{ result: PublisherResult; t0: number; sent: number }> {
  return {
    name: 'publish',
    validate() {
      if (!(c.intervalMs >= 0) || !Number.isFinite(c.intervalMs)) throw new ReboundError('RR_ERR_OPTION_INVALID', `publish interval must be a finite number of ms >= 0 (got ${c.intervalMs})`);
    },
    async run(s: Session) {
      s.events.emit('phase', 'publish', c.detail ?? `${c.messages} messages every ${c.intervalMs} ms on ${s.stream}`);
      const t0 = s.clock.now();
      let sent = 0;
      let published = 0;
      let failed = 0;
      const accept = c.accept ?? true;
      c.onStart?.(t0);
      // The config's own fields (accept, alongside, progress...) ride along; the publisher reads only its options.
      const publisher = startPublisher({
        ...c,
        stream: s.stream,
        runId: s.runId,
        // How this target's server takes a message: its definition says (a user's target file may build its own request).
        ...(s.target.publish ? { publish: s.target.publish } : {}),
        onSend: (seq, sentAt) => {
          sent++;
          c.onSend?.(seq, sentAt);
        },
        onPublished: (seq, ok, cause, at, unknown) => {
          if (ok) {
            published++;
            if (accept) s.accept(seq, at && { sentAt: at.attemptSentAt, answeredAt: at.answeredAt });
          } else {
            failed++;
            if (accept && unknown) s.ledger.unconfirmed(seq);
          }
          c.onPublished?.(seq, ok, cause, at, unknown);
        },
      });
      const stopProgress = progressEvents(s, c, 'publish', c.messages, () => ({ sent, published, publishFailures: failed }));
      const stopOnAbort = s.onAbort(() => publisher.stop());
      try {
        const tasks = c.alongside?.(t0) ?? [];
        if (c.stopWith) tasks.push(c.stopWith(t0).then(() => publisher.stop()));
        const result = await publisher.done;
        await Promise.all(tasks);
        return { result, t0, sent };
      } finally {
        stopOnAbort();
        stopProgress();
      }
    },
  };
}

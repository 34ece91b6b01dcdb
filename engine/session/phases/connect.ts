import { rampConnect, type RampOptions } from '../../measure/connections.ts';
import { ReboundError } from '../../../lib/errors.ts';
import type { Phase, Session } from '../types.ts';

export interface ConnectConfig extends Pick<RampOptions, 'perSec' | 'timeoutMs'> {
  /** One line about where the clients go, for the phase event. */
  detail?: string;
}

/**
 * Ramp every client of the session in at `perSec`, outcomes in the session's connection book
 * (engine/measure/connections.ts): failures by cause, a late connect counted as connected.
 */
export function connectPhase(c: ConnectConfig): Phase<{ elapsedMs: number }> {
  return {
    name: 'connect',
    validate() {
      if (!(c.perSec > 0)) throw new ReboundError('RR_ERR_OPTION_INVALID', `connect ramp must be above 0 per second (got ${c.perSec})`);
    },
    async run(s: Session) {
      s.openClients();
      s.events.emit('phase', 'connect', c.detail ?? `${s.clients.length} clients at ${c.perSec}/s to ${s.target.name}`);
      const start = s.clock.now();
      // The session's abort as the AbortSignal rampConnect takes.
      const ac = new AbortController();
      s.onAbort(() => ac.abort());
      await rampConnect({ count: s.clients.length, perSec: c.perSec, connect: (i) => s.clients[i]!.connect(), book: s.book, timeoutMs: c.timeoutMs, signal: ac.signal });
      return { elapsedMs: s.clock.now() - start };
    },
  };
}

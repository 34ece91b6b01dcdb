import type { ValidityCode } from '../../engine/measure/validity.ts';
import type { JitterOptions } from './options.ts';

/**
 * Margin for the publishing shard to start: it is enqueued once every subscribing shard listens
 * (the slowest subscriber's ramp, the coordinator's poll), then ramps its own clients.
 */
export const FIRST_MESSAGE_GRACE_MS = 60_000;
/** After the publisher's schedule, time for its last message to land (a refused last seq never does). */
const LAST_MESSAGE_GRACE_MS = 10_000;

/** Publishing-side rules a subscriber cannot judge: it never sees the publisher's refusals. */
export const SUBSCRIBER_ONLY_CODES: readonly ValidityCode[] = ['NOTHING_PUBLISHED', 'PARTIAL_PUBLISH'];

/**
 * A subscribe-only shard's waits, from the run's own parameters (the publishing shard runs the
 * same clients, ramp, msgs and interval): how long to wait for the first message after our ramp,
 * how long after it for the last, and the plan the OVERRAN_PLAN rule measures against.
 */
export function listenWindow(o: Pick<JitterOptions, 'clients' | 'ramp' | 'msgs' | 'interval' | 'settle'>) {
  const rampMs = Math.ceil((o.clients * 1000) / o.ramp);
  // The publisher's ramp, plus as long again for a subscriber shard that ramps slower than us.
  const firstMessageMs = 2 * rampMs + 1000 + FIRST_MESSAGE_GRACE_MS;
  const lastMessageMs = o.msgs * o.interval + LAST_MESSAGE_GRACE_MS;
  // Our ramp, the publisher's ramp and pause, its schedule, settle.
  const plannedMs = 2 * rampMs + 2000 + o.msgs * o.interval + o.settle;
  return { firstMessageMs, lastMessageMs, plannedMs };
}

import { sleep, withTimeout } from '../../lib/time.ts';
import { classifyConnectError } from './runner-limits.ts';

/** The connect outcome of every client over a whole run, as reported in results. */
export interface ConnectionSummary {
  /** Clients connected and subscribed at least once during the run, including late connects. */
  connectedClients: number;
  /** Clients that never connected. */
  connectFailures: number;
  /** `connectFailures` by cause: 'fd_limit' and 'port_exhaustion' are the runner's own limits, 'target' everything else. */
  connectFailureCauses: Record<string, number>;
  /** Clients whose first connect failed (timed out, errored) and that connected later anyway. */
  lateConnects: number;
}

/**
 * Who ever connected. A client whose first connect timed out can still connect later (the
 * library kept trying, or the handshake was only slow); counting it as a failure while the
 * ledger books its deliveries would push the delivery rate of connected clients over 100%.
 * So connected means "seen connected", and a failure cause only sticks to clients never seen.
 */
export class ConnectionBook {
  private readonly seen: Uint8Array;
  private readonly failedCause: (string | undefined)[];
  private seenCount = 0;

  constructor(readonly clients: number) {
    this.seen = new Uint8Array(clients);
    this.failedCause = new Array(clients);
  }

  /** Client i reported `connected` (open and subscribed). */
  connected(i: number): void {
    if (i < 0 || i >= this.clients || this.seen[i]) return;
    this.seen[i] = 1;
    this.seenCount++;
  }

  /** Client i's first connect failed with `cause` (runner-limits.ts classifyConnectError); ignored once it was seen connected. */
  failed(i: number, cause: string): void {
    if (i < 0 || i >= this.clients || this.seen[i]) return;
    this.failedCause[i] ??= cause;
  }

  has(i: number): boolean {
    return this.seen[i] === 1;
  }

  /** Clients seen connected so far. */
  get connectedCount(): number {
    return this.seenCount;
  }

  summary(): ConnectionSummary {
    const causes: Record<string, number> = {};
    let late = 0;
    for (let i = 0; i < this.clients; i++) {
      const cause = this.failedCause[i];
      if (this.seen[i]) {
        if (cause !== undefined) late++;
        continue;
      }
      const c = cause ?? 'target';
      causes[c] = (causes[c] ?? 0) + 1;
    }
    return { connectedClients: this.seenCount, connectFailures: this.clients - this.seenCount, connectFailureCauses: causes, lateConnects: late };
  }
}

export interface RampOptions {
  /** Clients 0..count-1. */
  count: number;
  /** Connects started per second: client i is due at start + i·1000/perSec. */
  perSec: number;
  /** Open client i (resolves once it is connected and subscribed). */
  connect: (i: number) => Promise<unknown>;
  /** A connect not done by then counts as failed (it may still connect later: a late connect). @default 20000 */
  timeoutMs?: number;
  /** Aborting stops starting connects and stops waiting for the pending ones. */
  signal?: AbortSignal;
  /** Where outcomes go; a new book of `count` clients when absent. */
  book?: ConnectionBook;
}

/**
 * The connect phase every runner shares: start client i's connect when it is due on the ramp,
 * give each `timeoutMs`, and book outcomes in a ConnectionBook — a failure by its cause
 * ('fd_limit' and 'port_exhaustion' are the runner's own limits, else 'target'), and a connect
 * that lands after its timeout as connected (late). Resolves when every started connect has
 * settled or timed out, or at once on abort.
 */
export async function rampConnect(o: RampOptions): Promise<ConnectionBook> {
  const book = o.book ?? new ConnectionBook(o.count);
  const timeoutMs = o.timeoutMs ?? 20_000;
  const aborted = new Promise<void>((r) => {
    if (o.signal?.aborted) r();
    else o.signal?.addEventListener('abort', () => r(), { once: true });
  });
  const start = Date.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < o.count && !o.signal?.aborted; i++) {
    const due = start + (i * 1000) / o.perSec;
    if (due > Date.now()) await Promise.race([sleep(due - Date.now()), aborted]);
    if (o.signal?.aborted) break;
    const attempt = Promise.resolve().then(() => o.connect(i));
    attempt.then(
      () => book.connected(i),
      () => {},
    );
    pending.push(withTimeout(attempt, timeoutMs).then(
      () => undefined,
      (err: unknown) => book.failed(i, classifyConnectError(err) ?? 'target'),
    ));
  }
  await Promise.race([Promise.all(pending), aborted]);
  return book;
}

/**
 * A child process's share of a global ramp (idle workers, S6 holders): clients first,
 * first + stride, ... (count of them), client i opened at startAt + i * 1000 / rampPerSec, until
 * `stopped()`; resolves once every open has settled.
 */
export async function rampShare(s: { first: number; stride: number; count: number; startAt: number; rampPerSec: number }, open: (i: number) => Promise<void>, stopped: () => boolean): Promise<void> {
  const pending: Promise<void>[] = [];
  for (let k = 0; k < s.count && !stopped(); k++) {
    const i = s.first + k * s.stride;
    const due = s.startAt + (i * 1000) / s.rampPerSec;
    if (due > Date.now()) await sleep(due - Date.now());
    pending.push(open(i));
  }
  await Promise.all(pending);
}

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

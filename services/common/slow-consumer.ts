/**
 * When a reference server gives up on a client that does not read. A burst the server itself
 * created (one accepted batch of several MiB) may queue past `maxBufferedBytes` for a moment; a
 * reader that keeps draining is never cut for it. A client is too slow when its queue has stayed
 * over the bound for `slowConsumerMs` without draining completely (lack of progress), or at once
 * when the queue passes the hard cap of 16 x `maxBufferedBytes` (memory stays bounded whatever the
 * rate).
 */
export const HARD_CAP_FACTOR = 16;

export interface SlowConsumerLimits {
  maxBufferedBytes: number;
  slowConsumerMs: number;
}

export class ProgressWatch {
  /** When the queue was first seen over the bound since it last drained; 0 = not over. */
  private overSince = 0;

  /** The transport flushed everything it had: the reader is reading. */
  readonly drained = (): void => {
    this.overSince = 0;
  };

  /**
   * Should a client with `queuedBytes` waiting be dropped now? Cheap when under the bound (no
   * clock read), since it runs for every subscriber of every message.
   */
  tooSlow(queuedBytes: number, limits: SlowConsumerLimits, now?: number): boolean {
    if (queuedBytes <= limits.maxBufferedBytes) return false;
    if (queuedBytes > limits.maxBufferedBytes * HARD_CAP_FACTOR) return true;
    const t = now ?? Date.now();
    if (this.overSince === 0) {
      this.overSince = t;
      return false;
    }
    return t - this.overSince > limits.slowConsumerMs;
  }
}

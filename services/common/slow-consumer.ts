/**
 * When a reference server gives up on a client that does not read. A burst the server itself
 * created (one accepted batch of several MiB) may queue past `maxBufferedBytes` for a moment; a
 * reader that keeps draining is never cut for it. A client is too slow when its queue has been
 * over the bound for `slowConsumerMs` without draining (lack of progress), or at once when the
 * queue passes the hard cap of 16 x `maxBufferedBytes` (memory stays bounded whatever the rate).
 */
export const HARD_CAP_FACTOR = 16;

export interface SlowConsumerLimits {
  maxBufferedBytes: number;
  slowConsumerMs: number;
}

export class ProgressWatch {
  /** Last time the queue was under the bound or drained. */
  private okAt = Date.now();

  /** The transport flushed everything it had: the reader is reading. */
  readonly drained = (): void => {
    this.okAt = Date.now();
  };

  /** Should a client with `queuedBytes` waiting be dropped now? */
  tooSlow(queuedBytes: number, limits: SlowConsumerLimits, now = Date.now()): boolean {
    if (queuedBytes <= limits.maxBufferedBytes) {
      this.okAt = now;
      return false;
    }
    if (queuedBytes > limits.maxBufferedBytes * HARD_CAP_FACTOR) return true;
    return now - this.okAt > limits.slowConsumerMs;
  }
}

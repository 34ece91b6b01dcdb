/**
 * Per-connection whisper budget: token buckets for count and payload bytes, each refilled per
 * second with a burst of one second. Whispers are unauthenticated (anycable-go semantics), so
 * this is what stops one socket from turning a few bytes in into gigabytes out.
 */
export class WhisperBudget {
  private count: number;
  private bytes: number;
  private at: number;

  constructor(
    private readonly ratePerSec: number,
    private readonly bytesPerSec: number,
    now: number,
  ) {
    this.count = ratePerSec;
    this.bytes = bytesPerSec;
    this.at = now;
  }

  /** Spend one whisper of `size` bytes; false (nothing spent) when over either budget. */
  take(size: number, now: number): boolean {
    const dt = Math.max(0, now - this.at) / 1000;
    this.at = now;
    this.count = Math.min(this.ratePerSec, this.count + dt * this.ratePerSec);
    this.bytes = Math.min(this.bytesPerSec, this.bytes + dt * this.bytesPerSec);
    if (this.count < 1 || this.bytes < size) return false;
    this.count -= 1;
    this.bytes -= size;
    return true;
  }
}

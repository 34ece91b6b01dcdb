/**
 * The memory broker's store order across streams: one entry per stored message (its stream's
 * state and its offset), oldest first, for the whole-broker byte cap to evict from.
 *
 * A ring that doubles when full and otherwise never reallocates: the log holds as many entries
 * as the history (100,000 at 1,000 streams x 100), and arrays that grew by push and were rebuilt
 * by each compaction allocated a few MB of old-space backing store every cycle, which by itself
 * set off about half of the server's full garbage collections under a steady publish load.
 */
export class OrderLog<S> {
  private states: Array<S | undefined> = new Array<S | undefined>(16).fill(undefined);
  private offsets = new Float64Array(16);
  private head = 0;
  /** Entries held. */
  size = 0;

  push(state: S, offset: number): void {
    if (this.size === this.states.length) this.grow();
    const j = (this.head + this.size) & (this.states.length - 1);
    this.states[j] = state;
    this.offsets[j] = offset;
    this.size++;
  }

  /** The oldest entry's state (undefined when the log is empty). */
  oldestState(): S | undefined {
    return this.size === 0 ? undefined : this.states[this.head];
  }

  /** The oldest entry's offset (NaN when the log is empty). */
  oldestOffset(): number {
    return this.size === 0 ? Number.NaN : this.offsets[this.head]!;
  }

  /** Forget the oldest entry. */
  dropOldest(): void {
    if (this.size === 0) return;
    this.states[this.head] = undefined;
    this.head = (this.head + 1) & (this.states.length - 1);
    this.size--;
  }

  /** Keep only the entries `keep` accepts, in order, in place. */
  retain(keep: (state: S, offset: number) => boolean): void {
    const mask = this.states.length - 1;
    let kept = 0;
    for (let k = 0; k < this.size; k++) {
      const i = (this.head + k) & mask;
      const state = this.states[i]!;
      const offset = this.offsets[i]!;
      if (!keep(state, offset)) continue;
      // kept <= k: the slot written was read already.
      const w = (this.head + kept++) & mask;
      this.states[w] = state;
      this.offsets[w] = offset;
    }
    for (let k = kept; k < this.size; k++) this.states[(this.head + k) & mask] = undefined;
    this.size = kept;
  }

  /** Full: twice the capacity, the oldest at slot 0. */
  private grow(): void {
    const cap = this.states.length * 2;
    const states = new Array<S | undefined>(cap).fill(undefined);
    const offsets = new Float64Array(cap);
    const mask = this.states.length - 1;
    for (let k = 0; k < this.size; k++) {
      const i = (this.head + k) & mask;
      states[k] = this.states[i];
      offsets[k] = this.offsets[i]!;
    }
    this.states = states;
    this.offsets = offsets;
    this.head = 0;
  }
}

/**
 * Requests over IPC that wait for an answer carrying the same `id`, with a timeout: a primary
 * that never answers (gone, or busy past the bound) is an error, never a hang.
 */
export class PendingRequests<Answer extends { id: number }> {
  private seq = 0;
  private readonly pending = new Map<number, (m: Answer) => void>();

  constructor(private readonly timeoutMs = 5000) {}

  /** `send(id)` sends the request; resolves with `pick(answer)`. */
  request<T>(send: (id: number) => void, pick: (m: Answer) => T, timeoutMs = this.timeoutMs): Promise<T> {
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`IPC request ${id} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.pending.set(id, (m) => {
        clearTimeout(timer);
        resolve(pick(m));
      });
      send(id);
    });
  }

  /** Hand an answer to its request (false when nobody waits for it any more). */
  settle(m: Answer): boolean {
    const done = this.pending.get(m.id);
    if (!done) return false;
    this.pending.delete(m.id);
    done(m);
    return true;
  }

  clear(): void {
    this.pending.clear();
  }
}

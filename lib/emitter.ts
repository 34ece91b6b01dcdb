/** Minimal typed emitter: `on` returns its disposer, listeners that throw never break the emitter's owner. */
export class Emitter<E extends { [K in keyof E]: (...args: never[]) => void }> {
  private readonly listeners = new Map<keyof E, Set<E[keyof E]>>();

  on<K extends keyof E>(event: K, fn: E[K]): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(fn);
    return () => set!.delete(fn);
  }

  emit<K extends keyof E>(event: K, ...args: Parameters<E[K]>): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const fn of set) {
      try {
        (fn as (...a: Parameters<E[K]>) => void)(...args);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}

import { describe, expect, it } from 'vitest';
import { until, waitUntil } from './time.ts';

describe('until', () => {
  it('is true as soon as the predicate holds, sync or async', async () => {
    let n = 0;
    expect(await until(() => ++n >= 3, 5000, undefined, 1)).toBe(true);
    expect(n).toBe(3);
    expect(await until(async () => true, 0)).toBe(true);
  });

  it('is false once the bound passes without the predicate', async () => {
    expect(await until(() => false, 30, undefined, 5)).toBe(false);
  });

  it('is false at once when the signal aborts, without waiting out the bound', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    // A bound and a step far past the test's own timeout: only the abort can end this wait in time.
    expect(await until(() => false, 60_000, ac.signal, 60_000)).toBe(false);
  });

  it('awaits a step function between checks (a caller woken by its own event)', async () => {
    let steps = 0;
    let ready = false;
    const step = async () => {
      steps++;
      ready = steps === 2;
    };
    expect(await until(() => ready, 5000, undefined, step)).toBe(true);
    expect(steps).toBe(2);
  });

  it('waitUntil rejects with what it waited for', async () => {
    await expect(waitUntil(() => false, 10, 'the moon', 2)).rejects.toThrow('timed out after 10 ms waiting for the moon');
  });
});

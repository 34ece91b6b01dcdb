/**
 * Toxic stages in isolation, on fake timers with an injected clock and rng, for the exact
 * figures Toxiproxy's toxics/*_test.go assert (piece sizes, limits, release times). The same
 * behaviours are checked end to end over TCP in toxics.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createStage, EOF, type Item, type StageHost } from './stages.ts';
import type { ToxicRecord } from './toxics.ts';
import type { ToxicType } from './types.ts';

interface Out {
  data: Buffer;
  at: number;
  /** Fake-clock time it left the stage. */
  t: number;
}

function harness(type: ToxicType, attributes: Record<string, number>, opts: { toxicity?: number; rng?: () => number } = {}) {
  const out: Out[] = [];
  let eofAt: number | undefined;
  let released = 0;
  let resets = 0;
  const host: StageHost = {
    now: () => Date.now(),
    rng: opts.rng ?? (() => 0.5),
    release: (n) => (released += n),
    reset: () => resets++,
    timers: { armed: 0 },
  };
  const record: ToxicRecord = { name: type, type, stream: 'downstream', direction: 'downstream', toxicity: opts.toxicity ?? 1, attributes };
  const stage = createStage(record, host);
  stage.next = {
    accept: (item: Item) => {
      if (item === EOF) eofAt = Date.now();
      else out.push({ data: item.data, at: item.at, t: Date.now() });
    },
  };
  return {
    stage,
    record,
    host,
    out,
    send: (data: Buffer | string) => stage.accept({ data: Buffer.from(data), at: Date.now() }),
    eof: () => stage.accept(EOF),
    get eofAt() {
      return eofAt;
    },
    get released() {
      return released;
    },
    get resets() {
      return resets;
    },
    bytes: () => Buffer.concat(out.map((o) => o.data)),
  };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('slicer', () => {
  it('average_size 1, size_variation 0 → exactly 1-byte pieces, data unchanged', () => {
    const h = harness('slicer', { average_size: 1, size_variation: 0, delay: 0 });
    h.send('0123456789');
    vi.runAllTimers();
    expect(h.out.map((o) => o.data.length)).toEqual(Array(10).fill(1));
    expect(h.bytes().toString()).toBe('0123456789');
  });

  it('480 KB at 1024 ± 512 → hundreds of pieces of at most 1536 bytes, data unchanged', () => {
    let seed = 1;
    const rng = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const h = harness('slicer', { average_size: 1024, size_variation: 512, delay: 0 }, { rng });
    const payload = Buffer.alloc(480_000, 3);
    h.send(payload);
    vi.runAllTimers();
    expect(h.out.length).toBeGreaterThanOrEqual(240);
    expect(h.out.length).toBeLessThanOrEqual(960);
    expect(Math.max(...h.out.map((o) => o.data.length))).toBeLessThanOrEqual(1536);
    expect(h.bytes().equals(payload)).toBe(true);
  });

  it('delay is in microseconds: 4 pieces × 2500 µs take 10 ms', () => {
    const h = harness('slicer', { average_size: 1, size_variation: 0, delay: 2500 });
    h.send('abcd');
    expect(h.out.length).toBe(1);
    vi.advanceTimersByTime(10);
    expect(h.out.length).toBe(4);
  });
});

describe('limit_data', () => {
  it('4 × 25 bytes with a 100-byte limit: all pass, then EOF', () => {
    const h = harness('limit_data', { bytes: 100 });
    for (let i = 0; i < 4; i++) h.send(Buffer.alloc(25));
    expect(h.bytes().length).toBe(100);
    expect(h.eofAt).toBeDefined();
  });

  it('90 + 20 with a 100-byte limit → 90 + 10, the rest dropped, then EOF', () => {
    const h = harness('limit_data', { bytes: 100 });
    h.send(Buffer.alloc(90));
    expect(h.eofAt).toBeUndefined();
    h.send(Buffer.alloc(20));
    expect(h.out.map((o) => o.data.length)).toEqual([90, 10]);
    expect(h.released).toBe(10);
    expect(h.eofAt).toBeDefined();
    h.send(Buffer.alloc(5));
    expect(h.bytes().length).toBe(100);
  });

  it('limit 0 closes on the first chunk and forwards nothing', () => {
    const h = harness('limit_data', { bytes: 0 });
    expect(h.eofAt).toBeUndefined();
    h.send('x');
    expect(h.out).toEqual([]);
    expect(h.eofAt).toBeDefined();
  });

  it('the count survives an update (re-run)', () => {
    const h = harness('limit_data', { bytes: 100 });
    h.send(Buffer.alloc(60));
    h.stage.run({ attributes: { bytes: 100 }, toxicity: 1 });
    h.send(Buffer.alloc(60));
    expect(h.bytes().length).toBe(100);
    expect(h.eofAt).toBeDefined();
  });
});

describe('bandwidth', () => {
  it('480 KB at 1000 KB/s: 100 KB pieces every 100 ms, the last 80 KB at 480 ms', () => {
    const h = harness('bandwidth', { rate: 1000 });
    const t0 = Date.now();
    h.send(Buffer.alloc(480_000));
    vi.runAllTimers();
    expect(h.out.map((o) => o.data.length)).toEqual([100_000, 100_000, 100_000, 100_000, 80_000]);
    expect(h.out.map((o) => o.t - t0)).toEqual([100, 200, 300, 400, 480]);
  });

  it('rate 0 holds data (no timer) until the toxic is updated', () => {
    const h = harness('bandwidth', { rate: 0 });
    h.send('held');
    h.eof();
    expect(h.host.timers.armed).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(h.out).toEqual([]);
    h.stage.run({ attributes: { rate: 1000 }, toxicity: 1 });
    vi.runAllTimers();
    expect(h.bytes().toString()).toBe('held');
    expect(h.eofAt).toBeDefined();
  });
});

describe('latency', () => {
  it('jitter never reorders: each chunk leaves in order, no earlier than latency − jitter after its read', () => {
    let i = 0;
    const rolls = [0.99, 0.0, 0.5, 0.99, 0.01];
    const h = harness('latency', { latency: 100, jitter: 50 }, { rng: () => rolls[i++ % rolls.length]! });
    const sentAt: number[] = [];
    for (let k = 0; k < 20; k++) {
      sentAt.push(Date.now());
      h.send(String.fromCharCode(65 + k));
      vi.advanceTimersByTime(7);
    }
    vi.runAllTimers();
    expect(h.bytes().toString()).toBe('ABCDEFGHIJKLMNOPQRST');
    h.out.forEach((o, k) => expect(o.t - sentAt[k]!).toBeGreaterThanOrEqual(50));
    for (let k = 1; k < h.out.length; k++) expect(h.out[k]!.t).toBeGreaterThanOrEqual(h.out[k - 1]!.t);
  });

  it('removal hands back held chunks in order and disarms its timer', () => {
    const h = harness('latency', { latency: 1000, jitter: 0 });
    h.send('a');
    h.send('b');
    expect(h.host.timers.armed).toBe(1);
    const { held, close } = h.stage.remove();
    expect(close).toBe(false);
    expect(held.map((x) => (x === EOF ? 'EOF' : x.data.toString()))).toEqual(['a', 'b']);
    expect(h.host.timers.armed).toBe(0);
  });
});

describe('toxicity, timeout, reset_peer, slow_close', () => {
  it('a losing roll (rng ≥ toxicity) makes the toxic a pass-through; an update re-rolls', () => {
    let roll = 0.7;
    const h = harness('latency', { latency: 1000, jitter: 0 }, { toxicity: 0.5, rng: () => roll });
    expect(h.stage.active).toBe(false);
    h.send('now');
    expect(h.bytes().toString()).toBe('now');
    roll = 0.2;
    h.stage.run({ attributes: { latency: 1000, jitter: 0 }, toxicity: 0.5 });
    expect(h.stage.active).toBe(true);
  });

  it('timeout drops data and closes after its timeout; removal asks the link to close', () => {
    const h = harness('timeout', { timeout: 200 });
    h.send('lost');
    expect(h.released).toBe(4);
    vi.advanceTimersByTime(199);
    expect(h.eofAt).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(h.eofAt).toBeDefined();
    const zero = harness('timeout', { timeout: 0 });
    expect(zero.host.timers.armed).toBe(0);
    expect(zero.stage.remove().close).toBe(true);
  });

  it('timeout restarts its timer on every chunk: it closes `timeout` ms after the last one', () => {
    const h = harness('timeout', { timeout: 400 });
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) {
      h.send('tick');
      vi.advanceTimersByTime(100);
    }
    // Last chunk at t0+400; a timer that did not restart would have fired at t0+400.
    expect(h.eofAt).toBeUndefined();
    vi.advanceTimersByTime(299);
    expect(h.eofAt).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(h.eofAt! - t0).toBe(800);
  });

  it('reset_peer fires `timeout` ms after the first chunk, and an update does not cancel it', () => {
    const h = harness('reset_peer', { timeout: 100 });
    vi.advanceTimersByTime(500);
    expect(h.resets).toBe(0);
    h.send('boom');
    h.stage.run({ attributes: { timeout: 5000 }, toxicity: 1 });
    vi.advanceTimersByTime(100);
    expect(h.resets).toBe(1);
    expect(h.out).toEqual([]);
  });

  it('slow_close passes data at once and delays only the EOF', () => {
    const h = harness('slow_close', { delay: 300 });
    const t0 = Date.now();
    h.send('data');
    h.eof();
    expect(h.bytes().toString()).toBe('data');
    vi.runAllTimers();
    expect(h.eofAt! - t0).toBe(300);
  });
});

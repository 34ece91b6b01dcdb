import { backoffWithJitter } from '@anycable/core';
import { Manager, type Socket } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import { childRng, mulberry32 } from '../../lib/rng.ts';
import { reconnectStrategyFor } from './anycable.ts';
import { socketIoBackoff } from './reconnect.ts';
import { backo2Duration, reconnectRng, seededBackoffWithJitter, seedSocketIoBackoff } from './seeded-jitter.ts';
import { socketIoCsrTarget } from './socketio.ts';

type Backoff = { attempts: number; duration(): number; reset(): void };
const backoffOf = (m: unknown) => (m as { backoff: Backoff }).backoff;

/** Run `fn` with Math.random replaced by a seeded stream: the libraries' own code, one known draw sequence. */
function withMathRandom<T>(rng: () => number, fn: () => T): T {
  const orig = Math.random;
  Math.random = rng;
  try {
    return fn();
  } finally {
    Math.random = orig;
  }
}

/** `n` successive reconnect delays (attempt 0, 1, ...) from a Manager's backoff, as its reconnect loop draws them. */
const draws = (b: Backoff, n: number) => Array.from({ length: n }, () => b.duration());

describe('reconnect jitter drawn from the run seed', () => {
  it('one stream per (seed, client), apart from the drop-schedule stream', () => {
    const take = (r: () => number) => Array.from({ length: 5 }, r);
    const a = take(reconnectRng(77, 3));
    expect(take(reconnectRng(77, 3))).toEqual(a);
    expect(take(reconnectRng(77, 4))).not.toEqual(a);
    expect(take(reconnectRng(78, 3))).not.toEqual(a);
    expect(take(childRng(77, 3))).not.toEqual(a);
  });

  it('socket.io-client: a seeded Manager draws exactly what the library draws from the same random sequence', () => {
    for (const strategy of ['default', 'tuned']) {
      const opts = { autoConnect: false, ...socketIoBackoff(strategy) };
      const lib = new Manager('http://127.0.0.1:1', opts);
      const expected = withMathRandom(mulberry32(11), () => draws(backoffOf(lib), 8));
      const seeded = new Manager('http://127.0.0.1:1', opts);
      seedSocketIoBackoff(seeded, mulberry32(11));
      expect(draws(backoffOf(seeded), 8), strategy).toEqual(expected);
      // Reset after a successful reconnect starts again at attempt 0 but keeps drawing from the stream.
      backoffOf(seeded).reset();
      expect(backoffOf(seeded).attempts).toBe(0);
      const ninth = mulberry32(11);
      for (let k = 0; k < 8; k++) ninth();
      const first = { ms: opts.reconnectionDelay, max: opts.reconnectionDelayMax, factor: 2, jitter: opts.randomizationFactor, attempts: 0 };
      expect(backoffOf(seeded).duration()).toBe(backo2Duration(first, ninth));
    }
  });

  it('socket.io-client: refuses a Manager without the backoff it knows', () => {
    expect(() => seedSocketIoBackoff({}, mulberry32(1))).toThrow(expect.objectContaining({ code: 'RR_ERR_INTERNAL' }));
  });

  it('the CSR adapter seeds its Manager from reconnectRng: same seed and client, same schedule', () => {
    const schedule = (rng?: () => number) => {
      // Port 1 refuses: the Manager exists (and retries) without a server; we only draw from its backoff.
      const c = socketIoCsrTarget.createClient({ index: 0, url: 'http://127.0.0.1:1', stream: 's', reconnectStrategy: 'tuned', ...(rng ? { reconnectRng: rng } : {}) });
      void c.connect().catch(() => {});
      const b = backoffOf((c as unknown as { socket: Socket }).socket.io);
      b.reset();
      const d = draws(b, 6);
      c.close();
      return d;
    };
    const a = schedule(reconnectRng(77, 0));
    expect(schedule(reconnectRng(77, 0))).toEqual(a);
    expect(schedule(reconnectRng(77, 1))).not.toEqual(a);
    // Without a stream the library's Math.random decides: two clients differ.
    expect(schedule()).not.toEqual(schedule());
  });

  it("@anycable/core: the seeded default strategy is the library's backoffWithJitter on the same random sequence", () => {
    const lib = backoffWithJitter(3000);
    const expected = withMathRandom(mulberry32(5), () => [0, 1, 2, 3, 0, 4].map((k) => lib(k)));
    const seeded = seededBackoffWithJitter(3000, mulberry32(5));
    expect([0, 1, 2, 3, 0, 4].map((k) => seeded(k))).toEqual(expected);
    const capped = backoffWithJitter(500, { backoffRate: 3, jitterRatio: 0.2, maxInterval: 4000 });
    const exp2 = withMathRandom(mulberry32(6), () => [0, 1, 2, 3].map((k) => capped(k)));
    expect([0, 1, 2, 3].map(seededBackoffWithJitter(500, mulberry32(6), { backoffRate: 3, jitterRatio: 0.2, maxInterval: 4000 }))).toEqual(exp2);
  });

  it('the AnyCable adapter picks the seeded strategy for default and tuned, the library one without a stream', () => {
    const seq = (f: ((k: number) => number) | undefined) => [0, 1, 2].map((k) => f!(k));
    expect(reconnectStrategyFor('default')).toBeUndefined();
    expect(seq(reconnectStrategyFor('default', reconnectRng(9, 2)))).toEqual(seq(seededBackoffWithJitter(3000, reconnectRng(9, 2))));
    expect(seq(reconnectStrategyFor('default', reconnectRng(9, 2), 1000))).toEqual(seq(seededBackoffWithJitter(1000, reconnectRng(9, 2))));
    const tuned = seq(reconnectStrategyFor('tuned', reconnectRng(9, 2)));
    expect(seq(reconnectStrategyFor('tuned', reconnectRng(9, 2)))).toEqual(tuned);
    expect(tuned.every((d, k) => d >= 0 && d < 500 * 2 ** k)).toBe(true);
  });
});

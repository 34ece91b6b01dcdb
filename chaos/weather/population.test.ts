import { describe, expect, it } from 'vitest';
import { ReboundError } from '../../lib/errors.ts';
import { CATALOG } from '../plans/catalog.ts';
import { CONDITIONS, OUTLIVE_MS, SLEEP_MS, WEATHER } from './conditions.ts';
import { dealWeather, parseWeather, planWeather, SUB_PROXIES, weatherCounts } from './population.ts';

const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err instanceof ReboundError ? `${err.code} ${err.statusCode}: ${err.message}` : String(err);
  }
  return 'no error';
};

describe('weather population', () => {
  it.each([
    ['good-wifi:60,snow:40', /RR_ERR_WEATHER_INVALID 400: unknown weather condition "snow"; conditions: good-wifi, congested-wifi, lte, 3g, mobile-handover, subway, laptop-sleep, deploy/],
    ['good-wifi:60,lte:30', /RR_ERR_WEATHER_INVALID 400: weather shares sum to 90, not 100/],
    ['good-wifi:60,lte:50', /sum to 110, not 100/],
    ['good-wifi=60,lte:40', /RR_ERR_WEATHER_INVALID 400: malformed weather share "good-wifi=60"/],
    ['good-wifi:60.5,lte:39.5', /malformed weather share/],
    ['good-wifi:,lte:100', /malformed weather share/],
    ['good-wifi:0,lte:100', /share of good-wifi is 0: give 1-100/],
    ['lte:50,lte:50', /lte given twice/],
  ])('%s is refused before anything starts', (spec, msg) => {
    expect(codeOf(() => parseWeather(spec))).toMatch(msg);
  });

  it('parses shares; empty means no weather', () => {
    expect(parseWeather('')).toEqual([]);
    expect(parseWeather('good-wifi:60, lte:30 ,subway:10')).toEqual([
      { condition: 'good-wifi', share: 60 },
      { condition: 'lte', share: 30 },
      { condition: 'subway', share: 10 },
    ]);
  });

  it('deals by share, seeded: one seed one deal, counts within one client of the share and adding up', () => {
    const shares = parseWeather('good-wifi:50,subway:30,laptop-sleep:20');
    const a = dealWeather(shares, 101, 7);
    expect(dealWeather(shares, 101, 7)).toEqual(a);
    expect(dealWeather(shares, 101, 8)).not.toEqual(a);
    const counts = [0, 1, 2].map((c) => a.filter((x) => x === c).length);
    expect(counts).toEqual(weatherCounts(shares, 101));
    expect(counts).toEqual([51, 30, 20]); // 50.5 -> the largest remainder gets the spare client
    // Shuffled, not in client order: the first 51 clients are not all good-wifi.
    expect(new Set(a.slice(0, 51)).size).toBeGreaterThan(1);
  });

  it('every shard (or worker) slice gets the same mix: its own deal over its own clients, each count within one client of its share', () => {
    const shares = parseWeather('good-wifi:60,lte:30,subway:10');
    for (const n of [10, 333, 1000, 7]) {
      const counts = weatherCounts(shares, n);
      expect(counts.reduce((x, y) => x + y, 0)).toBe(n);
      counts.forEach((k, c) => expect(Math.abs(k - (n * shares[c]!.share) / 100)).toBeLessThan(1));
    }
  });

  it('gives each condition its own proxies (two, phase-shifted) and puts each client behind one of its own condition', () => {
    const shares = parseWeather('good-wifi:50,subway:30,laptop-sleep:20');
    const p = planWeather({ shares, seed: 3, clients: 20, windowMs: 600_000, scale: 1 });
    expect(p.groupCondition).toEqual([0, 0, 1, 1, 2, 2]);
    p.deal.forEach((c, i) => expect(p.groupCondition[p.groupOf[i]!]).toBe(c));
    // One client: one proxy.
    expect(planWeather({ shares: parseWeather('lte:100'), seed: 3, clients: 1, windowMs: 60_000, scale: 1 }).groupCondition).toEqual([0]);
    expect(SUB_PROXIES).toBe(2);
    // Each proxy holds its base link for the whole window.
    for (let g = 0; g < 6; g++) expect(p.steps.filter((s) => s.target === g && s.atMs === 0 && s.kind === 'link' && s.toxics?.[0]?.name === 'rr_w_base_lat_down')).toHaveLength(1);
    // Subway: tunnels (blackholes) of 20-60 s, 60-120 s apart, on a different phase per proxy.
    const tunnels = (g: number) => p.steps.filter((s) => s.target === g && s.kind === 'blackhole');
    for (const g of [2, 3]) {
      const t = tunnels(g);
      expect(t.length).toBeGreaterThanOrEqual(3);
      for (const s of t) expect(s.durationMs).toBeGreaterThanOrEqual(20_000), expect(s.durationMs).toBeLessThanOrEqual(60_000);
      for (let k = 1; k < t.length; k++) expect(t[k]!.atMs - t[k - 1]!.atMs - t[k - 1]!.durationMs).toBeGreaterThanOrEqual(60_000 - 1);
    }
    expect(tunnels(2)[0]!.atMs).not.toBe(tunnels(3)[0]!.atMs);
    // Laptop sleep: once, longer than the targets' default session/history lifetimes.
    for (const g of [4, 5]) {
      const sleep = p.steps.filter((s) => s.target === g && s.kind === 'blackhole');
      expect(sleep).toHaveLength(1);
      expect(sleep[0]!.durationMs).toBe(SLEEP_MS);
      expect(SLEEP_MS).toBeGreaterThan(OUTLIVE_MS);
    }
  });

  it('the time scale shrinks every spell (start, length, gap) alike; the same seed gives the same time line', () => {
    const shares = parseWeather('laptop-sleep:50,mobile-handover:50');
    const full = planWeather({ shares, seed: 9, clients: 4, windowMs: 10_000_000, scale: 1 });
    const small = planWeather({ shares, seed: 9, clients: 4, windowMs: 100_000, scale: 0.01 });
    expect(planWeather({ shares, seed: 9, clients: 4, windowMs: 100_000, scale: 0.01 })).toEqual(small);
    const sleepOf = (p: typeof full) => p.steps.find((s) => s.kind === 'blackhole')!;
    expect(sleepOf(small).durationMs).toBe(Math.round(SLEEP_MS * 0.01));
    expect(Math.abs(sleepOf(small).atMs - sleepOf(full).atMs / 100)).toBeLessThanOrEqual(1);
    // Handovers: resets of 1-3 s (scaled), the plan catalog's own reset.
    const resets = small.steps.filter((s) => s.kind === 'reset');
    expect(resets.length).toBeGreaterThan(10);
    for (const r of resets) expect(r.durationMs).toBeGreaterThanOrEqual(10), expect(r.durationMs).toBeLessThanOrEqual(30);
  });

  it('every condition is documented with its source, and its outages are plan-catalog kinds the proxy applies, or the server event the runner performs', () => {
    for (const c of CONDITIONS) {
      const d = WEATHER[c];
      expect(d.source.length, c).toBeGreaterThan(10);
      for (const s of d.spells) expect(s.kind === 'link' ? s.link : CATALOG[s.kind].apply ?? CATALOG[s.kind].serverEvent, `${c} ${s.kind}`).toBeDefined();
    }
  });

  it('a server event (deploy\'s restart) is planned once for the whole run, however many proxies its condition has', () => {
    const p = planWeather({ shares: parseWeather('good-wifi:50,deploy:50'), seed: 9, clients: 40, windowMs: 120_000, scale: 1 });
    expect(p.groupCondition.filter((c) => c === 1)).toHaveLength(2);
    const restarts = p.steps.filter((s) => s.kind === 'restart');
    expect(restarts).toHaveLength(1);
    expect(restarts[0]!.atMs).toBeGreaterThanOrEqual(10_000);
    expect(restarts[0]!.atMs).toBeLessThanOrEqual(30_000);
  });
});

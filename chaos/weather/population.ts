import { ReboundError } from '../../lib/errors.ts';
import { childRng, uniform } from '../../lib/rng.ts';
import { saltedRng, type PlanStep } from '../plans/schedule.ts';
import { CATALOG } from '../plans/catalog.ts';
import { CONDITIONS, linkToxics, WEATHER, type ConditionName } from './conditions.ts';

/** One condition's share of the clients, %. */
export interface WeatherShare {
  condition: ConditionName;
  share: number;
}

/** Proxies per condition (when it has that many clients): each runs the condition's time line with its own seeded phase, so not every subway rider enters the tunnel at once. */
export const SUB_PROXIES = 2;

const bad = (message: string) => new ReboundError('RR_ERR_WEATHER_INVALID', message, { details: { option: 'weather' } });

/**
 * `good-wifi:60,lte:30,subway:10` -> shares; '' -> none (no weather). Integer shares of 1-100,
 * each condition once, summing to 100: every rule a coded error before anything starts.
 */
export function parseWeather(spec: string): WeatherShare[] {
  if (spec.trim() === '') return [];
  const out: WeatherShare[] = [];
  for (const part of spec.split(',')) {
    const m = /^\s*([a-z0-9-]+)\s*:\s*(\d{1,3})\s*$/.exec(part);
    if (!m) throw bad(`malformed weather share ${JSON.stringify(part.slice(0, 64))}: expected <condition>:<percent>, e.g. good-wifi:60,lte:40`);
    const condition = m[1]!;
    if (!(CONDITIONS as readonly string[]).includes(condition)) throw bad(`unknown weather condition "${condition}"; conditions: ${CONDITIONS.join(', ')}`);
    const share = Number(m[2]);
    if (share < 1 || share > 100) throw bad(`weather share of ${condition} is ${share}: give 1-100 %`);
    if (out.some((w) => w.condition === condition)) throw bad(`weather condition ${condition} given twice`);
    out.push({ condition: condition as ConditionName, share });
  }
  const total = out.reduce((n, w) => n + w.share, 0);
  if (total !== 100) throw bad(`weather shares sum to ${total}, not 100 (${spec.trim()})`);
  return out;
}

/**
 * Clients per condition by share, largest remainder first (ties: the order given), so the counts
 * always add up to `clients` and each is within one client of its share.
 */
export function weatherCounts(shares: readonly WeatherShare[], clients: number): number[] {
  const exact = shares.map((w) => (clients * w.share) / 100);
  const counts = exact.map(Math.floor);
  let left = clients - counts.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => ({ i, r: x - Math.floor(x) })).sort((a, b) => b.r - a.r || a.i - b.i);
  for (const { i } of order) {
    if (left-- <= 0) break;
    counts[i]!++;
  }
  return counts;
}

/** The deal: client i's index into `shares`, seeded (one seed, one deal) and shuffled so conditions do not follow client order (connect order, ramp). */
export function dealWeather(shares: readonly WeatherShare[], clients: number, seed: number): number[] {
  const deal = weatherCounts(shares, clients).flatMap((n, c) => new Array<number>(n).fill(c));
  const rng = childRng(seed ^ 0x3e47_11a5, 0);
  for (let i = deal.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [deal[i], deal[j]] = [deal[j]!, deal[i]!];
  }
  return deal;
}

export interface WeatherPlan {
  shares: WeatherShare[];
  /** Client i's condition (index into shares). */
  deal: number[];
  /** Proxy group of client i. */
  groupOf: number[];
  /** Condition (index into shares) of each proxy group. */
  groupCondition: number[];
  /** Every weather step (group scope), unsorted. */
  steps: PlanStep[];
}

export interface WeatherInput {
  shares: WeatherShare[];
  seed: number;
  clients: number;
  /** The drop window (ms from publishing's start): base links are held for it, spells start inside it. */
  windowMs: number;
  /** Every spell's times are multiplied by this (tests: 0.01 makes laptop-sleep's 6 min 3.6 s). */
  scale: number;
}

/**
 * The population's weather: the deal, one to SUB_PROXIES proxies per condition, and each proxy's
 * seeded time line: its base link for the whole window, then its spells. A condition's stream is
 * salted by its index in CONDITIONS and each proxy draws its own, so adding a condition to the mix
 * leaves the others' time lines unchanged.
 */
export function planWeather(input: WeatherInput): WeatherPlan {
  const { shares, seed, clients, windowMs, scale } = input;
  const deal = dealWeather(shares, clients, seed);
  const counts = weatherCounts(shares, clients);
  const subs = counts.map((n) => Math.min(SUB_PROXIES, n));
  const firstGroup = subs.map((_, c) => subs.slice(0, c).reduce((a, b) => a + b, 0));
  const rank = new Array<number>(shares.length).fill(0);
  const groupOf = deal.map((c) => firstGroup[c]! + (rank[c]!++ % subs[c]!));
  const groupCondition = subs.flatMap((n, c) => new Array<number>(n).fill(c));
  const steps: PlanStep[] = [];
  groupCondition.forEach((c, g) => {
    const def = WEATHER[shares[c]!.condition];
    steps.push({ kind: 'link', scope: 'group', target: g, atMs: 0, durationMs: windowMs, toxics: linkToxics(def.base, 'base') });
    def.spells.forEach((sp, k) => {
      // A server event (deploy's restart) happens once for the whole target: on the condition's first proxy only.
      if (CATALOG[sp.kind].serverEvent && groupCondition.indexOf(c) !== g) return;
      const rng = saltedRng(seed, CONDITIONS.indexOf(shares[c]!.condition) * 8 + k + 1, g);
      let t = uniform(rng, sp.firstMs[0], sp.firstMs[1]) * scale;
      // Bounded like buildSchedule's series: at most one spell per 0.5 s of window.
      for (let n = 0; t < windowMs && n < windowMs / 500 + 1; n++) {
        const durationMs = Math.max(1, Math.round(uniform(rng, sp.lastsMs[0], sp.lastsMs[1]) * scale));
        steps.push({ kind: sp.kind, scope: 'group', target: g, atMs: Math.round(t), durationMs, ...(sp.link ? { toxics: linkToxics(sp.link, `s${k}_${n}`) } : {}) });
        if (!sp.gapMs) break;
        t += durationMs + uniform(rng, sp.gapMs[0], sp.gapMs[1]) * scale;
      }
    });
  });
  return { shares, deal, groupOf, groupCondition, steps };
}

/** The longest a spell of these conditions can last at this scale (a run's plan must leave room for one starting as the window closes). */
export const longestSpellMs = (shares: readonly WeatherShare[], scale: number): number =>
  Math.max(0, ...shares.flatMap((w) => WEATHER[w.condition].spells.map((s) => Math.round(s.lastsMs[1] * scale))));

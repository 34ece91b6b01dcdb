/**
 * Seeded randomness. mulberry32 is tiny, fast and good enough for scheduling jitter; what matters
 * is that one seed always yields one timeline. Each client gets its own stream derived from
 * (seed, clientIndex) so the timeline does not depend on the order events happen to fire in.
 */
export type Rng = () => number;

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Derive an independent stream for `index` from `seed` (splitmix-style scrambling). */
export function childRng(seed: number, index: number): Rng {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b9)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return mulberry32((h ^ (h >>> 16)) >>> 0);
}

export function uniform(rng: Rng, lo: number, hi: number): number {
  return lo + (hi - lo) * rng();
}

export function randomSeed(): number {
  return (Math.random() * 0x7fffffff) >>> 0;
}

import { childRng, uniform } from '../../lib/rng.ts';
import type { ToxicSpec } from '../toxiproxy/client.ts';
import { CATALOG, DISRUPTIONS, type DisruptionDefinition, type DisruptionKind } from './catalog.ts';

/**
 * Seeded chaos schedules, computed before the run so one seed always yields one timeline, for
 * every target alike. Each disruption (per client for drops, per proxy group otherwise) starts at
 * 5 s + U(0, J) after publishing starts and repeats every duration + J + U(0, 5) s while messages
 * are still being published (drops: every J + U(0, 5) s, the benchmark's shape).
 */
export function planDrops(seed: number, clients: number, jitterSec: number, windowMs: number): number[][] {
  return Array.from({ length: clients }, (_, c) => series(childRng(seed, c), jitterSec, 0, windowMs));
}

function series(rng: () => number, jitterSec: number, durationMs: number, windowMs: number): number[] {
  const times: number[] = [];
  if (jitterSec <= 0) return times;
  let t = 5000 + uniform(rng, 0, jitterSec * 1000);
  // Bounded: at most one disruption per 0.5 s of window, whatever the options.
  while (t < windowMs && times.length < windowMs / 500 + 1) {
    times.push(Math.round(t));
    t += durationMs + jitterSec * 1000 + uniform(rng, 0, 5000);
  }
  return times;
}

/** Stream `g` of a seeded time line salted by `index` (a kind's, a weather spell's), so each draws its own. */
export const saltedRng = (seed: number, index: number, g: number) => childRng(seed ^ Math.imul(index, 0x5bd1e995), g);

export interface PlanStep {
  kind: DisruptionKind;
  scope: DisruptionDefinition['scope'];
  /** Client index (scope client) or proxy group index (scope group). */
  target: number;
  /** ms after publishing starts. */
  atMs: number;
  durationMs: number;
  /** The step's own toxics (weather link shapes), in place of its kind's catalog apply. */
  toxics?: (ToxicSpec & { name: string })[];
}

export interface ScheduleInput {
  seed: number;
  kinds: readonly DisruptionKind[];
  clients: number;
  groups: number;
  jitterSec: number;
  windowMs: number;
  /** Per-kind duration overrides, ms. */
  durations?: Partial<Record<DisruptionKind, number>>;
}

/** Every step of a plan, sorted by time. Each kind draws from its own seeded stream, so adding one to a plan leaves the others' timelines unchanged. */
export function buildSchedule(input: ScheduleInput): PlanStep[] {
  const steps: PlanStep[] = [];
  for (const kind of input.kinds) {
    const def = CATALOG[kind];
    const durationMs = input.durations?.[kind] ?? def.defaultDurationMs;
    if (def.scope === 'client') {
      planDrops(input.seed, input.clients, input.jitterSec, input.windowMs).forEach((times, c) => {
        for (const atMs of times) steps.push({ kind, scope: 'client', target: c, atMs, durationMs });
      });
    } else {
      for (let g = 0; g < input.groups; g++) {
        for (const atMs of series(saltedRng(input.seed, DISRUPTIONS.indexOf(kind) + 1, g), input.jitterSec, durationMs, input.windowMs)) {
          steps.push({ kind, scope: 'group', target: g, atMs, durationMs });
        }
      }
    }
  }
  return steps.sort((a, b) => a.atMs - b.atMs || a.target - b.target);
}

/** One executed disruption, saved with the results. Times are ms since publishing started. */
export interface ChaosEvent extends Omit<PlanStep, 'atMs'> {
  /** When the seeded plan put it (identical for every target run with the same seed). */
  plannedAtMs: number;
  /** When it actually happened. */
  atMs: number;
  /** False when nothing could be disrupted (drop: the client had no live socket; group: the proxy call failed). */
  applied: boolean;
  /** When the disruption was lifted (group disruptions). */
  endedAtMs?: number;
  /** Drops: when the client was subscribed again, and whether the server restored its session. */
  reconnectedAtMs?: number;
  resumed?: boolean;
  /** A restart (server event): how long the target was not serving, when the runner knows it (null for a command or hook). */
  serverDownMs?: number | null;
  error?: string;
}

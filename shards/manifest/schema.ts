import { readFileSync } from 'node:fs';
import { ReboundError } from '../../lib/errors.ts';
import { parseOptions, type OptionTable } from '../../lib/options.ts';
import { TEST_TABLES } from '../coordinator/options.ts';
import { isObj } from '../merge/types.ts';

const CATEGORIES = ['latency', 'jitter', 'whispers', 'throughput', 'idle', 'avalanche'] as const;
type Category = (typeof CATEGORIES)[number];

/** One judged field of a result, by dotted path (`deliveryRatePct`, `latencyOverMinMs.p99`). */
export interface BaselineSpec {
  /** The baseline value; null until the first `--update`. */
  value: number | string | null;
  direction: 'higher' | 'lower';
  /** Drift when the measured value is this many percent worse than the baseline (default: the test's). */
  driftThresholdPct?: number;
  /** Regress when the measured value is past this absolute value in the bad direction. */
  hardThreshold?: number;
  /** The baseline's own runs (values and run ids), written by --update: what --repeat judges against. */
  samples?: number[];
  runIds?: string[];
  updatedAt?: string;
}

/** A canonical test: the benchmark's TestSpec names where they exist, plus direction and hard threshold. */
export interface TestSpec {
  id: string;
  description?: string;
  category: Category;
  /** Rebound runner (`POST /bench-<runner>-<target>`). */
  runner: string;
  target: string;
  /** Query / CLI params; `seed` is required so reruns replay the same timeline. */
  params: Record<string, string | number | boolean>;
  baseline: Record<string, BaselineSpec>;
  driftThresholdPct?: number;
  /** Multi-shard tests (idle): shards and clients per shard when run against SHARDS. */
  numShards?: number;
  perShardN?: number;
}

export interface Manifest {
  version: 1;
  description?: string;
  tests: TestSpec[];
}

export const DEFAULT_DRIFT_PCT = 5;

const bad = (where: string, why: string) => new ReboundError('RR_ERR_MANIFEST_INVALID', `${where}: ${why}`, { details: { where } });

/** Check a parsed manifest against the schema; every message names the test id and the field. */
export function validateManifest(raw: unknown, file = 'manifest'): Manifest {
  if (!isObj(raw)) throw bad(file, 'must be a JSON object with "version": 1 and "tests": [...]');
  if (raw.version !== 1) throw bad(file, `"version" must be 1 (got ${JSON.stringify(raw.version)})`);
  if (!Array.isArray(raw.tests) || raw.tests.length === 0) throw bad(file, '"tests" must be a non-empty array');
  const ids = new Set<string>();
  raw.tests.forEach((t, i) => {
    const at = `${file} tests[${i}]${isObj(t) && typeof t.id === 'string' ? ` (${t.id})` : ''}`;
    if (!isObj(t)) throw bad(at, 'must be an object');
    if (typeof t.id !== 'string' || !/^[a-z0-9][a-z0-9._-]{0,99}$/.test(t.id)) throw bad(at, '"id" must match [a-z0-9][a-z0-9._-]* (it names result files)');
    if (ids.has(t.id)) throw bad(at, `duplicate id "${t.id}"`);
    ids.add(t.id);
    if (!CATEGORIES.includes(t.category as Category)) throw bad(at, `"category" must be one of ${CATEGORIES.join(', ')}`);
    if (typeof t.runner !== 'string' || !/^[a-z-]+$/.test(t.runner)) throw bad(at, '"runner" must be a runner name (jitter, idle, latency, ...)');
    if (typeof t.target !== 'string' || !/^[a-z0-9-]+$/.test(t.target)) throw bad(at, '"target" must be a target name');
    if (!isObj(t.params)) throw bad(at, '"params" must be an object');
    for (const [k, v] of Object.entries(t.params)) if (!['string', 'number', 'boolean'].includes(typeof v)) throw bad(`${at}.params.${k}`, 'must be a string, number or boolean');
    const table = TEST_TABLES[t.runner as keyof typeof TEST_TABLES] as OptionTable | undefined;
    // Seeded runners must be given their seed (a canonical test replays one timeline); a runner without randomness has none.
    if ((!table || 'seed' in table) && t.params.seed === undefined) throw bad(`${at}.params`, '"seed" is required: a canonical test replays one timeline');
    if (table) {
      try {
        parseOptions(table, { values: t.params, origin: `manifest ${t.id}` });
      } catch (err) {
        throw bad(`${at}.params`, (err as Error).message);
      }
    }
    if (t.driftThresholdPct !== undefined && !(typeof t.driftThresholdPct === 'number' && t.driftThresholdPct >= 0)) throw bad(at, '"driftThresholdPct" must be a number >= 0');
    for (const k of ['numShards', 'perShardN'] as const) if (t[k] !== undefined && !(Number.isInteger(t[k]) && (t[k] as number) > 0)) throw bad(at, `"${k}" must be a positive integer`);
    if (!isObj(t.baseline) || Object.keys(t.baseline).length === 0) throw bad(at, '"baseline" must map at least one dotted result path to {value, direction, ...}');
    for (const [path, b] of Object.entries(t.baseline)) {
      const bw = `${at}.baseline["${path}"]`;
      if (!/^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/.test(path)) throw bad(bw, 'must be a dotted result path');
      if (!isObj(b)) throw bad(bw, 'must be an object {value, direction, driftThresholdPct?, hardThreshold?}');
      if (!(b.value === null || typeof b.value === 'number' || typeof b.value === 'string')) throw bad(bw, '"value" must be a number, a string or null');
      if (b.direction !== 'higher' && b.direction !== 'lower') throw bad(bw, '"direction" must be "higher" or "lower" (which way is better)');
      if (b.driftThresholdPct !== undefined && !(typeof b.driftThresholdPct === 'number' && b.driftThresholdPct >= 0)) throw bad(bw, '"driftThresholdPct" must be a number >= 0');
      if (b.hardThreshold !== undefined && typeof b.hardThreshold !== 'number') throw bad(bw, '"hardThreshold" must be a number');
      if (b.samples !== undefined && !(Array.isArray(b.samples) && b.samples.every((x) => typeof x === 'number'))) throw bad(bw, '"samples" must be an array of numbers');
    }
  });
  return raw as unknown as Manifest;
}

export function loadManifest(file: string): Manifest {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw bad(file, `cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw bad(file, `not JSON: ${(err as Error).message}`);
  }
  return validateManifest(json, file);
}

type Gates = { filter: string; includeIdle: boolean; includeAvalanche: boolean };

/** The tests FILTER names (each CSV part an id substring, a category or a runner; every test when empty), each with why a gate holds it back. */
function filtered(m: Manifest, o: Gates): { t: TestSpec; why: string | undefined }[] {
  const parts = o.filter.split(',').map((s) => s.trim()).filter(Boolean);
  const hit = (t: TestSpec, p: string) => t.id.includes(p) || t.category === p || t.runner === p;
  const none = parts.filter((p) => !m.tests.some((t) => hit(t, p)));
  if (none.length) {
    throw new ReboundError('RR_ERR_OPTION_INVALID', `FILTER ${none.map((p) => JSON.stringify(p)).join(', ')} matches no test (an id substring, a category or a runner); ids: ${m.tests.map((t) => t.id).join(', ')}`, { details: { option: 'filter' } });
  }
  return m.tests.flatMap((t) => {
    if (!parts.length) return [{ t, why: skipReason(t, o) }];
    // A test FILTER names runs whatever the gates say.
    return parts.some((p) => hit(t, p)) ? [{ t, why: undefined }] : [];
  });
}

/** FILTER's tests that the idle/avalanche gates let through. A part that matches no test is an error listing the ids (a typo never runs 0 tests and exits 0). */
export function selectTests(m: Manifest, o: Gates): TestSpec[] {
  return filtered(m, o).flatMap(({ t, why }) => (why ? [] : [t]));
}

function skipReason(t: TestSpec, o: Omit<Gates, 'filter'>): string | undefined {
  if (t.category === 'idle' && !o.includeIdle) return 'idle tests hold many connections for minutes: set INCLUDE_IDLE=1 or name it in FILTER';
  if (t.category === 'avalanche' && !o.includeAvalanche) return 'avalanche restarts the target: set INCLUDE_AVALANCHE=1 or name it in FILTER';
  return undefined;
}

/** The tests FILTER would have run but the idle/avalanche gates hold back, each with why (DRY_RUN lists them). */
export function skippedTests(m: Manifest, o: Gates): { id: string; why: string }[] {
  return filtered(m, o).flatMap(({ t, why }) => (why ? [{ id: t.id, why }] : []));
}

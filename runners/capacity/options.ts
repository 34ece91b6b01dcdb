import { ReboundError } from '../../lib/errors.ts';
import { parseOptions, type OptionTable, type ParseSources } from '../../lib/options.ts';
import { isAllowedTargetUrl } from '../core/addresses.ts';
import { getTarget } from '../targets/index.ts';
import { SCENARIOS, SCENARIO_IDS } from './scenarios/index.ts';
import type { ScenarioId } from './types.ts';

/**
 * The capacity suite's one option table: the suite's own options plus every scenario module's
 * scale knobs (each module declares them, prefixed by its id). The CLI, env and the runner
 * endpoint all parse through `parseCapacityOptions`.
 */
export const SUITE_OPTIONS = {
  targets: { type: 'string', default: 'replay,ws,socketio', maxLength: 200, pattern: /^[\w-]+(,[\w-]+)*$/, env: ['CAPACITY_TARGETS'], doc: 'targets to measure side by side, comma-separated; ratios are against the first' },
  scenarios: { type: 'string', default: 'S1,S2,S3,S4,S5,S6,sweep', maxLength: 100, pattern: /^[\w-]+(,[\w-]+)*$/, env: ['CAPACITY_SCENARIOS'], doc: `scenarios to run, comma-separated, from ${SCENARIO_IDS.join(', ')} (soak is opt-in: it runs for minutes)` },
  seed: { type: 'int', default: 1, min: 0, max: 2 ** 31 - 1, env: ['SEED'], doc: 'seed for every random choice the scenarios make' },
  url: { type: 'optional-string', default: undefined, env: ['TARGET_URL'], doc: 'base URL of an already running target (CLI only, one target; loopback unless REBOUND_ALLOW_REMOTE_TARGETS=1); default: start each target locally' },
} as const satisfies OptionTable;

/** Every module's options merged into the suite's; a clash of names is a programming error. */
function mergedTable(): OptionTable {
  const out: OptionTable = { ...SUITE_OPTIONS };
  for (const m of SCENARIOS) {
    for (const [k, spec] of Object.entries(m.options ?? {})) {
      if (k in out) throw new Error(`capacity option "${k}" of scenario ${m.id} clashes with another option`);
      out[k] = spec;
    }
  }
  return out;
}

export const CAPACITY_OPTIONS: OptionTable = mergedTable();

export interface CapacityOptions {
  targets: string[];
  scenarios: ScenarioId[];
  seed: number;
  url: string | undefined;
  /** Each selected scenario's parsed options (its module's `parse`). */
  perScenario: Partial<Record<ScenarioId, unknown>>;
  /** Every option's value after parsing (defaults included): what the run echoes as its params. */
  values: Record<string, unknown>;
}

const bad = (option: string, message: string) => new ReboundError('RR_ERR_OPTION_INVALID', message, { details: { option } });

/** `S1,s3` → ['S1', 'S3']: ids are matched case-insensitively, unknown and repeated ones are errors. */
export function parseScenarioList(raw: string): ScenarioId[] {
  const out: ScenarioId[] = [];
  for (const part of raw.split(',')) {
    const id = SCENARIO_IDS.find((s) => s.toLowerCase() === part.trim().toLowerCase());
    if (!id) throw bad('scenarios', `unknown scenario "${part}"; known: ${SCENARIO_IDS.join(', ')}`);
    if (out.includes(id)) throw bad('scenarios', `scenario ${id} is listed twice`);
    out.push(id);
  }
  return out;
}

export function parseTargetList(raw: string): string[] {
  const out: string[] = [];
  for (const name of raw.split(',')) {
    getTarget(name);
    if (out.includes(name)) throw bad('targets', `target "${name}" is listed twice`);
    out.push(name);
  }
  if (out.length > 8) throw bad('targets', `at most 8 targets side by side (got ${out.length})`);
  return out;
}

/** Validate everything at the edge: lists, targets, the URL, then each selected scenario's own rules. */
export function parseCapacityOptions(src: ParseSources, table: OptionTable = CAPACITY_OPTIONS): CapacityOptions {
  const v = parseOptions(table, src) as Record<string, unknown>;
  const targets = parseTargetList(String(v.targets));
  const scenarios = parseScenarioList(String(v.scenarios));
  const url = v.url as string | undefined;
  if (url !== undefined) {
    if (!isAllowedTargetUrl(url)) throw bad('url', `url must be a loopback URL unless REBOUND_ALLOW_REMOTE_TARGETS=1; got ${JSON.stringify(url)}`);
    if (targets.length !== 1) throw bad('url', `url names one running target, so targets must list exactly one (got ${targets.join(',')})`);
  } else {
    for (const t of targets) {
      if (!getTarget(t).service) throw new ReboundError('RR_ERR_TARGET_NOT_CONFIGURED', `target "${t}" has no local service: pass --url with it alone`, { details: { target: t } });
      if (getTarget(t).needsRedis && !process.env.REDIS_URL) throw new ReboundError('RR_ERR_TARGET_NOT_CONFIGURED', `target "${t}" needs a Redis at REDIS_URL`, { details: { target: t } });
    }
  }
  const perScenario: Partial<Record<ScenarioId, unknown>> = {};
  for (const id of scenarios) {
    const m = SCENARIOS.find((s) => s.id === id)!;
    const own = Object.fromEntries(Object.keys(m.options ?? {}).map((k) => [k, v[k]]));
    perScenario[id] = m.parse(own);
  }
  return { targets, scenarios, seed: Number(v.seed), url, perScenario, values: { ...v, url: undefined } };
}

import { ReboundError } from '../../lib/errors.ts';
import { parseOptions, type OptionTable, type ParseSources } from '../../lib/options.ts';
import { assertAvailable, checkTargetUrl, getTarget } from '../../engine/targets/index.ts';
import { invalidOption } from './lists.ts';
import { scenarioById, SCENARIOS, SCENARIO_IDS } from './scenarios/index.ts';
import type { BoundScenario, ScenarioId } from './types.ts';

/**
 * The capacity suite's one option table: the suite's own options plus every scenario module's
 * scale knobs (each module declares them, prefixed by its id). The CLI, env and the runner
 * endpoint all parse through `parseCapacityOptions`.
 */
export const SUITE_OPTIONS = {
  targets: { type: 'string', default: 'replay,ws,socketio', maxLength: 200, pattern: /^[\w-]+(:\d+)?(,[\w-]+(:\d+)?)*$/, env: ['CAPACITY_TARGETS'], doc: 'targets to measure side by side, comma-separated; ratios are against the first. `name:K` runs K nodes of a shared-broker target (replay-redis:2) in the loader scenarios (S3, S4, S5, sweep)' },
  scenarios: { type: 'string', default: 'S1,S2,S3,S4,S5,S6,sweep', maxLength: 100, pattern: /^[\w-]+(,[\w-]+)*$/, env: ['CAPACITY_SCENARIOS'], doc: `scenarios to run, comma-separated, from ${SCENARIO_IDS.join(', ')} (soak is opt-in: it runs for minutes)` },
  seed: { type: 'int', default: 1, min: 0, max: 2 ** 31 - 1, env: ['SEED'], doc: 'seed for every random choice the scenarios make' },
  serverWorkers: { type: 'int', default: 0, min: 0, max: 64, env: ['SERVER_WORKERS'], doc: 'targets the suite starts locally (replay, ws, socketio; every scenario but the soak): their --workers (processes behind one port), to go past one process\'s open-file limit or core; 0 = one process. A target that cannot run so (socketio-csr) is refused' },
  url: { type: 'optional-string', default: undefined, env: ['TARGET_URL'], doc: 'base URL of an already running target (CLI only, one target; loopback unless REBOUND_ALLOW_REMOTE_TARGETS=1); default: start each target locally' },
} as const satisfies OptionTable;

/** Every module's options merged into the suite's; a clash of names is a programming error. */
function mergedTable(): OptionTable {
  const out: OptionTable = { ...SUITE_OPTIONS };
  for (const m of SCENARIOS) {
    for (const [k, spec] of Object.entries(m.options)) {
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
  /** --workers for locally started targets in S1, S2, S6 (0 = one process). */
  serverWorkers: number;
  url: string | undefined;
  /** Each selected scenario bound to its typed options from this one parse. */
  perScenario: Partial<Record<ScenarioId, BoundScenario>>;
  /** Every option's value after parsing (defaults included): what the run echoes as its params. */
  values: Record<string, unknown>;
}

/** `S1,s3` → ['S1', 'S3']: ids are matched case-insensitively, unknown and repeated ones are errors. */
export function parseScenarioList(raw: string): ScenarioId[] {
  const out: ScenarioId[] = [];
  for (const part of raw.split(',')) {
    const id = SCENARIO_IDS.find((s) => s.toLowerCase() === part.trim().toLowerCase());
    if (!id) throw invalidOption('scenarios', `unknown scenario "${part}"; known: ${SCENARIO_IDS.join(', ')}`);
    if (out.includes(id)) throw invalidOption('scenarios', `scenario ${id} is listed twice`);
    out.push(id);
  }
  return out;
}

/** Scenarios that start their target through the loader's node set, so `name:K` applies. */
const MULTI_NODE_SCENARIOS: readonly ScenarioId[] = ['S3', 'S4', 'S5', 'sweep'];

/** `replay-redis:2` → { name: 'replay-redis', nodes: 2 }; a bare name is one node. */
export function splitTargetLabel(label: string): { name: string; nodes: number } {
  const m = /^([\w-]+)(?::(\d+))?$/.exec(label);
  if (!m) throw invalidOption('targets', `target "${label}" is not a name or name:K`);
  const nodes = m[2] === undefined ? 1 : Number(m[2]);
  if (nodes < 1 || nodes > 8) throw invalidOption('targets', `target "${label}": K must be 1..8 nodes`);
  return { name: m[1]!, nodes };
}

export function parseTargetList(raw: string): string[] {
  const out: string[] = [];
  for (const label of raw.split(',')) {
    const { name, nodes } = splitTargetLabel(label);
    const t = getTarget(name);
    if (nodes > 1 && !t.needsRedis) throw invalidOption('targets', `target "${label}": several nodes need a shared broker (e.g. replay-redis:2); "${name}" nodes would share nothing`);
    if (out.includes(label)) throw invalidOption('targets', `target "${label}" is listed twice`);
    out.push(label);
  }
  if (out.length > 8) throw invalidOption('targets', `at most 8 targets side by side (got ${out.length})`);
  return out;
}

/** Validate everything at the edge: lists, targets, the URL, then each selected scenario's own rules. */
export function parseCapacityOptions(src: ParseSources): CapacityOptions {
  return checkCapacityOptions(parseOptions(CAPACITY_OPTIONS, src) as Record<string, unknown>);
}

/** Lists, targets, the URL, then each selected scenario's own rules, over values already parsed. */
export function checkCapacityOptions(v: Record<string, unknown>): CapacityOptions {
  const targets = parseTargetList(String(v.targets));
  const scenarios = parseScenarioList(String(v.scenarios));
  const url = v.url as string | undefined;
  if (url !== undefined) {
    checkTargetUrl('url', url);
    if (targets.length !== 1) throw invalidOption('url', `url names one running target, so targets must list exactly one (got ${targets.join(',')})`);
    if (splitTargetLabel(targets[0]!).nodes > 1) throw invalidOption('targets', 'url names one running target: a name:K label starts K local nodes, so it cannot go with url');
  } else {
    for (const t of targets.map((l) => splitTargetLabel(l).name)) {
      if (!getTarget(t).service) throw new ReboundError('RR_ERR_TARGET_NOT_CONFIGURED', `target "${t}" has no local service: pass --url with it alone`, { details: { target: t } });
      // Before anything runs: a local target that cannot run here (uws without its binary) says why.
      assertAvailable(getTarget(t));
      if (getTarget(t).needsRedis && !process.env.REDIS_URL) throw new ReboundError('RR_ERR_TARGET_NOT_CONFIGURED', `target "${t}" needs a Redis at REDIS_URL`, { details: { target: t } });
    }
  }
  const multi = targets.find((l) => splitTargetLabel(l).nodes > 1);
  const single = scenarios.filter((s) => !MULTI_NODE_SCENARIOS.includes(s));
  if (multi && single.length) throw invalidOption('targets', `target "${multi}" runs several nodes, which only ${MULTI_NODE_SCENARIOS.join(', ')} support; drop ${single.join(', ')} or run them in another invocation`);
  const perScenario = Object.fromEntries(scenarios.map((id) => [id, scenarioById(id).bind(v)]));
  const serverWorkers = Number(v.serverWorkers);
  if (serverWorkers > 0 && url !== undefined) throw invalidOption('serverWorkers', 'serverWorkers starts each target locally as --workers N; it cannot go with url');
  if (serverWorkers > 0) {
    // Side by side means alike: one target left as one process would not be comparable.
    const t = targets.map((l) => getTarget(splitTargetLabel(l).name)).find((x) => x.noWorkers);
    if (t) throw invalidOption('serverWorkers', `serverWorkers starts every target with --workers ${serverWorkers}, which "${t.name}" cannot run: ${t.noWorkers}; measure it in another run`);
  }
  return { targets, scenarios, seed: Number(v.seed), serverWorkers, url, perScenario, values: { ...v, url: undefined } };
}

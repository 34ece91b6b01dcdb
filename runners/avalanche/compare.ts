import { ReboundError } from '../../lib/errors.ts';
import { helpText, parseOptions, type OptionTable, type OptionValues } from '../../lib/options.ts';
import { randomSeed } from '../../lib/rng.ts';
import { stamp, writeResults } from '../../engine/measure/result-files.ts';
import { getTarget, localTargets } from '../../engine/targets/index.ts';
import { AVALANCHE_OPTIONS, parseAvalancheOptions } from './options.ts';
import { restartConfigFromEnv } from '../../engine/measure/restart.ts';
import { formatAvalanche } from './table.ts';
import type { AvalancheResult } from './result.ts';
import { runAvalanche } from './run.ts';

const { target: _t, url: _u, broadcastUrl: _b, reconnectStrategy: _r, nodes: _n, workers: _w, ...shared } = AVALANCHE_OPTIONS;

/**
 * Every local target restarted the same way, one after another, same seed: the side-by-side
 * avalanche table. Replay targets use `replayReconnectStrategy` (the issue's goal is the tuned
 * one); the others reconnect as their library does by default.
 */
export const AVALANCHE_COMPARE_OPTIONS = {
  ...shared,
  targets: { type: 'string', default: '', env: ['AVALANCHE_TARGETS'], doc: 'comma-separated targets, each optionally name:K for K nodes (e.g. replay-redis:2,replay); default every local target, one node each' },
  replayReconnectStrategy: { type: 'enum', values: ['default', 'tuned'], default: 'tuned', env: ['AVALANCHE_REPLAY_RECONNECT_STRATEGY'], doc: 'reconnect strategy of replay-protocol targets (the others use their library default)' },
} as const satisfies OptionTable;
export type AvalancheCompareOptions = OptionValues<typeof AVALANCHE_COMPARE_OPTIONS>;

/** The smaller size `npm run bench -- --avalanche` uses by default (env AVALANCHE_* raises it). */
const BENCH_AVALANCHE_OPTIONS = {
  ...AVALANCHE_COMPARE_OPTIONS,
  clients: { ...AVALANCHE_OPTIONS.clients, default: 200, env: ['AVALANCHE_CLIENTS'] },
  publishAfterMs: { ...AVALANCHE_OPTIONS.publishAfterMs, default: 10_000 },
  recoveryTimeoutMs: { ...AVALANCHE_OPTIONS.recoveryTimeoutMs, default: 30_000 },
} as const satisfies OptionTable;

export async function compareAvalanche(o: AvalancheCompareOptions, log: (line: string) => void = (l) => process.stderr.write(l + '\n')): Promise<AvalancheResult[]> {
  const entries = o.targets ? o.targets.split(',').map(parseTargetEntry) : localTargets().map((target) => ({ target, nodes: 1 }));
  for (const { target: t } of entries) if (!t.service) throw new ReboundError('RR_ERR_OPTION_INVALID', `target "${t.name}" has no local service; run it with bench:avalanche --url`, { details: { option: 'targets' } });
  const seed = o.seed || randomSeed();
  const config = restartConfigFromEnv();
  const { targets: _x, replayReconnectStrategy, ...rest } = o;
  const results: AvalancheResult[] = [];
  // Validate every entry before the first run starts: a bad last entry must not cost the runs before it.
  const plan = entries.map(({ target: t, nodes }) => ({ t, opts: parseAvalancheOptions({ values: { ...rest, seed, target: t.name, nodes, reconnectStrategy: t.service?.name === 'replay' ? replayReconnectStrategy : 'default' }, origin: 'option' }, config) }));
  for (const { t, opts } of plan) {
    log(`\n== ${t.name}${opts.nodes > 1 ? ` x${opts.nodes} nodes` : ''}: ${t.description}`);
    const run = runAvalanche(opts, config);
    run.events.on('phase', (name, detail) => log(`[${t.name}] ${name}: ${detail}`));
    results.push(await run.result);
  }
  return results;
}

/** `name` or `name:K` (K nodes of that target). */
export function parseTargetEntry(entry: string): { target: ReturnType<typeof getTarget>; nodes: number } {
  const m = /^\s*([^:\s]+)\s*(?::\s*(\d+)\s*)?$/.exec(entry);
  if (!m) throw new ReboundError('RR_ERR_OPTION_INVALID', `targets entry ${JSON.stringify(entry)} is not name or name:K`, { details: { option: 'targets' } });
  const nodes = m[2] === undefined ? 1 : Number(m[2]);
  if (!(nodes >= 1 && nodes <= AVALANCHE_OPTIONS.nodes.max)) throw new ReboundError('RR_ERR_OPTION_INVALID', `targets entry ${JSON.stringify(entry)}: K must be 1 to ${AVALANCHE_OPTIONS.nodes.max}`, { details: { option: 'targets' } });
  return { target: getTarget(m[1]!), nodes };
}

export const BENCH_AVALANCHE_HELP = `  --avalanche          add the avalanche table (every local target, same seed) after the jitter table; its options come from env only (no flag sets them):\n${helpText(BENCH_AVALANCHE_OPTIONS, { envOnly: true })}`;

/**
 * What `npm run bench -- --avalanche` adds after the jitter table. Options come from env and are
 * validated at once (before the jitter table runs); `run` performs the comparison at bench size,
 * writes its results file and returns the table (nothing in --json mode: the file has it).
 */
export function benchAvalancheTable(): { run(seed: number, json: boolean): Promise<{ ok: boolean; text: string }> } {
  const o = parseOptions(BENCH_AVALANCHE_OPTIONS, { env: process.env, origin: 'env' });
  restartConfigFromEnv();
  return {
    async run(seed, json) {
      const results = await compareAvalanche({ ...o, seed: o.seed || seed });
      const file = await writeResults(`bench-avalanche-${o.restart}-${stamp()}`, results as unknown as Record<string, unknown>[]);
      process.stderr.write(`\navalanche results: ${file}\n`);
      const head = `\nAvalanche comparison, --restart ${o.restart}: ${o.clients} clients, ${o.rate} msg/s, restart after ${o.warmupMs} ms, seed ${o.seed || seed}\n\n`;
      return { ok: results.every((r) => r.validity.valid), text: json ? '' : head + formatAvalanche(results) };
    },
  };
}

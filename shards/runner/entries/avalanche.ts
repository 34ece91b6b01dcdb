import { parseOptions, type OptionTable } from '../../../lib/options.ts';
import { AVALANCHE_OPTIONS, parseAvalancheOptions, restartConfigFromEnv, type AvalancheOptions } from '../../../runners/avalanche/options.ts';
import { runAvalanche } from '../../../runners/avalanche/run.ts';
import { defined } from '../params.ts';
import type { BenchEntry } from '../types.ts';
import { COMPAT_OPTIONS } from './compat.ts';

// The runner starts and restarts local targets itself; URLs, the broadcast key and the restart
// command or hook come from the operator's env only.
const { target: _t, url: _u, broadcastUrl: _b, broadcastKey: _k, ...Q } = AVALANCHE_OPTIONS;
export const AVALANCHE_HTTP_OPTIONS = { ...Q, shard: COMPAT_OPTIONS.shard } as const satisfies OptionTable;

export const avalancheEntry: BenchEntry = {
  test: 'avalanche',
  targets: ['replay', 'socketio', 'socketio-csr', 'ws', 'uws', 'anycable'],
  options: AVALANCHE_HTTP_OPTIONS,
  doc: 'one forced restart of the target (kill, term, rolling, or the operator-configured command/hook) under a fixed publish rate; the reconnect herd and what was lost',
  prepare(values, t) {
    const { shard, ...q } = parseOptions(AVALANCHE_HTTP_OPTIONS, { values, origin: 'query' });
    const config = restartConfigFromEnv();
    const opts = parseAvalancheOptions({ values: defined({ ...q, target: t.definition.name, url: t.url, broadcastUrl: t.broadcastUrl, broadcastKey: t.broadcastKey }), origin: 'query' }, config);
    const { url: _1, broadcastUrl: _2, broadcastKey: _3, ...shown } = opts;
    return {
      opts: { opts, config },
      effectiveParams: defined({ ...shown, target: t.route, targetSource: t.source, shard }),
      plannedMs: Math.ceil((opts.clients * 1000) / opts.ramp) + opts.warmupMs + Math.max(opts.publishAfterMs, opts.recoveryTimeoutMs) + opts.settleMs + 10_000,
    };
  },
  async run(o, _t, ctx) {
    const { opts, config } = o as { opts: AvalancheOptions; config: ReturnType<typeof restartConfigFromEnv> };
    const run = runAvalanche(opts, config, { signal: ctx.signal });
    run.events.on('phase', (name, detail) => {
      ctx.log(`${name}: ${detail}`);
      ctx.progress({ phase: name });
    });
    const r = (await run.result) as unknown as Record<string, unknown>;
    const params = r.params as Record<string, unknown> | undefined;
    return params?.broadcastKey ? { ...r, params: { ...params, broadcastKey: '<redacted>' } } : r;
  },
};

import { parseOptions, type OptionTable } from '../../../lib/options.ts';
import { DEPLOY_IMPACT_OPTIONS, parseDeployImpactOptions, type DeployImpactOptions } from '../../../runners/deploy-impact/options.ts';
import { runDeployImpact } from '../../../runners/deploy-impact/run.ts';
import { defined } from '../params.ts';
import type { BenchEntry } from '../types.ts';
import { COMPAT_OPTIONS } from './compat.ts';

const { target: _t, url: _u, broadcastUrl: _b, broadcastKey: _k, ...Q } = DEPLOY_IMPACT_OPTIONS;
export const DEPLOY_IMPACT_HTTP_OPTIONS = { ...Q, shard: COMPAT_OPTIONS.shard } as const satisfies OptionTable;

export const deployImpactEntry: BenchEntry = {
  test: 'deploy-impact',
  targets: ['replay', 'socketio', 'socketio-csr', 'ws', 'uws', 'anycable'],
  options: DEPLOY_IMPACT_HTTP_OPTIONS,
  doc: 'the publisher process is redeployed (killed and restarted) while clients listen; what the clients missed',
  prepare(values, t) {
    const { shard, ...q } = parseOptions(DEPLOY_IMPACT_HTTP_OPTIONS, { values, origin: 'query' });
    const opts = parseDeployImpactOptions({ values: defined({ ...q, target: t.definition.name, url: t.url, broadcastUrl: t.broadcastUrl, broadcastKey: t.broadcastKey }), origin: 'query' });
    const { url: _1, broadcastUrl: _2, broadcastKey: _3, ...shown } = opts;
    return {
      opts,
      effectiveParams: defined({ ...shown, target: t.route, targetSource: t.source, shard }),
      plannedMs: Math.ceil((opts.clients * 1000) / opts.ramp) + opts.warmupMs + opts.publisherDownMs + opts.publishAfterMs + opts.settleMs + 10_000,
    };
  },
  async run(o, _t, ctx) {
    const run = runDeployImpact(o as DeployImpactOptions, { signal: ctx.signal });
    run.events.on('phase', (name, detail) => {
      ctx.log(`${name}: ${detail}`);
      ctx.progress({ phase: name });
    });
    const r = (await run.result) as unknown as Record<string, unknown>;
    const params = r.params as Record<string, unknown> | undefined;
    return params?.broadcastKey ? { ...r, params: { ...params, broadcastKey: '<redacted>' } } : r;
  },
};

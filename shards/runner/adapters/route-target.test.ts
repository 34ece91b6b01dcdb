import { describe, expect, it } from 'vitest';
import { getTarget } from '../../../engine/targets/index.ts';
import { AVALANCHE_OPTIONS } from '../../../runners/avalanche/options.ts';
import { AVALANCHE_HTTP_OPTIONS } from './avalanche.ts';
import { DEPLOY_IMPACT_HTTP_OPTIONS } from './index.ts';
import { benchEntry } from '../routes.ts';
import { queryOptions, redactBroadcastKey } from './route-target.ts';

const deployImpactEntry = benchEntry('deploy-impact')!;

describe('route-target (what every bench entry shares)', () => {
  it('the query never names the target, its URLs or its broadcast key; the rest of the CLI table stays', () => {
    const q = queryOptions(AVALANCHE_OPTIONS);
    for (const k of ['target', 'url', 'broadcastUrl', 'broadcastKey']) {
      expect(q).not.toHaveProperty(k);
      expect(AVALANCHE_HTTP_OPTIONS).not.toHaveProperty(k);
      expect(DEPLOY_IMPACT_HTTP_OPTIONS).not.toHaveProperty(k);
    }
    expect(Object.keys(q).sort()).toEqual(Object.keys(AVALANCHE_OPTIONS).filter((k) => !['target', 'url', 'broadcastUrl', 'broadcastKey'].includes(k)).sort());
  });

  it("an entry runs on the route's target and echoes neither its URL nor its broadcast key", () => {
    const t = { route: 'uws', definition: getTarget('uws'), source: 'configured' as const, server: 'uws', url: 'http://127.0.0.1:9', broadcastUrl: 'http://127.0.0.1:9/_broadcast', broadcastKey: 'sekret' };
    const p = deployImpactEntry.prepare({ n: '3' }, t);
    expect(p.opts).toMatchObject({ target: 'uws', url: t.url, broadcastUrl: t.broadcastUrl, broadcastKey: 'sekret', clients: 3 });
    expect(p.effectiveParams).toMatchObject({ target: 'uws', targetSource: 'configured', clients: 3 });
    expect(JSON.stringify(p.effectiveParams)).not.toMatch(/sekret|127\.0\.0\.1:9/);
  });

  it('redacts a broadcast key in the result a shard returns, and leaves a result without one as it is', () => {
    expect(redactBroadcastKey({ test: 'x', params: { clients: 3, broadcastKey: 'sekret' } })).toEqual({ test: 'x', params: { clients: 3, broadcastKey: '<redacted>' } });
    expect(redactBroadcastKey({ params: { clients: 1 } })).toEqual({ params: { clients: 1 } });
  });
});

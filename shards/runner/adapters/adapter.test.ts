import { describe, expect, it } from 'vitest';
import { defineModule } from '../../../engine/session/module.ts';
import { RUNNER_MODULES } from '../../../runners/modules.ts';
import { THROUGHPUT_OPTIONS } from '../../../runners/throughput/options.ts';
import { throughputModule } from '../../../runners/throughput/module.ts';
import { moduleEntry } from '../entry.ts';
import { BENCH_TABLE } from '../routes.ts';
import { resolveTarget } from '../targets.ts';
import { ROUTE_TARGETS } from './adapter.ts';
import { HTTP_MODULES, httpAdapterOf } from './index.ts';

describe('HTTP adapters (the runner service adapts modules)', () => {
  it('the routes are the ones the service has always had: soak and sick-redis stay off HTTP', () => {
    expect(BENCH_TABLE.map((e) => e.test)).toEqual(['jitter', 'idle', 'latency', 'throughput', 'whispers', 'avalanche', 'deploy-impact', 'capacity']);
    expect(HTTP_MODULES.map((m) => m.name)).toEqual(BENCH_TABLE.map((e) => e.test));
    for (const name of ['soak', 'sick-redis']) expect(httpAdapterOf(RUNNER_MODULES.find((m) => m.name === name)!)).toBeUndefined();
  });

  it('a module with no adapter of its own is served by the default one: its options less the route-owned names, on the route target', () => {
    const probe = defineModule({ ...throughputModule, name: 'probe-new' });
    const a = httpAdapterOf(probe)!;
    expect(a.targets).toBe(ROUTE_TARGETS);
    expect(Object.keys(a.options).sort()).toEqual(Object.keys(THROUGHPUT_OPTIONS).filter((k) => !['target', 'url', 'broadcastUrl', 'broadcastKey'].includes(k)).sort());
    const t = { ...resolveTarget('ws', {}), url: 'http://127.0.0.1:9', broadcastUrl: 'http://127.0.0.1:9/_broadcast', broadcastKey: 'sekret' };
    const p = moduleEntry(probe).prepare({ n: '2' }, t);
    expect(p.opts).toMatchObject({ target: 'ws', url: t.url, broadcastKey: 'sekret', clients: 2 });
    expect(p.effectiveParams).toMatchObject({ target: 'ws', clients: 2 });
    expect(JSON.stringify(p.effectiveParams)).not.toMatch(/sekret|127\.0\.0\.1:9/);
    expect(() => moduleEntry(probe).prepare({ url: 'http://x' }, t)).toThrow(/url/);
  });

  it('a module named after an Object.prototype member gets the default adapter, not the prototype\'s function', () => {
    const odd = defineModule({ ...throughputModule, name: 'toString' });
    const a = httpAdapterOf(odd)!;
    expect(a.targets).toBe(ROUTE_TARGETS);
    expect(typeof a.options).toBe('object');
  });
});

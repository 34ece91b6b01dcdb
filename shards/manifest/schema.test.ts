import { describe, expect, it } from 'vitest';
import { DEFAULT_MANIFEST } from './options.ts';
import { loadManifest, selectTests, validateManifest, type Manifest, type TestSpec } from './schema.ts';

const t = (id: string, category: TestSpec['category']): TestSpec => ({ id, category, runner: category, target: 'replay', params: { seed: 1 }, baseline: { x: { value: 1, direction: 'higher' } } });
const m: Manifest = { version: 1, tests: [t('jitter-a', 'jitter'), t('idle-a', 'idle'), t('avalanche-a', 'avalanche'), t('latency-a', 'latency')] };
const sel = (filter: string, includeIdle = false, includeAvalanche = false) => selectTests(m, { filter, includeIdle, includeAvalanche }).map((x) => x.id);

describe('tests manifest', () => {
  it('the repository\'s manifest is valid, seeded, and judged on numeric result paths', () => {
    const man = loadManifest(DEFAULT_MANIFEST);
    expect(man.tests.length).toBeGreaterThan(0);
    for (const test of man.tests) {
      if (test.runner === 'jitter') expect(test.params.seed, test.id).toBeDefined();
      for (const b of Object.values(test.baseline)) expect(['higher', 'lower']).toContain(b.direction);
    }
  });

  it('idle and avalanche run only when asked or named; FILTER matches id parts, categories and runners', () => {
    expect(sel('')).toEqual(['jitter-a', 'latency-a']);
    expect(sel('', true, true)).toEqual(['jitter-a', 'idle-a', 'avalanche-a', 'latency-a']);
    expect(sel('idle')).toEqual(['idle-a']);
    expect(sel('latency,jitter-')).toEqual(['jitter-a', 'latency-a']);
  });

  it('names the test and field of a schema error', () => {
    expect(() => validateManifest({ version: 1, tests: [{ ...t('x', 'jitter'), baseline: { p: { value: 1, direction: 'up' } } }] })).toThrow(/tests\[0\] \(x\)\.baseline\["p"\]: "direction" must be "higher" or "lower"/);
    expect(() => validateManifest({ version: 1, tests: [t('x', 'jitter'), t('x', 'jitter')] })).toThrow(/duplicate id "x"/);
    expect(() => validateManifest({ version: 2, tests: [] })).toThrow(/"version" must be 1/);
  });
});

import { describe, expect, it } from 'vitest';
import { currentCommit, stripBulk, summarize } from './summary.ts';

describe('result summaries', () => {
  it('drop the compressed histogram and the per-event timeline, keep every figure', () => {
    const r = { target: 'ws', deliveryRatePct: 99.5, latencyHistogram: { histogram: 'HISTFAAAA', minUs: 1, maxUs: 9, count: 3, negatives: 0 }, chaos: { plan: 'drop', timeline: [{ a: 1 }, { a: 2 }], disruptions: [] } };
    expect(stripBulk(r)).toEqual({ target: 'ws', deliveryRatePct: 99.5, latencyHistogram: { minUs: 1, maxUs: 9, count: 3, negatives: 0 }, chaos: { plan: 'drop', disruptions: [], timelineEvents: 2 } });
    expect(r.latencyHistogram.histogram).toBe('HISTFAAAA'); // the input is left alone
  });

  it('name the commit and the command', () => {
    const s = summarize([{ target: 'ws' }], 'npm run bench -- --seed 1', 'abc123');
    expect(s).toMatchObject({ commit: 'abc123', command: 'npm run bench -- --seed 1', results: [{ target: 'ws' }] });
    expect(Date.parse(s.measuredAt)).not.toBeNaN();
    expect(currentCommit()).toMatch(/^[0-9a-f]{12}(-dirty)?$/);
    expect(currentCommit('/')).toBeNull();
  });
});

import { beforeEach, describe, expect, it, vi } from 'vitest';
import { parseOptions } from '../../lib/options.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { capacityPlannedMs } from './module.ts';
import { parseCapacityOptions } from './options.ts';
import { runCapacity } from './run.ts';
import { defineScenario } from './scenario.ts';
import type { ScenarioResult } from './types.ts';

// Every parse is counted: the suite parses once, and a scenario only types what that parse gave it.
vi.mock('../../lib/options.ts', async (importOriginal) => {
  const m = await importOriginal<typeof import('../../lib/options.ts')>();
  return { ...m, parseOptions: vi.fn(m.parseOptions) };
});

const parse = (values: Record<string, unknown>) => parseCapacityOptions({ values: { targets: 'ws', ...values }, origin: 'CLI' });
const errorOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a refusal');
};

describe("the capacity suite's one parse", () => {
  beforeEach(() => {
    vi.mocked(parseOptions).mockClear();
  });

  it.each([
    [{ scenarios: 'S1', s1Runs: '0' }, 'RR_ERR_OPTION_INVALID', 's1Runs', 'CLI option "s1Runs" must be >= 1 (got "0")'],
    [{ scenarios: 'S1', s1Counts: '10k' }, 'RR_ERR_OPTION_INVALID', 's1Counts', 'option "s1Counts" must be comma-separated integers (got "10k")'],
    [{ scenarios: 'S6', s6Connections: '10', s6Streams: '11' }, 'RR_ERR_OPTION_INVALID', 's6Streams', 's6Streams (11) exceeds s6Connections (10)'],
    [{ scenarios: 'sweep', sweepLoaderCounts: '1,17' }, 'RR_ERR_OPTION_INVALID', 'loaderCounts', 'sweep option "loaderCounts" must list counts in 1..16 (got 17)'],
    [{ scenarios: 'S3', s3Nope: '1' }, 'RR_ERR_OPTION_UNKNOWN', 's3Nope', /^unknown CLI option "s3Nope"/],
  ] as const)('%j is refused with %s, parsed once', (values, code, option, message) => {
    const err = errorOf(() => parse(values)) as { code: string; message: string; details: { option: string } };
    expect(err).toMatchObject({ code, details: { option } });
    expect(err.message).toMatch(message);
    expect(parseOptions).toHaveBeenCalledTimes(1);
  });

  it('valid knobs reach each scenario typed (lists split, defaults filled), with its plan, from that one parse', () => {
    const o = parse({ scenarios: 'S1,S6,S3', s1Counts: '60,120', s1Ramps: '600', s6Connections: '20', s6Streams: '2', s3Rates: '10,20', 's3-step-sec': '2' });
    expect(parseOptions).toHaveBeenCalledTimes(1);
    expect(o.perScenario.S1!.opts).toEqual({ counts: [60, 120], ramps: [600], runs: 3, hold: 5, warmup: 300, minFreeMb: 300, budgetBytes: 4000 });
    expect(o.perScenario.S6!.opts).toMatchObject({ connections: 20, streams: 2, preStopSec: 5 });
    expect(o.perScenario.S3!.opts).toMatchObject({ rates: '10,20', stepSec: 2, loaders: 2 });
    expect(o.perScenario.S1!.plannedSec).toBeCloseTo(3 * (60 / 600 + 20 + 120 / 600 + 20));
    expect(o.perScenario.S6!.plannedSec).toBeCloseTo(20 / 1000 + 5 + 15);
    expect(capacityPlannedMs(o)).toBe(Math.ceil((o.perScenario.S1!.plannedSec + o.perScenario.S6!.plannedSec + o.perScenario.S3!.plannedSec) * 1000));
  });

  it('a scenario runs on the options bound at parse time: the run parses nothing', async () => {
    // S6 against a running target it cannot stop returns at once, its typed options as params.
    const o = parse({ url: 'http://127.0.0.1:9', scenarios: 'S6', s6Connections: '20', s6Streams: '2' });
    const run = await runCapacity(o);
    expect(parseOptions).toHaveBeenCalledTimes(1);
    expect(run.results[0]).toMatchObject({ scenario: 'S6', failureMode: expect.stringMatching(/^not run/), params: { connections: 20, streams: 2, graceMs: 20_000 } });
  });

  it('bind and the standalone parse end in the same typed rule', async () => {
    const seen: object[] = [];
    const s = defineScenario({
      id: 'S1',
      title: 'probe',
      prefix: 'x',
      table: { n: { type: 'int', default: 1, min: 1, max: 9, doc: 'n' } } as const,
      typed: (v) => {
        if (v.n === 7) throw new Error('seven');
        return { n: v.n * 2 };
      },
      plannedSec: (o) => o.n,
      run: async (_ctx, o) => (seen.push(o), { scenario: 'S1' } as ScenarioResult),
      sections: () => [],
    });
    expect(Object.keys(s.options)).toEqual(['xN']);
    const b = s.bind({ xN: 4 });
    expect(b).toMatchObject({ id: 'S1', opts: { n: 8 }, plannedSec: 8 });
    await b.run({ target: getTarget('ws'), seed: 1, signal: new AbortController().signal, log: () => undefined, progress: () => undefined });
    expect(seen[0]).toBe(b.opts);
    expect(parseOptions).not.toHaveBeenCalled();
    expect(s.parse({ xN: '3' })).toEqual({ n: 6 });
    expect(s.parse({ n: '2' })).toEqual({ n: 4 });
    expect(() => s.bind({ xN: 7 })).toThrow('seven');
    expect(() => s.parse({ n: '7' })).toThrow('seven');
    expect(() => s.parse({ n: '0' })).toThrow(expect.objectContaining({ code: 'RR_ERR_OPTION_INVALID' }));
  });
});

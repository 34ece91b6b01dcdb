import { describe, expect, it } from 'vitest';
import { capacityPlannedMs } from '../module.ts';
import { parseCapacityOptions } from '../options.ts';
import type { SoakOptions } from './options.ts';
import { soakPlannedMs } from './run.ts';

describe('soak options through the capacity suite', () => {
  it('prefixed knobs reach the soak and keep its defaults otherwise', () => {
    const o = parseCapacityOptions({ values: { targets: 'ws', scenarios: 'soak', 'soak-duration-sec': '60', soakSampleSec: 5 }, origin: 'CLI' });
    const soak = o.perScenario.soak!.opts as SoakOptions;
    expect(soak.durationSec).toBe(60);
    expect(soak.sampleSec).toBe(5);
    expect(soak.clients).toBe(200);
  });

  it('the soak\'s own cross-checks still refuse a bad combination, with the option named', () => {
    expect(() => parseCapacityOptions({ values: { targets: 'ws', scenarios: 'soak', soakDurationSec: 30, soakSampleSec: 20 }, origin: 'CLI' })).toThrow(/sampleSec/);
    expect(() => parseCapacityOptions({ values: { targets: 'ws', scenarios: 'soak', soakClients: 0 }, origin: 'CLI' })).toThrow(expect.objectContaining({ code: 'RR_ERR_OPTION_INVALID' }));
  });

  it("the suite's ETA for a soak is the soak's own plan (ramp, duration, drain), not a flat guess", () => {
    const o = parseCapacityOptions({ values: { targets: 'ws', scenarios: 'soak', soakDurationSec: 60, soakSampleSec: 5 }, origin: 'CLI' });
    expect(capacityPlannedMs(o)).toBe(soakPlannedMs(o.perScenario.soak!.opts as SoakOptions));
    expect(capacityPlannedMs(o)).toBe(67_000);
  });
});

import { describe, expect, it } from 'vitest';
import type { CapacityRun } from './run.ts';
import { notShownLines, stepRows, summaryRows } from './table.ts';
import type { ScenarioResult } from './types.ts';

/** The summary's arithmetic on a hand-built run: ratios against the first target, best among valid figures only. */
const result = (scenario: 'S1' | 'S2', target: string, value: number | null, valid = true, failureMode?: string): ScenarioResult => ({
  scenario,
  title: scenario,
  target,
  startedAt: '2026-11-30T00:00:00Z',
  params: {},
  steps: [{ step: { connections: 100 }, pass: value !== null, metrics: { bytesPerConnection: value } }],
  headline: scenario === 'S1' ? { name: 'bytes per connection', value, unit: 'B', higherIsBetter: false } : { name: 'max subscribed', value, unit: 'connections', higherIsBetter: true },
  ...(failureMode ? { failureMode } : {}),
  validity: { valid, flags: valid ? [] : [{ code: 'RIG_LIMIT', severity: 'fatal', message: 'x' }] },
  notShown: ['shared note', 'own note'],
});
const run = (results: ScenarioResult[]): CapacityRun => ({ test: 'capacity', startedAt: '', finishedAt: '', targets: ['replay', 'ws', 'socketio'], scenarios: ['S1', 'S2'], seed: 1, params: {}, machine: { cpus: 2, totalMemMb: 1, loadavgAtStart: [0], loadavgAtEnd: [0] }, results, aborted: false, notShown: ['shared note'] });

describe('capacity tables', () => {
  it('ratios are first/other; lower-better and higher-better pick the right best; invalid figures never win', () => {
    const rows = summaryRows(run([result('S1', 'replay', 3000), result('S1', 'ws', 6000), result('S1', 'socketio', 1000, false), result('S2', 'replay', 19000, true, 'fd limit: x'), result('S2', 'ws', 19500, true, 'fd limit: y'), result('S2', 'socketio', null, true, 'crash: z')]));
    expect(rows[0]).toEqual(['Metric', 'replay', 'ws', 'socketio', 'Best', 'replay/ws', 'replay/socketio']);
    expect(rows[1]).toEqual(['S1: bytes per connection (B, lower better)', '3,000', '6,000', '1,000 (invalid)', 'replay', '0.50', 'n/a']);
    expect(rows[2]).toEqual(['S2: max subscribed (connections, higher better)', '19,000', '19,500', 'n/a (crash)', 'ws', '0.97', 'n/a']);
    expect(rows[3]).toEqual(['S2: what stopped it', 'fd limit', 'fd limit', 'crash', '', '', '']);
  });

  it('equal best figures are a tie, not the first target', () => {
    const rows = summaryRows(run([result('S2', 'replay', 19973), result('S2', 'ws', 19973), result('S2', 'socketio', 19000)]));
    expect(rows[1]!.slice(4)).toEqual(['tie (replay, ws)', '1.00', '1.05']);
  });

  it('step tables carry every step key and metric; not-shown lines are deduplicated across scenarios', () => {
    const r = run([result('S1', 'replay', 3000), result('S1', 'ws', null)]);
    expect(stepRows(r, 'S1')).toEqual([
      ['target', 'connections', 'pass', 'bytesPerConnection', 'reason'],
      ['replay', '100', 'yes', '3,000', ''],
      ['ws', '100', 'no', 'n/a', ''],
    ]);
    expect(notShownLines(r)).toEqual(['shared note', 'S1: own note']);
  });
});

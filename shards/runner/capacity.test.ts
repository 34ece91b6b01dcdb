import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startRunner, tempResultsDir, type RunnerProcess } from './testing.ts';

/** POST /bench-capacity-<target> on a real runner process: a small run, and precise 400s for bad input. */
const TOKEN = 'capacity-token';

describe('bench-capacity route', () => {
  let runner: RunnerProcess;
  beforeAll(async () => {
    runner = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir() });
  });
  afterAll(async () => {
    await runner?.stop();
  });
  const post = (path: string) => api(runner.url, path, { method: 'POST', token: TOKEN });

  it('runs the chosen scenarios against the route target and writes the report', { timeout: 120_000 }, async () => {
    const r = await post('/bench-capacity-uws?scenarios=S6&s6Connections=20&s6Streams=2&s6IntervalMs=100&s6PreStopSec=0.5');
    expect(r.status, JSON.stringify(r.body).slice(0, 500)).toBe(200);
    expect(r.body).toMatchObject({ test: 'capacity', targets: ['uws'], scenarios: ['S6'], effectiveParams: { target: 'uws', targetSource: 'local', scenarios: 'S6', s6Connections: 20 } });
    expect(r.body.results[0]).toMatchObject({ scenario: 'S6', target: 'uws', steps: [{ pass: true, metrics: { subscribed: 20, exitCode: 0, mostTold: 'close 1012' } }] });
    const report = await api(runner.url, `/reports/${r.body.jobId}`, { token: TOKEN });
    expect(report.status).toBe(200);
    expect(String(report.body)).toContain('Capacity: uws');
  });

  it.each([
    ['scenarios=S9', 'RR_ERR_OPTION_INVALID', 'scenarios'],
    ['s1Counts=10k', 'RR_ERR_OPTION_INVALID', 's1Counts'],
    ['scenarios=S2&s2Steps=300,200', 'RR_ERR_OPTION_INVALID', 's2Steps'],
    ['scenarios=S6&s6Connections=10&s6Streams=20', 'RR_ERR_OPTION_INVALID', 's6Streams'],
    ['s6GraceMs=1000', 'RR_ERR_OPTION_INVALID', 's6MaxStopMs'],
    ['s2Ramp=-5', 'RR_ERR_OPTION_INVALID', 's2Ramp'],
    ['targets=ws', 'RR_ERR_OPTION_UNKNOWN', 'targets'],
  ])('?%s → 400 %s naming %s', async (qs, code, option) => {
    const r = await post(`/bench-capacity-ws?${qs}`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code, details: { option } });
  });

  it('refuses a target URL by design', async () => {
    const r = await post('/bench-capacity-ws?url=http://127.0.0.1:1');
    expect(r.body).toMatchObject({ statusCode: 400, code: 'RR_ERR_TARGET_URL_REFUSED' });
  });
});

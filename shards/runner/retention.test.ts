import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createRunnerApp } from './app.ts';
import { api, startRunner, tempResultsDir } from './testing.ts';

const TOKEN = 'retention-token';

describe('runner results disk and recovery', () => {
  it('below RUNNER_MIN_FREE_BYTES a new job is 507 RR_ERR_RESULTS_DISK_FULL with a clear body', async () => {
    const { app } = createRunnerApp({ token: TOKEN, resultsDir: tempResultsDir(), limits: { minFreeBytes: Number.MAX_SAFE_INTEGER } });
    const server = createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const r = await api(base, '/bench-latency-ws?n=1&msgs=1&async=1', { method: 'POST', token: TOKEN });
      expect(r.status).toBe(507);
      expect(r.body).toMatchObject({ statusCode: 507, code: 'RR_ERR_RESULTS_DISK_FULL', message: expect.stringContaining('RUNNER_MIN_FREE_BYTES') });
      expect((await api(base, '/jobs', { token: TOKEN })).body.jobs).toEqual([]);
      expect((await api(base, '/health')).body.resultsDisk).toMatchObject({ minFreeBytes: Number.MAX_SAFE_INTEGER });
    } finally {
      server.close();
    }
  });

  it('a job recovered after SIGKILL shows how far it got (progress and log tail persisted while it ran)', async () => {
    const dir = tempResultsDir();
    let runner = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: dir, RUNNER_PERSIST_MS: '200' });
    const start = await api(runner.url, '/bench-jitter-ws?n=4&msgs=200&interval=100&jitter=0&settle=1000&async=1', { method: 'POST', token: TOKEN });
    expect(start.status, JSON.stringify(start.body)).toBe(202);
    const id = start.body.jobId as string;
    for (let i = 0; i < 100; i++) {
      const j = await api(runner.url, `/jobs/${id}`, { token: TOKEN });
      if (j.body.progress?.phase === 'publish' && j.body.progress?.published > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 500));
    await runner.stop('SIGKILL');
    runner = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: dir });
    try {
      const after = await api(runner.url, `/jobs/${id}`, { token: TOKEN });
      expect(after.body).toMatchObject({ id, status: 'failed', errorCode: 'RR_ERR_RUN_FAILED', progress: { phase: 'publish' } });
      expect(after.body.progress.published).toBeGreaterThan(0);
      expect(after.body.logTail.join('\n')).toContain('start /bench-jitter-ws');
    } finally {
      await runner.stop();
    }
  });
});

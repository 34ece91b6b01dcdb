import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startRunner, tempResultsDir, waitJob, type RunnerProcess } from './testing.ts';

/** Every runner in the route table, through real HTTP on a real runner process, at small scale. */
const TOKEN = 'routes-token';

describe('bench routes', () => {
  let runner: RunnerProcess;
  const dir = tempResultsDir();
  beforeAll(async () => {
    runner = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: dir });
  });
  afterAll(async () => {
    await runner?.stop();
  });
  const post = (path: string) => api(runner.url, path, { method: 'POST', token: TOKEN });

  it('idle over two worker processes (the benchmark names n, hold, ramp, shard)', async () => {
    const r = await post('/bench-idle-uws?n=40&hold=1&ramp=400&workers=2&shard=s1');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ test: 'idle', target: 'uws', targetServer: 'uws', shardLabel: 's1', subscribed: 40, failed: 0, runner: { workers: 2 } });
    expect(r.body.effectiveParams).toMatchObject({ clients: 40, hold: 1, ramp: 400, workers: '2', target: 'uws', targetSource: 'local' });
  });

  it('latency: no drops, every message once', async () => {
    const r = await post('/bench-latency-replay?n=10&msgs=10&interval=50&settle=2000');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ test: 'latency', target: 'replay', expectedDeliveries: 100, receivedDeliveries: 100, jitterEvents: 0 });
    expect((await post('/bench-latency-replay?n=10&jitter=5')).body).toMatchObject({ statusCode: 400, code: 'RR_ERR_OPTION_UNKNOWN' });
  });

  it('throughput: the benchmark spelling intervalMs and its alias interval', async () => {
    const r = await post('/bench-throughput-socketio?n=10&total=20&intervalMs=10&drain=5&publisherConcurrency=4');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ test: 'throughput', expectedDeliveries: 200, receivedDeliveries: 200, intervalMs: 10 });
    expect(r.body.effectiveParams).toMatchObject({ clients: 10, total: 20, intervalMs: 10, publisher: 'pool', publisherConcurrency: 4 });
    const bad = await post('/bench-throughput-socketio?publisher=nats');
    expect(bad.body).toMatchObject({ statusCode: 400, code: 'RR_ERR_OPTION_INVALID', details: { option: 'publisher' } });
  });

  for (const target of ['replay', 'uws']) {
    it(`whispers on ${target}`, async () => {
      const r = await post(`/bench-whispers-${target}?n=12&rooms=2&interval=100&duration=1&settle=3000`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ test: 'whispers', rooms: 2, whispersSent: 120, expectedReceived: 600, whispersReceived: 600, deliveryRatePct: 100 });
    });
  }

  it('jitter validates plan= with the chaos catalog', async () => {
    const r = await post('/bench-jitter-replay?plan=earthquake');
    expect(r.body).toMatchObject({ statusCode: 400, code: 'RR_ERR_OPTION_INVALID' });
    expect(r.body.message).toContain('earthquake');
  });

  it('avalanche and deploy-impact register from the same table', async () => {
    const av = await post('/bench-avalanche-ws?n=10&restart=kill&warmupMs=1000&publishAfterMs=2000&recoveryTimeoutMs=10000&settleMs=500&seed=4');
    expect(av.status, JSON.stringify(av.body).slice(0, 500)).toBe(200);
    expect(av.body).toMatchObject({ test: 'avalanche', clients: 10, effectiveParams: { restart: 'kill', clients: 10, target: 'ws' } });
    const di = await post('/bench-deploy-impact-ws?n=10&warmupMs=1000&publisherDownMs=500&publishAfterMs=2000&settleMs=500&seed=4');
    expect(di.status, JSON.stringify(di.body).slice(0, 500)).toBe(200);
    expect(di.body).toMatchObject({ test: 'deploy-impact', clients: 10, effectiveParams: { clients: 10, target: 'ws' } });
    expect((await post('/bench-avalanche-ws?broadcastKey=x')).body.code).toBe('RR_ERR_OPTION_UNKNOWN');
  });

  it('jitter over two worker processes merges into one result', async () => {
    const r = await post('/bench-jitter-ws?n=8&msgs=20&interval=100&jitter=0&settle=2000&workers=2&seed=5');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ test: 'jitter', workers: 2, clients: 8, expectedDeliveries: 160, receivedDeliveries: 160, seed: 5 });
    expect(r.body.latencyHistogram.count).toBe(160);
    expect(r.body.effectiveParams).toMatchObject({ clients: 8, workers: 2 });
    expect((await post('/bench-jitter-ws?n=2&workers=3')).body).toMatchObject({ statusCode: 400, details: { option: 'workers' } });
    expect((await post('/bench-jitter-ws?n=40000')).body).toMatchObject({ statusCode: 400, details: { option: 'clients' } });
  });

  it('SIGTERM during an idle hold: workers close their clients, the partial result is stored as aborted, exit 0', async () => {
    const start = await post('/bench-idle-ws?n=30&hold=60&ramp=300&workers=2&async=1');
    expect(start.status).toBe(202);
    const id = start.body.jobId as string;
    for (let i = 0; i < 200; i++) {
      const j = await api(runner.url, `/jobs/${id}`, { token: TOKEN });
      if (j.body.progress?.phase === 'hold') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await runner.stop('SIGTERM')).toBe(0);
    runner = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: dir });
    const job = await waitJob(runner.url, id, TOKEN);
    expect(job).toMatchObject({ status: 'failed', aborted: true, result: { test: 'idle', aborted: true, subscribed: 30, openAtEndOfHold: 30, runner: { workers: 2 } } });
    expect(job.result.holdElapsedMs).toBeLessThan(60_000);
  });
});

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBindToken, MIN_REMOTE_TOKEN_LENGTH } from './options.ts';
import { api, runnerExit, startRunner, tempResultsDir, waitJob, type RunnerProcess } from './testing.ts';
import { soketiAvailability } from '../../services/soketi/load.ts';

/** Real HTTP against a real runner process on port 0, running real (small) jobs against local targets. */
const TOKEN = 'test-token-0123456789abcdef';
const SMALL = 'n=5&msgs=10&interval=50&jitter=0&settle=1000&seed=7';

describe('bench-runner service', () => {
  const dir = tempResultsDir();
  let runner: RunnerProcess;
  beforeAll(async () => {
    runner = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: dir });
  });
  afterAll(async () => {
    await runner?.stop();
  });

  it('answers 401 in the error shape without a token and with a wrong one; /health stays open', async () => {
    const none = await api(runner.url, `/bench-jitter-ws?${SMALL}`, { method: 'POST' });
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ statusCode: 401, error: 'Unauthorized', code: 'RR_ERR_AUTH_MISSING' });
    const wrong = await api(runner.url, `/bench-jitter-ws?${SMALL}`, { method: 'POST', token: TOKEN + 'x' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('RR_ERR_AUTH_INVALID');
    for (const p of ['/jobs', '/jobs/000000000000', '/results/000000000000', '/reports/000000000000']) {
      expect((await api(runner.url, p)).status, p).toBe(401);
    }
    const health = await api(runner.url, '/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', state: 'idle', busy: false, authRequired: true, node: process.version });
    expect(health.body.fdLimit).toBeGreaterThan(0);
    expect(health.body.sourceAddresses.count).toBeGreaterThan(1);
    expect(health.body.routes).toContain('POST /bench-jitter-ws');
    // A target with no local service says what enables it (before: "local", and its routes answered RR_ERR_TARGET_NOT_CONFIGURED).
    expect(health.body.targets).toMatchObject({ ws: 'local', anycable: 'local', pusher: 'not configured: set TARGET_PUSHER_URL' });
    // soketi is installed on demand: local where `npm run install:soketi` ran, else why not with the command.
    expect(health.body.targets.soketi).toBe(soketiAvailability().available ? 'local' : `not installed here: ${soketiAvailability().reason}`);
  });

  it('names unknown parameters, invalid values and refuses target URLs with 400', async () => {
    const unknown = await api(runner.url, `/bench-jitter-ws?${SMALL}&msgz=3&foo=1`, { method: 'POST', token: TOKEN });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('RR_ERR_OPTION_UNKNOWN');
    expect(unknown.body.message).toContain('"msgz"');
    expect(unknown.body.details.unknownParams).toEqual(['msgz', 'foo']);
    expect(unknown.body).toMatchObject({ unknownParams: ['msgz', 'foo'], effectiveParams: null });
    const invalid = await api(runner.url, `/bench-jitter-ws?n=-3`, { method: 'POST', token: TOKEN });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ code: 'RR_ERR_OPTION_INVALID', details: { option: 'n' } });
    const twice = await api(runner.url, `/bench-jitter-ws?n=3&n=4`, { method: 'POST', token: TOKEN });
    expect(twice.body.details.option).toBe('n');
    // Without TARGET_URL_ALLOW only the configured targets' own URLs pass (none here): loopback too is refused.
    for (const [p, param] of [['httpUrl=http://127.0.0.1:1', 'httpUrl'], ['wsUrl=ws://x&httpUrl=http://10.0.0.1', 'wsUrl']] as const) {
      const r = await api(runner.url, `/bench-jitter-ws?${SMALL}&${p}`, { method: 'POST', token: TOKEN });
      expect(r.status, p).toBe(400);
      expect(r.body).toMatchObject({ code: 'RR_ERR_TARGET_URL_REFUSED', details: { option: param } });
      expect(r.body.message).toContain('TARGET_URL_ALLOW (unset)');
    }
    for (const p of ['cableUrl=ws://127.0.0.1:1/cable', 'serverUrl=http://10.0.0.1']) {
      const r = await api(runner.url, `/bench-jitter-ws?${SMALL}&${p}`, { method: 'POST', token: TOKEN });
      expect(r.status, p).toBe(400);
      expect(r.body.code).toBe('RR_ERR_TARGET_URL_REFUSED');
      expect(r.body.message).toContain('takes wsUrl + httpUrl');
    }
    const nodes = await api(runner.url, `/bench-jitter-ws?${SMALL}&nodes=http://127.0.0.1:1`, { method: 'POST', token: TOKEN });
    expect(nodes.body).toMatchObject({ code: 'RR_ERR_TARGET_URL_REFUSED', details: { option: 'nodes' } });
    const notFound = await api(runner.url, '/jobs/ffffffffffff', { token: TOKEN });
    expect(notFound.status).toBe(404);
    expect(notFound.body.code).toBe('RR_ERR_JOB_NOT_FOUND');
    expect((await api(runner.url, '/reports/ffffffffffff', { token: TOKEN })).body.code).toBe('RR_ERR_JOB_NOT_FOUND');
    expect((await api(runner.url, '/jobs', { token: TOKEN })).body.jobs).toEqual([]);
  });

  it('runs a sync job and echoes effectiveParams under Rebound names', async () => {
    const r = await api(runner.url, `/bench-jitter-ws?${SMALL}&duration=200&stream=sync-1`, { method: 'POST', token: TOKEN });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ test: 'jitter', target: 'ws', published: 10, expectedDeliveries: 50, receivedDeliveries: 50, unknownParams: [] });
    expect(r.body.effectiveParams).toMatchObject({ n: 5, clients: 5, msgs: 10, interval: 50, jitter: 0, stream: 'sync-1', duration: 200, target: 'ws', targetSource: 'local' });
    expect(r.body.jobId).toMatch(/^[0-9a-f]{12}$/);
  });

  let doneJob = '';
  it('runs an async job polled to completion, answers 429 while busy, streams progress', async () => {
    const start = await api(runner.url, `/bench-jitter-socketio?n=4&msgs=30&interval=100&jitter=0&settle=1000&seed=3&async=1`, { method: 'POST', token: TOKEN });
    expect(start.status, JSON.stringify(start.body)).toBe(202);
    expect(start.body).toMatchObject({ jobId: expect.stringMatching(/^[0-9a-f]{12}$/), unknownParams: [], effectiveParams: { clients: 4, msgs: 30, target: 'socketio' } });
    const id = start.body.jobId as string;
    const busy = await api(runner.url, `/bench-jitter-ws?${SMALL}`, { method: 'POST', token: TOKEN });
    expect(busy.status).toBe(429);
    expect(busy.body.code).toBe('RR_ERR_RUNNER_BUSY');
    expect(Number(busy.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await api(runner.url, '/health')).body).toMatchObject({ state: 'busy', job: { id } });
    // Follow: NDJSON lines until the end line.
    const res = await fetch(`${runner.url}/jobs/${id}?follow=1`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines[0].type).toBe('job');
    expect(lines.some((l) => l.type === 'progress' && typeof l.progress.phase === 'string')).toBe(true);
    expect(lines.at(-1)).toMatchObject({ type: 'end', job: { id, status: 'done' } });
    const job = await waitJob(runner.url, id, TOKEN);
    expect(job).toMatchObject({ id, status: 'done', params: { clients: 4 }, result: { test: 'jitter', target: 'socketio', published: 30, expectedDeliveries: 120 } });
    expect(job.result.receivedDeliveries).toBe(120);
    expect(job.logTail.length).toBeGreaterThan(0);
    expect((await api(runner.url, `/jobs/${id}?logLines=1`, { token: TOKEN })).body.logTail).toHaveLength(1);
    const stored = await api(runner.url, `/results/${id}`, { token: TOKEN });
    expect(stored.body.receivedDeliveries).toBe(120);
    const list = await api(runner.url, '/jobs', { token: TOKEN });
    expect(list.body.jobs[0]).toMatchObject({ id, status: 'done', hasResult: true });
    // The job wrote its HTML report next to the result: charts, and a curl line without the token.
    expect(job.logTail.some((l: string) => l.includes(`report: ${join(dir, `${id}.html`)}`)), job.logTail.join('\n')).toBe(true);
    const report = await api(runner.url, `/reports/${id}`, { token: TOKEN });
    expect(report.status).toBe(200);
    expect(report.headers.get('content-type')).toContain('text/html');
    expect(report.body).toContain('<html');
    for (const chart of ['latency-cdf-raw', 'latency-cdf-min-normalised', 'connected-socketio']) expect(report.body).toContain(chart);
    expect(report.body).toContain('/bench-jitter-socketio?');
    expect(report.body).toContain('$BENCH_RUNNER_TOKEN');
    expect(report.body).not.toContain(TOKEN);
    expect((await api(runner.url, `/reports/${id}`)).status).toBe(401);
    expect((await api(runner.url, `/reports/${id}`, { token: TOKEN + 'x' })).status).toBe(401);
    doneJob = id;
  });

  it('still answers GET /jobs/:id after a restart with the same RESULTS_DIR', async () => {
    expect(doneJob).not.toBe('');
    expect(await runner.stop()).toBe(0);
    runner = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: dir });
    const job = await api(runner.url, `/jobs/${doneJob}`, { token: TOKEN });
    expect(job.status).toBe(200);
    expect(job.body).toMatchObject({ id: doneJob, status: 'done', result: { receivedDeliveries: 120 } });
  });

  it('on SIGTERM during a job records it aborted and exits 0', async () => {
    const start = await api(runner.url, `/bench-jitter-ws?n=4&msgs=200&interval=100&jitter=0&settle=1000&async=1`, { method: 'POST', token: TOKEN });
    const id = start.body.jobId as string;
    // Wait until it publishes, so the abort lands mid-run.
    for (let i = 0; i < 100; i++) {
      const j = await api(runner.url, `/jobs/${id}`, { token: TOKEN });
      if (j.body.progress?.phase === 'publish') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await runner.stop('SIGTERM')).toBe(0);
    const file = JSON.parse(readFileSync(join(dir, 'jobs', `${id}.json`), 'utf8'));
    expect(file).toMatchObject({ status: 'failed', aborted: true, errorCode: 'RR_ERR_RUN_ABORTED', error: expect.stringContaining('aborted'), hasResult: true });
    expect(JSON.parse(readFileSync(join(dir, `${id}.json`), 'utf8')).aborted).toBe(true);
    runner = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: dir });
    const after = await api(runner.url, `/jobs/${id}`, { token: TOKEN });
    expect(after.body).toMatchObject({ id, status: 'failed', aborted: true, result: { test: 'jitter', aborted: true, clients: 4 } });
    expect(typeof after.body.error).toBe('string');
    // A real partial result: what was published before the abort, not the whole plan.
    expect(after.body.result.published).toBeGreaterThan(0);
    expect(after.body.result.published).toBeLessThan(200);
    // Its validity agrees with the job record: ABORTED, not the target's PARTIAL_PUBLISH.
    expect(after.body.result.validity.flags.map((f: { code: string }) => f.code)).toEqual(['ABORTED']);
    expect(readFileSync(join(dir, `${id}.html`), 'utf8')).not.toContain('The target refused');
    expect(existsSync(join(dir, `${id}.json`))).toBe(true);
    // The partial result got its report too, written before the process exited.
    expect(readFileSync(join(dir, `${id}.html`), 'utf8')).toContain('latency-cdf-raw');
  });
});

describe('runner startup', () => {
  it('refuses a public HOST without a token (exit 2, clear error)', async () => {
    const r = await runnerExit({ HOST: '0.0.0.0', BENCH_RUNNER_TOKEN: '', RESULTS_DIR: tempResultsDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('RR_ERR_RUNNER_UNSAFE_BIND');
    expect(r.stderr).toContain('BENCH_RUNNER_TOKEN');
  });

  it('refuses a public HOST with a token under 16 characters (exit 2, RR_ERR_RUNNER_WEAK_TOKEN); 16 are enough', async () => {
    const r = await runnerExit({ HOST: '0.0.0.0', BENCH_RUNNER_TOKEN: 'secret', RESULTS_DIR: tempResultsDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('RR_ERR_RUNNER_WEAK_TOKEN');
    expect(r.stderr).toContain('6 characters');
    expect(r.stderr).not.toContain('secret');
    const ok = await startRunner({ HOST: '0.0.0.0', BENCH_RUNNER_TOKEN: 'k'.repeat(16), RESULTS_DIR: tempResultsDir() });
    try {
      expect((await api(ok.url, '/jobs')).status).toBe(401);
    } finally {
      await ok.stop();
    }
  });

  it('the bind rule: loopback takes any token, every other address an empty one never and a short one never', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', '[::1]', 'localhost']) expect(() => checkBindToken(host, 's'), host).not.toThrow();
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'runner.railway.internal']) {
      expect(() => checkBindToken(host, ''), host).toThrow(expect.objectContaining({ code: 'RR_ERR_RUNNER_UNSAFE_BIND' }));
      expect(() => checkBindToken(host, 'x'.repeat(MIN_REMOTE_TOKEN_LENGTH - 1)), host).toThrow(expect.objectContaining({ code: 'RR_ERR_RUNNER_WEAK_TOKEN' }));
      expect(() => checkBindToken(host, 'x'.repeat(MIN_REMOTE_TOKEN_LENGTH)), host).not.toThrow();
    }
  });

  it('listens on loopback without a token (open, authRequired false)', async () => {
    const r = await startRunner({ BENCH_RUNNER_TOKEN: '', RESULTS_DIR: tempResultsDir() });
    try {
      expect((await api(r.url, '/health')).body.authRequired).toBe(false);
      expect((await api(r.url, '/jobs')).status).toBe(200);
    } finally {
      await r.stop();
    }
  });
});

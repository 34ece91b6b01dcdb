import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReboundError } from '../../lib/errors.ts';
import { JobStore } from './jobs.ts';
import { tempResultsDir } from './testing.ts';

const meta = { route: '/bench-latency-ws', test: 'latency', target: 'ws', params: {}, unknownParams: [], plannedMs: 1000 };

describe('job records for the benchmark poller', () => {
  it('a failed run: status failed, error a string, the code in errorCode', async () => {
    const store = new JobStore(tempResultsDir());
    const { finished } = store.start(meta, async () => {
      throw new ReboundError('RR_ERR_TARGET_UNSUPPORTED', 'no whispers here');
    });
    const job = await finished;
    expect(job).toMatchObject({ status: 'failed', error: 'no whispers here', errorCode: 'RR_ERR_TARGET_UNSUPPORTED' });
    expect(job.aborted).toBeUndefined();
  });

  it('an aborted run: failed with aborted true and its partial result', async () => {
    const dir = tempResultsDir();
    const store = new JobStore(dir);
    const { job, finished } = store.start(meta, async (ctx) => new Promise((r) => ctx.signal.addEventListener('abort', () => r({ test: 'latency', aborted: true, published: 3 }))));
    await new Promise((r) => setTimeout(r, 20));
    await store.abortAll();
    const done = await finished;
    expect(done).toMatchObject({ status: 'failed', aborted: true, errorCode: 'RR_ERR_RUN_ABORTED', result: { published: 3 } });
    expect(typeof done.error).toBe('string');
    expect(JSON.parse(readFileSync(join(dir, `${job.id}.json`), 'utf8'))).toMatchObject({ published: 3 });
  });

  it('an aborted run\'s partial result carries ABORTED in its validity, even from a runner that does not raise it', async () => {
    const store = new JobStore(tempResultsDir());
    const { finished } = store.start(meta, async (ctx) => new Promise((r) => ctx.signal.addEventListener('abort', () => r({ test: 'latency', published: 3, validity: { valid: true, flags: [] } }))));
    await new Promise((r) => setTimeout(r, 20));
    await store.abortAll();
    const done = await finished;
    expect(done).toMatchObject({ status: 'failed', aborted: true, result: { aborted: true, validity: { valid: false, flags: [{ code: 'ABORTED', severity: 'fatal' }] } } });
  });

  it('records of the old shape (status aborted, error object) are rewritten on load', () => {
    const dir = tempResultsDir();
    mkdirSync(join(dir, 'jobs'), { recursive: true });
    const old = { ...meta, createdAt: Date.now(), progress: { phase: 'publish' } };
    writeFileSync(join(dir, 'jobs', 'aaaaaaaaaaaa.json'), JSON.stringify({ ...old, id: 'aaaaaaaaaaaa', status: 'aborted', hasResult: true }));
    writeFileSync(join(dir, 'jobs', 'bbbbbbbbbbbb.json'), JSON.stringify({ ...old, id: 'bbbbbbbbbbbb', status: 'failed', error: { code: 'RR_ERR_RUN_FAILED', message: 'boom' } }));
    const store = new JobStore(dir);
    expect(store.get('aaaaaaaaaaaa')).toMatchObject({ status: 'failed', aborted: true, errorCode: 'RR_ERR_RUN_ABORTED' });
    expect(store.get('bbbbbbbbbbbb')).toMatchObject({ status: 'failed', error: 'boom', errorCode: 'RR_ERR_RUN_FAILED' });
  });
});

describe('job logs carry no control characters', () => {
  it('ESC[2J and a bidi override in a runner log line and in an error message are escaped in the log tail, the event and the error', async () => {
    const store = new JobStore(tempResultsDir());
    const seen: string[] = [];
    const { job, finished } = store.start(meta, async (ctx) => {
      ctx.log('stream \x1b[2Jevil\r\nforged line');
      ctx.log('report\u202etxt.exe \u2066isolated\u2069');
      throw new Error('target said \x1b]0;pwned\x07 \u202e');
    });
    store.events(job.id).on('log', (l) => seen.push(l));
    const done = await finished;
    const tail = store.logTail(job.id).join('\n');
    expect(tail).toContain('stream \\x1b[2Jevil\\r\\nforged line');
    expect(tail).toContain('report\\u{202e}txt.exe \\u{2066}isolated\\u{2069}');
    expect(done.error).toBe('target said \\x1b]0;pwned\\x07 \\u{202e}');
    for (const l of [...store.logTail(job.id), ...seen, done.error!]) expect(l).not.toMatch(/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
  });
});

const quick = (store: JobStore, result: Record<string, unknown> = { pad: '' }) => store.start(meta, async () => result).finished;

describe('retention', () => {
  it('caps finished jobs by count, oldest first, with their result files', async () => {
    const dir = tempResultsDir();
    const store = new JobStore(dir, { maxJobs: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push((await quick(store)).id);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(store.list().map((j) => j.id)).toEqual([ids[3], ids[2]]);
    for (const id of ids.slice(0, 2)) {
      expect(existsSync(join(dir, 'jobs', `${id}.json`))).toBe(false);
      expect(existsSync(join(dir, `${id}.json`))).toBe(false);
    }
    expect(existsSync(join(dir, `${ids[3]}.json`))).toBe(true);
    expect(new JobStore(dir, { maxJobs: 2 }).list().map((j) => j.id)).toEqual([ids[3], ids[2]]);
  });

  it('caps by bytes', async () => {
    const dir = tempResultsDir();
    const store = new JobStore(dir, { maxBytes: 250_000 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push((await quick(store, { pad: 'x'.repeat(100_000) })).id);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(store.list().map((j) => j.id)).toEqual([ids[3], ids[2]]);
  });

  it('removes jobs past the age limit at startup', async () => {
    const dir = tempResultsDir();
    const first = new JobStore(dir);
    const old = await quick(first);
    const young = await quick(first);
    // Age the first one by rewriting its index entry.
    const idx = JSON.parse(readFileSync(join(dir, 'jobs', 'index.json'), 'utf8'));
    for (const j of idx.jobs) if (j.id === old.id) j.endedAt = j.createdAt = Date.now() - 40 * 86_400_000;
    writeFileSync(join(dir, 'jobs', 'index.json'), JSON.stringify(idx));
    const store = new JobStore(dir, { maxAgeMs: 30 * 86_400_000 });
    expect(store.get(old.id)).toBeUndefined();
    expect(existsSync(join(dir, `${old.id}.json`))).toBe(false);
    expect(store.get(young.id)).toBeDefined();
  });

  it('startup reads the index, not every job file', async () => {
    const dir = tempResultsDir();
    const first = new JobStore(dir);
    const a = await quick(first);
    // A job file the index does not know is not loaded; a job the index knows answers without its file.
    writeFileSync(join(dir, 'jobs', 'cccccccccccc.json'), JSON.stringify({ ...meta, id: 'cccccccccccc', status: 'done', createdAt: Date.now(), progress: { phase: 'done' } }));
    rmSync(join(dir, 'jobs', `${a.id}.json`));
    const store = new JobStore(dir);
    expect(store.get('cccccccccccc')).toBeUndefined();
    expect(store.get(a.id)).toMatchObject({ status: 'done' });
    // Without an index, the job files are read once and the index written.
    rmSync(join(dir, 'jobs', 'index.json'));
    expect(new JobStore(dir).get('cccccccccccc')).toMatchObject({ status: 'done' });
    expect(existsSync(join(dir, 'jobs', 'index.json'))).toBe(true);
  });

  it('refuses a new job with RR_ERR_RESULTS_DISK_FULL (507) below the free-space floor', () => {
    const store = new JobStore(tempResultsDir(), { minFreeBytes: Number.MAX_SAFE_INTEGER });
    expect(() => store.start(meta, async () => ({}))).toThrow(expect.objectContaining({ code: 'RR_ERR_RESULTS_DISK_FULL', statusCode: 507 }));
    expect(store.list()).toEqual([]);
  });

  it('a running job is persisted every persistMs: a store recovering the directory sees its progress and log', async () => {
    const dir = tempResultsDir();
    const store = new JobStore(dir, { persistMs: 50 });
    const { job, finished } = store.start(meta, (ctx) => {
      ctx.progress({ phase: 'publish', published: 42 });
      ctx.log('published 42 of 100');
      return new Promise((r) => ctx.signal.addEventListener('abort', () => r({ aborted: true })));
    });
    await new Promise((r) => setTimeout(r, 300));
    // As after SIGKILL: the live store never wrote its end; a new one reads what was persisted.
    const recovered = new JobStore(dir);
    expect(recovered.get(job.id)).toMatchObject({ status: 'failed', errorCode: 'RR_ERR_RUN_FAILED', progress: { phase: 'publish', published: 42 } });
    expect(recovered.get(job.id)!.error).toContain('"published":42');
    expect(recovered.logTail(job.id).join('\n')).toContain('published 42 of 100');
    await store.abortAll();
    await finished;
  });
});

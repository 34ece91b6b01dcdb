import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

  it('records of the old shape (status aborted, error object) are rewritten on load', () => {
    const dir = tempResultsDir();
    mkdirSync(join(dir, 'jobs'), { recursive: true });
    const old = { ...meta, createdAt: 1, progress: { phase: 'publish' } };
    writeFileSync(join(dir, 'jobs', 'aaaaaaaaaaaa.json'), JSON.stringify({ ...old, id: 'aaaaaaaaaaaa', status: 'aborted', hasResult: true }));
    writeFileSync(join(dir, 'jobs', 'bbbbbbbbbbbb.json'), JSON.stringify({ ...old, id: 'bbbbbbbbbbbb', status: 'failed', error: { code: 'RR_ERR_RUN_FAILED', message: 'boom' } }));
    const store = new JobStore(dir);
    expect(store.get('aaaaaaaaaaaa')).toMatchObject({ status: 'failed', aborted: true, errorCode: 'RR_ERR_RUN_ABORTED' });
    expect(store.get('bbbbbbbbbbbb')).toMatchObject({ status: 'failed', error: 'boom', errorCode: 'RR_ERR_RUN_FAILED' });
  });
});

describe('job logs carry no control characters', () => {
  it('ESC[2J in a runner log line and in an error message is escaped in the log tail, the event and the error', async () => {
    const store = new JobStore(tempResultsDir());
    const seen: string[] = [];
    const { job, finished } = store.start(meta, async (ctx) => {
      ctx.log('stream \x1b[2Jevil\r\nforged line');
      throw new Error('target said \x1b]0;pwned\x07');
    });
    store.events(job.id).on('log', (l) => seen.push(l));
    const done = await finished;
    const tail = store.logTail(job.id).join('\n');
    expect(tail).toContain('stream \\x1b[2Jevil\\r\\nforged line');
    expect(done.error).toBe('target said \\x1b]0;pwned\\x07');
    for (const l of [...store.logTail(job.id), ...seen, done.error!]) expect(l).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
  });
});

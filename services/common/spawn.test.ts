import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { ReboundError } from '../../lib/errors.ts';
import { waitUntil } from '../../lib/time.ts';
import { childExited, startService, STDERR_TAIL_CHARS, stderrTail } from './spawn.ts';

/** Real children: a service that refuses its options, and a process far chattier than any service. */
describe('startService: the child\'s stderr', () => {
  it('a service that exits before listening: the start error quotes its coded complaint, with the exit code', async () => {
    const e = await startService('ws', { args: ['--max-payload-bytes', 'lots'] }).then(
      () => expect.fail('started with a bad option'),
      (err: ReboundError) => err,
    );
    expect(e.code).toBe('RR_ERR_SERVICE_START');
    expect(e.message).toMatch(/^ws exited before listening \(code 2, signal null\): ws: RR_ERR_OPTION_INVALID: .*max-payload-bytes/);
    expect(e.details).toMatchObject({ exitCode: 2, signal: null });
    expect(e.details!.stderr).toContain('RR_ERR_OPTION_INVALID');
  });

  it('a port in use: the service says so in one coded line and exits 1, and the start error quotes it', async () => {
    const first = await startService('ws');
    try {
      const e = await startService('ws', { port: first.port }).then(
        () => expect.fail('a second ws started on a port in use'),
        (err: ReboundError) => err,
      );
      expect(e.message).toBe(`ws exited before listening (code 1, signal null): ws: RR_ERR_SERVICE_START: port ${first.port} on 127.0.0.1 is already in use (another server listens there)`);
      expect(e.details!.stderr).not.toMatch(/\n\s+at /); // no stack
      expect((await fetch(`${first.httpUrl}/health`)).status).toBe(200);
    } finally {
      await first.stop();
    }
  });

  it('a running service\'s stderr is readable from its handle', async () => {
    const h = await startService('ws');
    try {
      expect(h.stderr()).toBe(''); // ws says nothing while it starts
    } finally {
      await h.stop();
    }
    await waitUntil(() => h.stderr().includes('ws: SIGTERM, stopping'), 5000, 'the goodbye on stderr');
  });

  it('keeps the last STDERR_TAIL_CHARS however much a child writes', async () => {
    const child = spawn(process.execPath, ['-e', `process.stderr.write('x'.repeat(${STDERR_TAIL_CHARS * 6}) + 'END')`], { stdio: ['ignore', 'ignore', 'pipe'] });
    const tail = stderrTail(child);
    await new Promise((r) => child.once('close', r));
    await childExited(child);
    expect(tail()).toHaveLength(STDERR_TAIL_CHARS);
    expect(tail().endsWith('xEND')).toBe(true);
  });
});

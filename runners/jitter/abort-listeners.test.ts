import { describe, expect, it } from 'vitest';
import { startService } from '../../services/common/spawn.ts';
import { parseJitterOptions } from './options.ts';
import { runJitter } from './run.ts';

/**
 * Every client's chaos step and reconnect loop naps at the same time; those naps once all listened
 * on one session-wide AbortSignal, so a run of more than 10 clients printed Node's
 * "MaxListenersExceededWarning: Possible EventTarget memory leak detected. 11 abort listeners"
 * (`npm run bench`, issue 35). A real drop run of 30 clients must emit no such warning.
 */
describe('jitter run abort listeners', () => {
  it('a 30-client drop run emits no MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => void warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    const svc = await startService('ws');
    try {
      // 60 x 100 ms = a 6 s window with a drop every 1 s + U(0,5) s: every client has steps pending at once.
      const o = parseJitterOptions({ values: { target: 'ws', clients: '30', msgs: '60', interval: '100', jitter: '1', jitterMs: '200', settle: '1000', seed: '7' }, origin: 'test' });
      const r = await runJitter(o, svc.httpUrl).result;
      expect(r.published).toBe(60);
      // Let the process deliver any warning emitted during the run (it goes out on nextTick).
      await new Promise((res) => setImmediate(res));
      expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await svc.stop();
    }
  });
});

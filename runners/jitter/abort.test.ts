import { describe, expect, it } from 'vitest';
import { startService } from '../../services/common/spawn.ts';
import { parseJitterOptions } from './options.ts';
import { renderReport } from '../../engine/pages/index.ts';
import { jitterModule } from './module.ts';
import { runJitter } from './run.ts';

/** A runner shard shutting down aborts its run: clients closed, publisher stopped, a partial result. */
describe('jitter abort', () => {
  it('stops early, closes every client and reports what was measured', async () => {
    const svc = await startService('ws');
    try {
      const o = parseJitterOptions({ values: { target: 'ws', clients: '20', msgs: '300', interval: '100', jitter: '2', settle: '10000', seed: '3' }, origin: 'test' });
      const abort = new AbortController();
      const run = runJitter(o, svc.httpUrl, { signal: abort.signal });
      run.events.on('phase', (name) => {
        if (name === 'publish') setTimeout(() => abort.abort(), 1500);
      });
      const t0 = Date.now();
      const r = await run.result;
      expect(r.aborted).toBe(true);
      expect(r.published).toBeGreaterThan(0);
      expect(r.published).toBeLessThan(300);
      expect(r.receivedDeliveries).toBeGreaterThan(0);
      // Validity says why the figures are partial, and does not blame the target for what the stop left unsent.
      expect(r.validity.valid).toBe(false);
      // RUNNER_LOOP_LAG (a loaded box: the full suite saw it) blames the runner, never the target, as in the other runner tests.
      expect(r.validity.flags.filter((f) => f.code !== 'RUNNER_LOOP_LAG').map((f) => `${f.code}:${f.severity}`)).toEqual(['ABORTED:fatal']);
      const html = renderReport(r, { command: 'test' }, [jitterModule]);
      expect(html).toContain('The run was stopped before its end');
      expect(html).not.toContain('The target refused');
      // 300 messages at 100 ms would take 30 s plus settle; the abort ends it within seconds.
      expect(Date.now() - t0).toBeLessThan(15_000);
      const connections = async () => ((await (await fetch(`${svc.httpUrl}/metrics`)).json()) as { connections: number }).connections;
      let open = -1;
      for (let i = 0; i < 50 && open !== 0; i++) {
        open = await connections();
        if (open !== 0) await new Promise((res) => setTimeout(res, 100));
      }
      expect(open).toBe(0);
    } finally {
      await svc.stop();
    }
  });
});

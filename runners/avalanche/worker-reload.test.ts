import { describe, expect, it } from 'vitest';
import { parseAvalancheOptions } from './options.ts';
import { runAvalanche } from './run.ts';

/**
 * The replay server's rolling worker reload (`--workers N`, POST /_admin/reload) driven by
 * `--restart rolling`: the primary keeps the port and the history, workers are replaced one at a
 * time, so only the replaced worker's clients drop and they catch up from the primary's history
 * without losing a message.
 */
describe('avalanche --restart rolling on replay --workers 2 (worker reload)', () => {
  it('replaces every worker, the port keeps accepting, nothing is lost or duplicated', async () => {
    const opts = parseAvalancheOptions({ values: { target: 'replay', workers: '2', restart: 'rolling', clients: '20', rate: '10', warmupMs: '1500', publishAfterMs: '4000', recoveryTimeoutMs: '30000', settleMs: '3000', seed: '5', reconnectStrategy: 'tuned' }, origin: 'test' });
    const r = await runAvalanche(opts).result;
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expect(r.restart.ok, r.restart.error ?? '').toBe(true);
    expect(r.restart.variant).toBe('workers');
    expect(r.restart.signal).toBe('reload');
    expect(r.restart.workers).toHaveLength(2);
    for (const w of r.restart.workers) expect(w.newPid).not.toBe(w.oldPid);
    // The primary never stopped accepting on the port.
    expect(r.restart.portProbe!.probes).toBeGreaterThan(0);
    expect(r.restart.portProbe!.refused).toBe(0);
    expect(r.publishFailures).toBe(0);
    // Clients of a replaced worker drop and come back; never all of them at once.
    expect(r.droppedConnections).toBeGreaterThan(0);
    expect(r.neverReconnected).toBe(0);
    expect(Math.min(...r.herd.series.map((p) => p.reconnectedPct))).toBeGreaterThan(0);
    // History lives in the primary: every resubscribe finds it, nothing is lost, nothing twice.
    expect(r.historyNotFound).toBe(0);
    expect(r.lostDeliveries).toBe(0);
    expect(r.duplicates).toBe(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { getTarget } from '../targets/index.ts';
import { steppedClock } from './clock.ts';
import { connectPhase } from './phases/connect.ts';
import { publishPhase } from './phases/publish.ts';
import { allDelivered, settlePhase } from './phases/settle.ts';
import { logLines } from './present.ts';
import { deliveryFields } from './results.ts';
import { RunSession } from './session.ts';
import type { SessionOptions } from './types.ts';

// Real ws server (the reference service on port 0), real clients over loopback.
let svc: ServiceHandle;
beforeAll(async () => {
  svc = await startService('ws');
});
afterAll(async () => {
  await svc?.stop();
});

const session = (o: Partial<SessionOptions> & { clients: number; messages: number }) => {
  const runId = `engine-test-${Math.random().toString(36).slice(2)}`;
  return new RunSession({ target: getTarget('ws'), urlOf: () => svc.httpUrl, runId, stream: runId, seed: 7, ...o });
};

describe('run engine', () => {
  it('connect, publish, settle: the settle predicate ends the wait as soon as every accepted message is in, long before its limit', async () => {
    const s = session({ clients: 4, messages: 10 });
    const lines: string[] = [];
    logLines(s.events, (l) => lines.push(l), 'test');
    try {
      await s.run(connectPhase({ perSec: 200 }));
      expect(s.upCount).toBe(4);
      const pub = await s.run(publishPhase({ url: svc.httpUrl, messages: 10, intervalMs: 10 }));
      expect(pub.result.published).toBe(10);
      const started = Date.now();
      const settled = await s.run(settlePhase({ maxMs: 30_000, stepMs: 20, until: allDelivered(s) }));
      expect(settled.outcome).toBe('done');
      expect(Date.now() - started).toBeLessThan(5000);
      const d = deliveryFields(s, pub.result.published);
      expect(d).toMatchObject({ connectedClients: 4, expectedDeliveries: 40, receivedDeliveries: 40, lostDeliveries: 0, duplicates: 0, deliveryRatePct: 100 });
      // Nothing was lost: the loss-cause report is empty and balances.
      expect(s.lossReport().lossByCause).toEqual({});
      // The presentation subscriber rendered each phase from its event.
      expect(lines.filter((l) => /^test: (connect|publish|settle):/.test(l))).toHaveLength(3);
      expect(lines.some((l) => l.startsWith('test: settled (done)'))).toBe(true);
    } finally {
      s.close();
    }
  });

  it('a settle whose predicate never holds waits its limit, then says timeout; a predicate that holds at the limit says done', async () => {
    const s = session({ clients: 0, messages: 1, clock: steppedClock() });
    expect(await s.run(settlePhase({ maxMs: 1000, stepMs: 100, until: () => false }))).toMatchObject({ outcome: 'timeout', waitedMs: 1000 });
    let checks = 0;
    expect((await s.run(settlePhase({ maxMs: 300, stepMs: 100, until: () => ++checks > 3 }))).outcome).toBe('done');
  });

  it('an injected clock drives phases without real waits: a 10-minute settle finishes in well under a second of wall time', async () => {
    const clock = steppedClock(5_000);
    const s = session({ clients: 0, messages: 1, clock });
    const wall = Date.now();
    const r = await s.run(settlePhase({ maxMs: 600_000, stepMs: 250, until: () => false }));
    expect(r).toEqual({ outcome: 'timeout', waitedMs: 600_000 });
    expect(clock.now()).toBe(5_000 + 600_000);
    expect(Date.now() - wall).toBeLessThan(2000);
  });

  it('the abort signal stops a publish phase mid-schedule and ends the settle at once, with what was measured', async () => {
    const ac = new AbortController();
    const s = session({ clients: 2, messages: 1000, signal: ac.signal });
    try {
      await s.run(connectPhase({ perSec: 200 }));
      setTimeout(() => ac.abort(), 300);
      const wall = Date.now();
      const pub = await s.run(publishPhase({ url: svc.httpUrl, messages: 1000, intervalMs: 20 }));
      // 1000 x 20 ms would take 20 s.
      expect(Date.now() - wall).toBeLessThan(3000);
      expect(pub.result.published).toBeGreaterThan(0);
      expect(pub.result.published).toBeLessThan(1000);
      expect(s.aborted).toBe(true);
      const settled = await s.run(settlePhase({ maxMs: 60_000, until: () => false }));
      expect(settled.outcome).toBe('aborted');
      // A nap after the abort returns at once.
      const t = Date.now();
      await s.nap(10_000);
      expect(Date.now() - t).toBeLessThan(100);
    } finally {
      s.close();
    }
  });

  it('a phase whose config cannot run is refused by validate() before it does anything', async () => {
    const s = session({ clients: 2, messages: 1 });
    await expect(s.run(connectPhase({ perSec: 0 }))).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID' });
    expect(s.clients).toHaveLength(0);
  });

  it('loss while connected is booked as such: a client that never got the messages while its socket stayed up', async () => {
    // Client 1 subscribes to another stream: connected the whole run, it misses every message.
    const runId = `engine-test-${Math.random().toString(36).slice(2)}`;
    const target = getTarget('ws');
    const s = new RunSession({ target, urlOf: () => svc.httpUrl, runId, stream: runId, seed: 1, clients: 2, messages: 5, createClient: (x) => target.createClient(x.index === 1 ? { ...x, stream: `${runId}-other` } : x) });
    try {
      await s.run(connectPhase({ perSec: 200 }));
      const pub = await s.run(publishPhase({ url: svc.httpUrl, messages: 5, intervalMs: 10 }));
      await s.run(settlePhase({ maxMs: 1500, stepMs: 50, until: allDelivered(s) }));
      s.close();
      expect(pub.result.published).toBe(5);
      const loss = s.lossReport();
      expect(loss.lossByCause).toEqual({ lost_while_connected: 5 });
      expect(s.ledger.totals().lostDeliveries).toBe(5);
    } finally {
      s.close();
    }
  });
});

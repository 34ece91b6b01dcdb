import { afterEach, describe, expect, it } from 'vitest';
import { LosesOneAnswer, startTestServer, type TestServer } from '../../services/replay-server/testing.ts';
import { parseJitterOptions } from './options.ts';
import { runJitter } from './run.ts';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

describe('jitter runner: a message stored but never acknowledged', () => {
  it('arrives, is counted in unconfirmedDeliveries outside expected and the rates, and the run is valid with UNCONFIRMED_DELIVERED', async () => {
    const broker = new LosesOneAnswer(12);
    const t: TestServer = await startTestServer({}, { broker });
    cleanup.push(() => t.close());
    const opts = parseJitterOptions({ values: { target: 'replay', clients: '6', msgs: '40', interval: '150', jitter: '1', 'jitter-ms': '500', ramp: '200', settle: '6000', seed: '5', 'allow-publish-failures': 'true', 'reconnect-strategy': 'tuned' }, origin: 'test' });
    const r = await runJitter(opts, t.httpUrl).result;
    expect(r.publishFailures).toBe(1);
    expect(r.published).toBe(39);
    expect(r.publishFailureSamples).toEqual([expect.stringMatching(/^seq 12: HTTP 503/)]);
    // Stored, so in history: every client gets it, live or replayed after its drop.
    expect(r.unconfirmedDeliveries).toBe(6);
    expect(r.unacceptedDeliveries).toBe(6);
    expect(r.receivedDeliveries).toBe(r.expectedDeliveries + 6);
    expect(r.lostDeliveries).toBe(0);
    expect(r.deliveryRatePct).toBe(100);
    expect(r.deliveryRateOfConnectedPct).toBe(100);
    expect(r.validity.flags.map((f) => [f.code, f.severity])).toEqual(expect.arrayContaining([['UNCONFIRMED_DELIVERED', 'warning'], ['PARTIAL_PUBLISH', 'warning']]));
    expect(r.validity.flags.map((f) => f.code)).not.toContain('RECEIVED_OVER_EXPECTED');
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
  }, 60_000);
});

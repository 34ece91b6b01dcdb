import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { withTarget } from '../../engine/measure/local-target.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { parseJitterOptions } from './options.ts';
import { comparisonRows } from './table.ts';
import { runJitter } from './run.ts';
import type { JitterResult } from './result.ts';

/**
 * A real broadcast front: forwards each POST to the target's /_broadcast, except the seqs in
 * `refuse`, which it answers 500 without forwarding (the target never sees them).
 */
async function refusingFront(targetUrl: string, refuse: Set<number>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const seq = (JSON.parse(JSON.parse(body).data) as { seq: number }).seq;
      if (refuse.has(seq)) {
        res.statusCode = 500;
        return res.end();
      }
      fetch(`${targetUrl}/_broadcast`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
        (r) => ((res.statusCode = r.status), res.end()),
        () => ((res.statusCode = 502), res.end()),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/_broadcast`, server };
}

const fronts: Server[] = [];
afterAll(() => fronts.forEach((s) => s.close()));

describe('jitter run: messages the target did not accept', () => {
  const runs = withTarget(getTarget('ws'), undefined, async (url) => {
    const front = await refusingFront(url, new Set([3, 7]));
    fronts.push(front.server);
    const base = { target: 'ws', clients: 5, msgs: 10, interval: 40, jitter: 0, settle: 2000, seed: 7, broadcastUrl: front.url };
    const strict = await runJitter(parseJitterOptions({ values: base, origin: 'test' }), url).result;
    const allowed = await runJitter(parseJitterOptions({ values: { ...base, allowPublishFailures: true }, origin: 'test' }), url).result;
    return [strict, allowed] as const;
  });

  it('are reported as publisher failures by cause and are not the target\'s loss', async () => {
    const [r] = await runs;
    expect(r).toMatchObject({ published: 8, publishFailures: 2, publishFailureCauses: { 'HTTP 500': 2 }, expectedDeliveries: 40, receivedDeliveries: 40, lostDeliveries: 0, unacceptedDeliveries: 0, deliveryRatePct: 100, deliveryRateOfConnectedPct: 100 });
    expect(r.publishFailureSamples).toEqual(['seq 3: HTTP 500', 'seq 7: HTTP 500']);
    expect(comparisonRows([r])).toContainEqual(['Messages accepted', '8 of 10 (not accepted: HTTP 500 x2)']);
  });

  it('make the run invalid (PARTIAL_PUBLISH fatal) unless --allow-publish-failures says the run is about them', async () => {
    const [strict, allowed] = await runs;
    const flag = (r: JitterResult) => r.validity.flags.find((f) => f.code === 'PARTIAL_PUBLISH');
    expect(flag(strict)).toMatchObject({ severity: 'fatal' });
    expect(strict.validity.valid).toBe(false);
    expect(flag(allowed)).toMatchObject({ severity: 'warning' });
    expect(allowed.validity.valid).toBe(true);
    expect(allowed.allowPublishFailures).toBe(true);
  });
});

describe('jitter run: manual targets and their offline floor', () => {
  it('a floor of 0 (ws) is honoured after a network loss: the first reconnect is immediate, not 1 s later', async () => {
    // One proxy group partitioned for 1.5 s from ~5 s in. Reconnects are refused while it lasts and
    // retried every 1 s: starting at once, a client fails twice (~0 s and ~1 s) before it gets
    // back at ~2 s; starting 1 s late (the old `|| 1000`), it fails only once.
    const opts = parseJitterOptions({ values: { target: 'ws', plan: 'partition', groups: 1, chaosMs: 1500, clients: 4, msgs: 70, interval: 100, jitter: 0.1, settle: 5000, seed: 11 }, origin: 'test' });
    expect(getTarget('ws').offlineFloorMs).toBe(0);
    const r = await withTarget(getTarget('ws'), undefined, (url) => runJitter(opts, url).result);
    const partition = r.chaos.disruptions.find((d) => d.kind === 'partition')!;
    expect(partition.affectedClients).toBe(4);
    expect(partition.unrecovered).toBe(0);
    expect(r.reconnectFailures).toBeGreaterThanOrEqual(2 * partition.affectedClients);
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAvalancheOptions } from './options.ts';
import { avalancheRows } from './table.ts';
import { runAvalanche } from './run.ts';

/**
 * The loss breakdown adds up to its total on a real avalanche (ws server on port 0, SIGKILL and
 * respawn) whose publisher sees some messages refused that the target did broadcast: a front
 * forwards every POST to the target and answers 500 for seqs 2 and 3 after forwarding them.
 */
let targetUrl = '';
const front: Server = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    const seq = (JSON.parse(JSON.parse(body).data) as { seq: number }).seq;
    fetch(`${targetUrl}/_broadcast`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
      (r) => ((res.statusCode = seq === 2 || seq === 3 ? 500 : r.status), res.end()),
      () => ((res.statusCode = 502), res.end()),
    );
  });
});
afterAll(() => front.close());

describe('avalanche loss breakdown', () => {
  it('"refused while down" + "accepted, not delivered" = "Deliveries lost"; refused messages that arrived anyway have their own row', { timeout: 90_000 }, async () => {
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    const broadcastUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}/_broadcast`;
    const o = parseAvalancheOptions({ values: { target: 'ws', clients: '10', rate: '10', warmupMs: '1500', publishAfterMs: '3000', recoveryTimeoutMs: '20000', settleMs: '1000', seed: '5', broadcastUrl }, origin: 'test' }, {});
    const run = runAvalanche(o, {});
    // The front learns the local target's address when the runner connects to it (before publishing).
    run.events.on('phase', (name, detail) => {
      if (name === 'connect') targetUrl = /(http:\/\/127\.0\.0\.1:\d+)/.exec(detail)![1]!;
    });
    const r = await run.result;
    // Seqs 2 and 3 went out during warm-up: all 10 clients got them, the publisher counted them
    // refused. (A broadcast the server fanned out just before the kill, answered 502, is another.)
    expect(r.unacceptedDeliveries).toBeGreaterThanOrEqual(20);
    expect(r.lostDeliveries).toBeGreaterThan(0); // ws is at-most-once: the restart cost messages
    expect(r.lostDeliveries).toBe(r.lostAcceptedDeliveries + r.lostUnpublishedDeliveries - r.unacceptedDeliveries);
    const rows = avalancheRows([r]);
    const cell = (label: string) => Number(rows.find((x) => x[0] === label)![1]!.replace(/,/g, ''));
    expect(cell('  refused while down') + cell('  accepted, not delivered')).toBe(cell('Deliveries lost'));
    expect(cell('Refused, delivered anyway')).toBe(r.unacceptedDeliveries);
  });
});

import { describe, expect, it } from 'vitest';
import { withTarget } from '../measure/local-target.ts';
import { uwsAvailability } from '../../services/uws/load.ts';
import { getTarget, leanClientFor } from './index.ts';
import { LeanStage } from './lean-client.ts';

/** The lean clients speak each local target's real wire: subscribe, receive a broadcast, close. */
describe('lean clients', () => {
  for (const target of ['ws', ...(uwsAvailability().available ? ['uws'] : []), 'socketio', 'socketio-csr', 'replay']) {
    it(`subscribes and receives a broadcast from ${target}`, async () => {
      await withTarget(getTarget(target), undefined, async (url) => {
        const make = leanClientFor(target)!;
        const clients = [0, 1, 2].map((i) => make({ index: i, url, stream: 'lean-s', localAddress: `127.0.0.${i + 1}` }));
        const got: string[][] = clients.map(() => []);
        const values: unknown[] = [];
        clients.forEach((c, i) => c.on('message', (m) => got[i]!.push(m.data) && i === 0 && values.push(m.value)));
        await Promise.all(clients.map((c) => c.connect()));
        expect(clients.every((c) => c.stage === LeanStage.Subscribed)).toBe(true);
        const data = JSON.stringify({ seq: 1, sentAt: Date.now(), runId: 'lean' });
        const res = await fetch(`${url}/_broadcast`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ stream: 'lean-s', data }) });
        expect(res.status).toBe(201);
        const end = Date.now() + 5000;
        while (got.some((g) => g.length === 0) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
        for (const g of got) expect(JSON.parse(g[0]!)).toEqual(JSON.parse(data));
        expect(values[0]).toEqual(target === 'replay' ? JSON.parse(data) : undefined);
        // Frames larger than the shared receive buffer, for three sockets reading into it in turn:
        // each client must reassemble its own bytes exactly.
        const big = [0, 1, 2].map((k) => JSON.stringify({ seq: 2 + k, sentAt: Date.now(), runId: 'lean', pad: String(k).repeat(150_000 + k) }));
        for (const b of big) expect((await fetch(`${url}/_broadcast`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ stream: 'lean-s', data: b }) })).status).toBe(201);
        const end2 = Date.now() + 10_000;
        while (got.some((g) => g.length < 4) && Date.now() < end2) await new Promise((r) => setTimeout(r, 20));
        for (const g of got) expect(g.slice(1).map((x) => JSON.parse(x))).toEqual(big.map((b) => JSON.parse(b)));
        const closed = clients.map((c) => new Promise<string>((r) => c.on('disconnected', ({ reason }) => r(reason))));
        expect(clients[0]!.drop()).toBe(true);
        clients.slice(1).forEach((c) => c.close());
        expect(await Promise.all(closed)).toEqual(['dropped', 'closed', 'closed']);
      });
    });
  }

  it('fails connect() on a refused connection with the errno the runner classifies', async () => {
    const c = leanClientFor('ws')!({ index: 0, url: 'http://127.0.0.1:1', stream: 's' });
    await expect(c.connect()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

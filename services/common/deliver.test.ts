/**
 * The shared edge with an asynchronous fan-out (a broker in another process): 201 only once the
 * delivery settled, its failure answered in the error shape. Real HTTP on port 0.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ReboundError } from '../../lib/errors.ts';
import type { Broadcast } from './broadcast.ts';
import { createServiceApp } from './http-app.ts';

let server: Server | undefined;
let closeApp: (() => void) | undefined;
afterEach(async () => {
  closeApp?.();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

async function start(deliver: (b: Broadcast[]) => void | Promise<void>) {
  const { app, close } = createServiceApp({ name: 't', deliver, stats: () => ({}) });
  closeApp = close;
  server = createServer(app);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
const post = (url: string) => fetch(`${url}/_broadcast`, { method: 'POST', body: '{"stream":"s","data":"x"}', headers: { 'content-type': 'application/json' } });

describe('asynchronous deliver', () => {
  it('201 waits until the delivery resolved', async () => {
    let stored = false;
    const url = await start(() => new Promise<void>((r) => setTimeout(() => ((stored = true), r()), 150)));
    const res = await post(url);
    expect(stored).toBe(true);
    expect(res.status).toBe(201);
  });

  it('a rejected delivery answers its error in the one shape and counts as rejected', async () => {
    const url = await start(async () => {
      throw new ReboundError('RR_ERR_INTERNAL', 'store failed');
    });
    const res = await post(url);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ statusCode: 500, error: 'Internal Server Error', code: 'RR_ERR_INTERNAL', message: 'store failed' });
    const m = (await (await fetch(`${url}/metrics`)).json()) as Record<string, number>;
    expect(m).toMatchObject({ broadcastRejected: 1, broadcastsAccepted: 0 });
  });
});

import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBearer } from '../../lib/bearer.ts';
import { createRunnerApp } from './app.ts';
import { OPEN_ROUTES } from './auth.ts';
import { benchRoutes } from './routes.ts';
import { tempResultsDir } from './testing.ts';

const TOKEN = 'auth-test-token-0123456789abcdef';

/** Raw request: fetch would normalise `//`, dot segments and some percent-encodings away. */
function raw(port: number, method: string, path: string, auth?: string): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: auth ? { authorization: auth } : {} }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('runner auth: deny by default', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    const { app } = createRunnerApp({ token: TOKEN, resultsDir: tempResultsDir() });
    server = createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const bypasses: [string, string][] = [
    ['POST', '/BENCH-latency-ws?n=1&msgs=1&async=1'],
    ['POST', '/Bench-Latency-Ws?n=1&msgs=1&async=1'],
    ['POST', '/bench-latency-ws/?n=1&msgs=1&async=1'],
    ['POST', '//bench-latency-ws?n=1&msgs=1&async=1'],
    ['POST', '/%62ench-latency-ws?n=1&msgs=1&async=1'],
    ['POST', '/./bench-latency-ws?n=1'],
    ['GET', '/JOBS'],
    ['GET', '/Jobs/'],
    ['GET', '/jobs/'],
    ['GET', '//jobs'],
    ['GET', '/%6aobs'],
    ['GET', '/Results/0123456789ab'],
    ['GET', '/REPORTS/0123456789ab'],
    ['GET', '/results/0123456789ab/'],
    ['HEAD', '/jobs'],
    ['OPTIONS', '/jobs'],
    ['OPTIONS', '/bench-latency-ws'],
    ['HEAD', '/health'],
    ['OPTIONS', '/health'],
    ['POST', '/health'],
    ['GET', '/health/'],
    ['GET', '/HEALTH'],
    ['GET', '/%68ealth'],
    ['GET', '//health'],
    ['GET', '/Time'],
    ['GET', '/time/'],
    ['GET', '/nosuch'],
    ['DELETE', '/jobs/0123456789ab'],
  ];
  const table: [string, string][] = [
    ...benchRoutes().map((r): [string, string] => ['POST', `${r.path}?n=1&async=1`]),
    ['GET', '/jobs'],
    ['GET', '/jobs/0123456789ab'],
    ['GET', '/jobs/0123456789ab?follow=1'],
    ['GET', '/results/0123456789ab'],
    ['GET', '/reports/0123456789ab'],
  ];

  it.each([...bypasses, ...table])('%s %s: 401 without a token and with a wrong one', async (method, path) => {
    const none = await raw(port, method, path);
    expect(none.status, none.body).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    if (method !== 'HEAD') expect(JSON.parse(none.body)).toMatchObject({ code: 'RR_ERR_AUTH_MISSING' });
    for (const bad of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, 'Bearer ', `Basic ${TOKEN}`, TOKEN]) {
      const r = await raw(port, method, path, bad);
      expect(r.status, `${bad}: ${r.body}`).toBe(401);
    }
  });

  it.each(bypasses.filter(([m]) => m !== 'HEAD' && m !== 'OPTIONS'))('%s %s with the token: 404, never a run', async (method, path) => {
    const r = await raw(port, method, path, `Bearer ${TOKEN}`);
    expect(r.status, r.body).toBe(404);
  });

  it('only GET /health and GET /time are open, exactly as spelled', async () => {
    expect(OPEN_ROUTES).toEqual(['GET /health', 'GET /time']);
    expect((await raw(port, 'GET', '/health')).status).toBe(200);
    expect((await raw(port, 'GET', '/health?x=1')).status).toBe(200);
    expect((await raw(port, 'GET', '/time')).status).toBe(200);
  });

  it('with the token, the real routes answer', async () => {
    expect((await raw(port, 'GET', '/jobs', `Bearer ${TOKEN}`)).status).toBe(200);
    expect((await raw(port, 'GET', '/jobs/0123456789ab', `bearer   ${TOKEN}`)).status).toBe(404);
  });
});

describe('checkBearer (lib/bearer.ts)', () => {
  it('accepts only the exact key; length differences and an empty key never pass', () => {
    expect(checkBearer('Bearer k3y', 'k3y')).toBeUndefined();
    expect(checkBearer('bearer k3y ', 'k3y')).toBeUndefined();
    expect(checkBearer(undefined, 'k3y')?.code).toBe('RR_ERR_AUTH_MISSING');
    for (const h of ['Bearer k3', 'Bearer k3yy', 'Bearer K3Y', 'Bearer k3y extra', 'k3y', 'Basic k3y', 'Bearer ']) expect(checkBearer(h, 'k3y')?.code, h).toBe('RR_ERR_AUTH_INVALID');
    expect(checkBearer('Bearer ', '')?.code).toBe('RR_ERR_AUTH_INVALID');
  });
});

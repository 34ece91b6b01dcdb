import { describe, expect, it } from 'vitest';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { registerTimeRoute } from '../runner/time-route.ts';
import { combineClock, measureOffset } from './clock.ts';

describe('NTP-style clock exchange', () => {
  it('against the runner\'s real GET /time on the same machine, the offset is zero within its uncertainty', async () => {
    const app = express();
    registerTimeRoute(app);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const s = await measureOffset(url, 8);
      expect(s.rttMs).toBeGreaterThan(0);
      expect(Math.abs(s.offsetMs)).toBeLessThanOrEqual(s.rttMs / 2 + 0.01);
    } finally {
      server.close();
    }
  });

  it('drift between before and after widens the uncertainty', () => {
    const c = combineClock({ offsetMs: 10, rttMs: 2 }, { offsetMs: 16, rttMs: 4 });
    expect(c).toEqual({ offsetMs: 13, uncertaintyMs: 5, rttMs: 2, beforeMs: 10, afterMs: 16 });
  });

  it('a shard without /time fails the exchange with a clear message', async () => {
    const app = express();
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      await expect(measureOffset(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 2)).rejects.toThrow(/GET \/time answered 404/);
    } finally {
      server.close();
    }
  });
});

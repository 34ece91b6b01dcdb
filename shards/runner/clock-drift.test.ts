import { describe, expect, it } from 'vitest';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { withClockDrift, type RunClocks } from './clock-drift.ts';
import { registerTimeRoute } from './time-route.ts';

describe('clock drift over a run', () => {
  it('an injected wall-clock step of +5 s mid-run is reported against the monotonic clock', async () => {
    let mono = 0;
    let step = 0;
    const clocks: RunClocks = { wall: () => 1_700_000_000_000 + mono + step, monotonic: () => mono };
    const r = await withClockDrift(async () => {
      mono += 100;
      step = 5000;
      mono += 100;
      return { ok: true };
    }, clocks);
    expect(r.ok).toBe(true);
    expect(r.clockDrift).toMatchObject({ wallMs: 5200, monotonicMs: 200, endStepMs: 5000, maxStepMs: 5000 });
  });

  it('a step that was stepped back before the end is still caught by the samples', async () => {
    let mono = 0;
    let step = 0;
    const clocks: RunClocks = { wall: () => 1e12 + mono + step, monotonic: () => mono };
    const r = await withClockDrift(async () => {
      step = -3000;
      await new Promise((res) => setTimeout(res, 60));
      step = 0;
      return {};
    }, clocks, 10);
    expect(r.clockDrift.endStepMs).toBe(0);
    expect(r.clockDrift.maxStepMs).toBe(3000);
  });

  it('an undisturbed run reports no step', async () => {
    const r = await withClockDrift(async () => (await new Promise((res) => setTimeout(res, 50)), {}));
    expect(r.clockDrift.maxStepMs).toBeLessThan(5);
  });

  it('GET /time serves Date.now(), the clock that stamps messages', async () => {
    const app = express();
    registerTimeRoute(app);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const before = Date.now();
      const body = (await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/time`)).json()) as { now: number };
      expect(Number.isInteger(body.now)).toBe(true);
      expect(body.now).toBeGreaterThanOrEqual(before);
      expect(body.now).toBeLessThanOrEqual(Date.now());
    } finally {
      server.close();
    }
  });
});

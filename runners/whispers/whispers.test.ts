import { describe, expect, it } from 'vitest';
import { withTarget } from '../../engine/measure/local-target.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { parseWhispersOptions } from './options.ts';
import { runWhispers } from './run.ts';


const small = (target: string) => parseWhispersOptions({ values: { target, n: '24', rooms: '3', interval: '100', duration: '1.5', ramp: '200', settle: '3000' }, origin: 'test' });

describe('whispers runner', () => {
  it('replay: every whisper reaches every other member of its room, never the sender', async () => {
    const o = small('replay');
    const r = await withTarget(getTarget('replay'), undefined, (url) => runWhispers(o, url));
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expect(r.initiallyConnected).toBe(24);
    expect(r.whispersSent).toBe(24 * 15);
    // 3 rooms of 8: each whisper goes to 7 peers.
    expect(r.expectedReceived).toBe(24 * 15 * 7);
    expect(r.whispersReceived).toBe(r.expectedReceived);
    expect(r.lossByCause).toEqual({});
    expect(r.deliveryRatePct).toBe(100);
    expect(r.duplicates).toBe(0);
    expect(r.latencyHistogram.count).toBe(r.whispersReceived);
    expect(r.latencyMs.p99).toBeGreaterThanOrEqual(r.latencyMs.p50);
  });

  for (const target of ['socketio', 'ws']) {
    it(`${target}: whispers reach the room's other members through the server's whisper relay`, async () => {
      const o = small(target);
      const r = await withTarget(getTarget(target), undefined, (url) => runWhispers(o, url));
      expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
      expect(r.expectedReceived).toBe(24 * 15 * 7);
      expect(r.whispersReceived).toBe(r.expectedReceived);
      expect(r.duplicates).toBe(0);
    });
  }

  it('a server killed mid-run: every missing whisper gets one cause from its member\'s timeline, the members never came back', { timeout: 30_000 }, async () => {
    const { startService } = await import('../../services/common/spawn.ts');
    const svc = await startService('ws');
    try {
      const o = parseWhispersOptions({ values: { target: 'ws', n: '6', rooms: '2', interval: '100', duration: '2', ramp: '200', settle: '500' }, origin: 'test' });
      const running = runWhispers(o, svc.httpUrl);
      setTimeout(() => void svc.kill('SIGKILL'), 1500);
      const r = await running;
      expect(r.lostDeliveries).toBeGreaterThan(0);
      expect(Object.values(r.lossByCause!).reduce((a, b) => a + b, 0)).toBe(r.lostDeliveries);
      // Whisper clients do not reconnect: what was sent after the kill is "not back by the end".
      expect(r.lossByCause!.not_back_by_end).toBeGreaterThan(0);
    } finally {
      await svc.stop().catch(() => {});
    }
  });

  it('answers "not supported by this target" for targets without a whisper client', () => {
    let err: unknown;
    try {
      parseWhispersOptions({ values: { target: 'replay', n: '10' }, origin: 'test' }, { supported: () => false });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'RR_ERR_TARGET_UNSUPPORTED', message: expect.stringContaining('not supported by this target') });
  });
});

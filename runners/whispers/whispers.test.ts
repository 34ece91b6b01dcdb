import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { withTarget } from '../core/local-target.ts';
import { getTarget } from '../targets/index.ts';
import { parseWhispersOptions } from './options.ts';
import { runWhispers } from './run.ts';

/** Whether services/socketio relays the benchmark's `whisper` event yet (another branch adds it). */
const SOCKETIO_HAS_WHISPER = readFileSync(new URL('../../services/socketio/server.ts', import.meta.url), 'utf8').includes("'whisper'");

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
    expect(r.deliveryRatePct).toBe(100);
    expect(r.duplicates).toBe(0);
    expect(r.latencyHistogram.count).toBe(r.whispersReceived);
    expect(r.latencyMs.p99).toBeGreaterThanOrEqual(r.latencyMs.p50);
  });

  it.skipIf(!SOCKETIO_HAS_WHISPER)('socketio: whispers through the server event `whisper` (room, payload) [skipped until services/socketio relays `whisper`, added on the refsvc branch]', async () => {
    const o = small('socketio');
    const r = await withTarget(getTarget('socketio'), undefined, (url) => runWhispers(o, url));
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expect(r.whispersReceived).toBe(r.expectedReceived);
    expect(r.expectedReceived).toBe(24 * 15 * 7);
  });

  it('answers "not supported by this target" for protocols without whispers', () => {
    expect(() => small('ws')).toThrow(/not supported by this target/);
    try {
      small('ws');
    } catch (err) {
      expect((err as { code: string }).code).toBe('RR_ERR_TARGET_UNSUPPORTED');
    }
  });
});

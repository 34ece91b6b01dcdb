import { Manager, type Socket } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import { tunedReconnect } from './anycable.ts';
import { backoffCeilingMs, socketIoBackoff, SOCKETIO_DEFAULT_BACKOFF, TUNED_BACKOFF } from './reconnect.ts';
import { socketIoCsrTarget } from './socketio.ts';

/** Draw `n` delays for attempt k from socket.io-client's own Backoff (the one its Manager reconnects with). */
function socketIoDelays(opts: ReturnType<typeof socketIoBackoff>, attempt: number, n: number): number[] {
  const m = new Manager('http://127.0.0.1:1', { autoConnect: false, ...opts });
  const backoff = (m as unknown as { backoff: { attempts: number; duration(): number } }).backoff;
  return Array.from({ length: n }, () => {
    backoff.attempts = attempt;
    return backoff.duration();
  });
}

describe('one tuned strategy for every library-driven client', () => {
  it('the AnyCable client and socket.io-client draw attempt k from the same range [0, min(5 s, 500 ms x 2^k)]', () => {
    expect(TUNED_BACKOFF).toEqual({ baseMs: 500, factor: 2, capMs: 5000 });
    for (let k = 0; k <= 6; k++) {
      const ceiling = backoffCeilingMs(TUNED_BACKOFF, k);
      expect(tunedReconnect(() => 0.999999)(k)).toBeCloseTo(ceiling, -1);
      expect(tunedReconnect(() => 0)(k)).toBe(0);
      const sio = socketIoDelays(socketIoBackoff('tuned'), k, 4000);
      const mean = sio.reduce((a, b) => a + b, 0) / sio.length;
      expect(Math.max(...sio)).toBeLessThanOrEqual(ceiling);
      expect(Math.max(...sio)).toBeGreaterThan(0.9 * ceiling);
      // Uncapped attempts: full jitter's spread and mean (half the ceiling). From attempt 4 socket.io
      // clamps its upper half at the cap instead, so those draws sit in [0.08, 1] x 5 s.
      if (ceiling * 2 <= TUNED_BACKOFF.capMs) {
        expect(Math.min(...sio)).toBeLessThan(0.1 * ceiling);
        expect(Math.abs(mean - ceiling / 2)).toBeLessThan(0.05 * ceiling);
      }
    }
  });

  it('the CSR adapter hands socket.io-client the shared backoff for tuned and keeps its own for default', async () => {
    const open = (strategy: string) => {
      // Port 1 refuses: the Manager exists (and retries) without a server; we only read its settings.
      const c = socketIoCsrTarget.createClient({ index: 0, url: 'http://127.0.0.1:1', stream: 's', reconnectStrategy: strategy });
      void c.connect().catch(() => {});
      const mgr = (c as unknown as { socket: Socket }).socket.io;
      const got = { reconnectionDelay: mgr.reconnectionDelay(), reconnectionDelayMax: mgr.reconnectionDelayMax(), randomizationFactor: mgr.randomizationFactor() };
      c.close();
      return got;
    };
    expect(open('tuned')).toEqual({ reconnectionDelay: 250, reconnectionDelayMax: 5000, randomizationFactor: 1 });
    expect(open('tuned')).toEqual(socketIoBackoff('tuned'));
    expect(open('default')).toEqual(SOCKETIO_DEFAULT_BACKOFF);
  });

  it('rejects an unknown strategy name', () => {
    expect(() => socketIoBackoff('warp')).toThrow(/unknown reconnect strategy "warp"/);
  });
});

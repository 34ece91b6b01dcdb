import { describe, expect, it } from 'vitest';
import { withTarget } from '../../engine/measure/local-target.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { done } from '../../shards/merge/fixtures.ts';
import { mergeShards } from '../../shards/merge/merge.ts';
import { resultProblem } from '../../shards/merge/schema.ts';
import { startWsRelay } from '../../services/common/test-clients.ts';
import { startTestServer } from '../../services/replay-server/testing.ts';
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
    expect(r.whispersNotSent).toBe(0);
    // 3 rooms of 8: each whisper goes to 7 peers.
    expect(r.expectedReceived).toBe(24 * 15 * 7);
    expect(r.whispersReceived).toBe(r.expectedReceived);
    expect(r.roomsWithoutPeers).toBe(0);
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

  it('a room with one member: its whispers expect no receiver and it counts in roomsWithoutPeers, which the coordinator adds over shards', async () => {
    // 5 clients in 3 rooms: 2, 2 and 1 members.
    const o = parseWhispersOptions({ values: { target: 'replay', n: '5', rooms: '3', interval: '100', duration: '1', ramp: '200', settle: '2000' }, origin: 'test' });
    const r = await withTarget(getTarget('replay'), undefined, (url) => runWhispers(o, url));
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expect(r.roomsWithoutPeers).toBe(1);
    expect(r.expectedReceived).toBe(4 * 10);
    expect(resultProblem(r)).toBeUndefined();
    const { merged } = await mergeShards([done('s1', r), done('s2', r)]);
    expect(merged.roomsWithoutPeers).toBe(2);
    expect(resultProblem({ ...r, roomsWithoutPeers: 0.5 })).toBe('roomsWithoutPeers is 0.5, not an integer >= 0');
    expect(resultProblem({ ...r, roomsWithoutPeers: 4 })).toBe('roomsWithoutPeers 4 exceeds rooms 3');
  });

  it('a server killed mid-run: the members are down and send nothing more (whispersNotSent); what was in flight is not back by the end', { timeout: 30_000 }, async () => {
    const { startService } = await import('../../services/common/spawn.ts');
    const svc = await startService('ws');
    try {
      const o = parseWhispersOptions({ values: { target: 'ws', n: '6', rooms: '2', interval: '100', duration: '2', ramp: '200', settle: '500' }, origin: 'test' });
      const running = runWhispers(o, svc.httpUrl);
      setTimeout(() => void svc.kill('SIGKILL'), 1500);
      const r = await running;
      expect(Object.values(r.lossByCause ?? {}).reduce((a, b) => a + b, 0)).toBe(r.lostDeliveries);
      // Whisper clients do not reconnect: after the kill every member is down and sends nothing.
      // What was due then is counted apart, not as the peers' loss.
      expect(r.whispersNotSent).toBeGreaterThan(0);
      expect(r.whispersSent + r.whispersNotSent).toBe(6 * 20);
      expect(r.validity.flags.map((f) => f.code)).toContain('WHISPERS_NOT_SENT');
      // Only what was in flight at the kill can be lost, and nobody came back for it.
      expect(r.lossByCause?.lost_while_connected ?? 0).toBe(0);
    } finally {
      await svc.stop().catch(() => {});
    }
  });

  it('a member the server sends away (disconnect with reconnect: false) is gone: what it misses is not back by the end', { timeout: 30_000 }, async () => {
    const t = await startTestServer({});
    // The relay says it to the first member 800 ms after it connected; the official client then closes for good.
    const relay = await startWsRelay(t.httpUrl, '/cable', { onOpen: (client, i) => void (i === 0 && setTimeout(() => client.send('{"type":"disconnect","reason":"remote","reconnect":false}'), 800)) });
    try {
      const o = parseWhispersOptions({ values: { target: 'replay', n: '6', rooms: '2', interval: '100', duration: '2', ramp: '200', settle: '500' }, origin: 'test' });
      const r = await runWhispers(o, relay.url);
      expect(r.lostDeliveries).toBeGreaterThan(0);
      expect(Object.values(r.lossByCause!).reduce((a, b) => a + b, 0)).toBe(r.lostDeliveries);
      // Its peers' whispers after it left: before 31de50e these were "lost while connected".
      expect(r.lossByCause, JSON.stringify(r.lossByCause)).toEqual({ not_back_by_end: r.lostDeliveries });
      expect(r.lostDeliveries).toBeGreaterThanOrEqual(30);
      // Its own whispers while away were never sent: not its peers' loss.
      expect(r.whispersNotSent).toBeGreaterThan(0);
    } finally {
      await relay.close();
      await t.close();
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

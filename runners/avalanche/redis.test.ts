import { beforeAll, describe, expect, it } from 'vitest';
import { useTestRedisEnv } from '../../services/common/redis-test-env.ts';
import { compareAvalanche, AVALANCHE_COMPARE_OPTIONS } from './compare.ts';
import { parseOptions } from '../../lib/options.ts';
import { parseAvalancheOptions } from './options.ts';
import type { AvalancheResult } from './result.ts';
import { runAvalanche } from './run.ts';

/**
 * Avalanche tables at small scale for the Redis targets, on a real redis-server of the test's own
 * (REDIS_URL, inherited by the nodes the runner starts): the goal shape (kill one of two
 * nodes behind a front, clients of the killed node move to the survivor) and a full restart of
 * every node while Redis stays.
 */
useTestRedisEnv();

const SMALL = { clients: '20', rate: '10', warmupMs: '1500', publishAfterMs: '3000', recoveryTimeoutMs: '20000', settleMs: '3000', seed: '1313' };

function expectExactlyOnce(r: AvalancheResult): void {
  expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
  expect(r.neverReconnected).toBe(0);
  expect(r.lostAcceptedDeliveries, 'accepted, not delivered').toBe(0);
  expect(r.duplicates).toBe(0);
  expect(r.outOfOrder).toBe(0);
  expect(r.receivedDeliveries + r.lostDeliveries).toBe(r.expectedDeliveries);
}

// The first test waits for the whole comparison (four targets, ~45 s alone, more on a loaded box).
describe('avalanche on Redis: kill one of two nodes behind a front (the goal shape, small)', { timeout: 180_000 }, () => {
  // Started once REDIS_URL names the test's Redis (collection runs before beforeAll).
  let results: Promise<AvalancheResult[]>;
  beforeAll(() => {
    results = compareAvalanche(
      parseOptions(AVALANCHE_COMPARE_OPTIONS, { values: { ...SMALL, targets: 'replay-redis:2,socketio-redis:2,socketio-csr-redis:2,replay', restart: 'kill', restartNodes: '1', front: true }, origin: 'test' }),
      () => {},
    );
    results.catch(() => {}); // reported by the tests that await it
  });
  const byName = async (n: string) => (await results).find((r) => r.target === n)!;

  it('replay-redis: only the killed node\'s clients drop, all resume on a live node, every message exactly once', async () => {
    const r = await byName('replay-redis');
    expectExactlyOnce(r);
    expect(r.params).toMatchObject({ nodes: 2, restartNodes: 1, front: true });
    expect(r.restart.nodes.map((n) => n.node)).toEqual([1]);
    // The front spread the clients (and the publisher's connection) over both nodes.
    expect(r.front!.activeAtRestart.every((n) => n > 0)).toBe(true);
    expect(r.droppedConnections).toBeGreaterThan(0);
    expect(r.droppedConnections).toBeLessThan(r.initiallyConnected);
    expect(r.resumedReconnects).toBe(r.droppedConnections);
    expect(r.historyNotFound).toBe(0);
    // A node of the service stayed up: the publisher lost nothing either.
    expect(r.lostDeliveries).toBe(0);
    expect(r.deliveryRatePct).toBe(100);
  });

  it('socketio-redis loses what was published while its clients were away (at-most-once)', async () => {
    const r = await byName('socketio-redis');
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expect(r.neverReconnected).toBe(0);
    expect(r.droppedConnections).toBeLessThan(r.initiallyConnected);
    expect(r.lostAcceptedDeliveries).toBeGreaterThan(0);
    expect(r.resumedReconnects).toBe(0);
  });

  it('socketio-csr-redis: a SIGKILLed node never stored its sessions, so nothing is recovered', async () => {
    const r = await byName('socketio-csr-redis');
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expect(r.neverReconnected).toBe(0);
    expect(r.resumedReconnects).toBe(0);
    expect(r.lostAcceptedDeliveries).toBeGreaterThan(0);
  });

  it('replay on its memory broker (one node): history gone with the process', async () => {
    const r = await byName('replay');
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expect(r.droppedConnections).toBe(r.initiallyConnected);
    expect(r.historyNotFound).toBeGreaterThan(0);
    expect(r.lostAcceptedDeliveries).toBeGreaterThan(0);
  });
});

describe('avalanche on Redis: every node restarts, Redis stays', () => {
  const run = (values: Record<string, string | boolean>) => runAvalanche(parseAvalancheOptions({ values: { ...SMALL, target: 'replay-redis', nodes: '2', reconnectStrategy: 'tuned', ...values }, origin: 'test' })).result;

  it.each([
    ['kill behind a front', { restart: 'kill', front: true }],
    ['term, each client back on its own node', { restart: 'term' }],
  ])('%s: every client comes back and catches up from Redis, no accepted message lost or repeated', async (label, values) => {
    const r = await run(values);
    expectExactlyOnce(r);
    expect(r.restart.nodes.map((n) => n.node).sort()).toEqual([0, 1]);
    expect(r.droppedConnections).toBe(r.initiallyConnected);
    expect(r.historyNotFound).toBe(0);
    // After a SIGKILL the client restores its session from Redis on whichever node it reaches. On
    // SIGTERM the server says `disconnect server_restart` first, and @anycable/core drops its
    // session id on any disconnect frame (by design, as with anycable-go): it subscribes afresh
    // and its history request (stream offsets kept in Redis) fills the gap instead.
    expect(r.resumedReconnects).toBe(label.startsWith('kill') ? r.droppedConnections : 0);
    // One publisher for the shared broker: K publishers would have delivered each message K times.
    expect(r.receivedDeliveries).toBeLessThanOrEqual(r.expectedDeliveries);
  });
});

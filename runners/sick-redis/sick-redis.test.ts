import { describe, expect, it } from 'vitest';
import { defaultsOf } from '../../lib/options.ts';
import { SICK_REDIS_OPTIONS, type SickRedisOptions } from './options.ts';
import { runScenario } from './run.ts';

/**
 * The sick-Redis runner at small scale: a real redis-server, two real replay node processes
 * (--broker redis), 20 official @anycable/core clients in one client process, Rebound's publisher.
 * The empty restart books the pre-crash loss under BROKER_EPOCH_CHANGED and no loss after Redis
 * returned; the AOF restart raises no such flag and loses nothing accepted.
 */
const small = (o: Partial<SickRedisOptions> = {}): SickRedisOptions => ({ ...defaultsOf(SICK_REDIS_OPTIONS), clients: 20, clientProcs: 1, beforeMs: 2000, downMs: 2000, afterMs: 2000, settleMs: 4000, timeLimitSec: 60, ...o });

describe('sick-Redis runner: Redis killed and restarted', () => {
  it('empty (no persistence): pre-crash loss booked as BROKER_EPOCH_CHANGED with counts, 0 loss of messages accepted after Redis returned', async () => {
    // Half the clients dropped 150 ms before the kill (back while Redis is dead), a quarter away
    // from then until after the restart (their history names the ended epoch).
    const r = await runScenario('empty', small({ dropBeforeKill: 0.5, awayAcrossRestart: 0.25 }));
    expect(r.connectedClients).toBe(20);
    expect(r.droppedBeforeKill).toBe(10);
    expect(r.awayAcrossRestart).toBe(5);
    expect(r.historyRejected.epoch_changed).toBeGreaterThan(0);
    expect(r.brokerEpoch.historyRejectedEpochChanged).toBe(r.historyRejected.epoch_changed);
    expect(r.brokerEpoch.changes).toHaveLength(1);
    expect(r.brokerEpoch.boundary?.by).toBe('new_epoch_first');
    // Some of the dropped clients were still away at the kill (reconnect 0-500 ms): their missed
    // messages were stored only in the old epoch.
    expect(r.brokerEpoch.lostDeliveries).toBeGreaterThan(0);
    expect(r.brokerEpoch.affectedClients).toBeGreaterThan(0);
    expect(r.brokerEpoch.affectedClients).toBeLessThanOrEqual(r.droppedBeforeKill + r.awayAcrossRestart);
    expect(r.brokerEpoch.lostDeliveries).toBe(r.delivery.lostDeliveries);
    expect(r.brokerEpoch.plainLostDeliveries).toBe(0);
    expect(r.brokerEpoch.lostAfterBoundaryDeliveries).toBe(0);
    // Messages were accepted after the return and all of them reached every client.
    expect(r.publisher.published).toBeGreaterThan(r.brokerEpoch.oldEpochMessages);
    const flag = r.validity!.flags.find((f) => f.code === 'BROKER_EPOCH_CHANGED');
    expect(flag?.severity).toBe('warning');
    expect(flag?.message).toContain(`${r.brokerEpoch.lostDeliveries} deliveries of ${r.brokerEpoch.lostMessages} messages`);
    expect(flag?.message).toContain(`${r.brokerEpoch.changes[0]!.from} -> ${r.brokerEpoch.changes[0]!.to}`);
    expect(r.delivery.duplicates).toBe(0);
    expect(r.goalsMet).toBe(true);
  }, 90_000);

  it('AOF (appendfsync always): the same kill -9 raises no BROKER_EPOCH_CHANGED and loses nothing accepted', async () => {
    const r = await runScenario('aof', small({ awayAcrossRestart: 0.25 }));
    expect(r.connectedClients).toBe(20);
    expect(r.awayAcrossRestart).toBe(5);
    expect(r.publisher.failureCauses['HTTP 503']).toBeGreaterThan(0); // Redis really was down
    expect(r.brokerEpoch.changes).toEqual([]);
    expect(r.brokerEpoch.epochs).toHaveLength(1);
    expect(r.validity!.flags.map((f) => f.code)).not.toContain('BROKER_EPOCH_CHANGED');
    expect(r.delivery.lostDeliveries).toBe(0);
    expect(r.delivery.duplicates).toBe(0);
    expect(r.goalsMet).toBe(true);
  }, 90_000);
});

import { createServer, type Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { parseAvalancheOptions } from './options.ts';
import type { RestartConfig } from '../../engine/measure/restart.ts';
import type { AvalancheResult } from './result.ts';
import { runAvalanche } from './run.ts';
import { uwsAvailability } from '../../services/uws/load.ts';

/**
 * Small real avalanches: real servers on port 0, real clients, a real SIGKILL/SIGTERM and
 * respawn on the same port while the publisher keeps going.
 */
const SMALL = { clients: '20', rate: '10', warmupMs: '1000', publishAfterMs: '3000', recoveryTimeoutMs: '20000', settleMs: '2000', seed: '99' };
const run = (values: Record<string, string>, config: RestartConfig = {}): Promise<AvalancheResult> => runAvalanche(parseAvalancheOptions({ values: { ...SMALL, ...values }, origin: 'test' }, config), config).result;

/** Counts that must add up in every avalanche, whatever the target. */
function expectConsistent(r: AvalancheResult): void {
  for (const f of ['droppedConnections', 'recoveryMs', 'neverReconnected', 'downtimeMs', 'lostDeliveries', 'duplicates', 'deliveryRatePct', 'herd', 'restart'] as const) expect(r, f).toHaveProperty(f);
  for (const f of ['mode', 'signal', 'startedAt', 'serverDownMs'] as const) expect(r.restart, f).toHaveProperty(f);
  for (const f of ['p50', 'p95', 'p99', 'max'] as const) expect(r.recoveryMs, f).toHaveProperty(f);
  expect(r.reconnected + r.neverReconnected).toBe(r.droppedConnections);
  expect(r.recoveryMs.count).toBe(r.reconnected);
  expect(r.receivedDeliveries + r.lostDeliveries).toBe(r.expectedDeliveries);
  expect(r.acceptedDeliveries + r.lostUnpublishedDeliveries).toBe(r.expectedDeliveries);
  expect(r.lostAcceptedDeliveries).toBeLessThanOrEqual(r.lostDeliveries);
  expect(r.publishFailuresDuringRestart + r.publishFailuresOutsideRestart).toBe(r.publishFailures);
  expect(r.deliveryRatePct).toBeLessThanOrEqual(100);
  // Every lost delivery has one cause (the session's client timelines): the causes sum to the loss.
  expect(Object.values(r.lossByCause!).reduce((a, b) => a + b, 0)).toBe(r.lostDeliveries);
  expect(r.resumeOutcomes).toBeDefined();
}

describe.each(['kill', 'term'] as const)('avalanche --restart %s against every local target', (mode) => {
  const targets = ['ws', ...(uwsAvailability().available ? ['uws'] : []), 'socketio', 'socketio-csr', 'replay'];
  // @anycable/core's default backoff is uncapped (3-6 s, then 6-12 s, ...): replay runs with the
  // tuned strategy, as the goal does, so the wait stays short.
  const results = Promise.all(targets.map((target) => run({ target, restart: mode, ...(target === 'replay' ? { reconnectStrategy: 'tuned' } : {}) })));

  it.each(targets.map((t, i) => [t, i] as const))('%s: every connected client drops and comes back; counts add up', async (name, i) => {
    const r = (await results)[i]!;
    expect(r.target).toBe(name);
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expectConsistent(r);
    expect(r.connectFailures).toBe(0);
    expect(r.initiallyConnected).toBe(20);
    // A process restart severs every connection: dropped = clients connected at the restart.
    expect(r.droppedConnections).toBe(r.initiallyConnected);
    expect(r.restart.ok).toBe(true);
    if (name === 'socketio-csr' && mode === 'term') {
      // The Socket.IO server says goodbye on SIGTERM (disconnectSockets): socket.io-client then
      // does not reconnect by itself ('io server disconnect'); an app must call connect().
      expect(r.disconnectDetails['io server disconnect']).toBe(20);
      expect(r.neverReconnected).toBe(20);
      expect(r.validity.flags.map((f) => f.code)).toContain('RECOVERY_TIMEOUT');
      return;
    }
    expect(r.neverReconnected).toBe(0);
    expect(r.restart.signal).toBe(mode === 'kill' ? 'SIGKILL' : 'SIGTERM');
    expect(r.restart.nodes[0]!.newPid).not.toBe(r.restart.nodes[0]!.oldPid);
    expect(r.restart.serverDownMs).toBeGreaterThan(0);
    // The port itself was closed while the process was gone.
    expect(r.restart.portProbe!.refused).toBeGreaterThan(0);
    expect(r.restart.portProbe!.longestRefusedMs).toBeGreaterThan(0);
    // Nobody can be back before the new process listens.
    expect(r.recoveryMs.p50).toBeGreaterThanOrEqual(r.restart.serverDownMs!);
    expect(r.herd.timeToReconnectedMs.p100).toBe(r.recoveryMs.max);
    expect(r.herd.attemptsPerClient.total).toBeGreaterThanOrEqual(r.reconnected);
    expect(r.herd.connectLatencyMs.count).toBeGreaterThan(0);
    expect(r.herd.peakReconnectRatePerSec).toBeGreaterThan(0);
    expect(r.herd.series.at(-1)!.reconnectedPct).toBe(100);
    // The publisher kept going: messages were refused while the server was down.
    expect(r.publishFailuresDuringRestart).toBeGreaterThan(0);
    expect(r.lostUnpublishedDeliveries).toBeGreaterThan(0);
    expect(r.duplicates).toBe(0);
  });
});

describe('avalanche --restart rolling', () => {
  it('restarts two ws nodes one by one: only one node\'s clients are ever down at a time', async () => {
    // The gap leaves node 0's clients time to return before node 1 goes down.
    const r = await run({ target: 'ws', restart: 'rolling', nodes: '2', rollingGapMs: '3000', reconnectStrategy: 'tuned' });
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expectConsistent(r);
    expect(r.nodeUrls).toHaveLength(2);
    expect(r.restart.nodes.map((n) => n.node)).toEqual([0, 1]);
    expect(r.restart.nodes[1]!.signalAt!).toBeGreaterThanOrEqual(r.restart.nodes[0]!.listeningAt! + 3000);
    expect(r.droppedConnections).toBe(20);
    expect(r.neverReconnected).toBe(0);
    expect(Math.min(...r.herd.series.map((p) => p.reconnectedPct))).toBeGreaterThanOrEqual(50);
    // Recovery is measured from each client's own node restart, not the first one.
    expect(r.recoveryMs.max).toBeLessThan(r.downtimeMs);
  });
});

describe('avalanche --restart command and hook', () => {
  it('a failing restart command is a clear error and marks the run invalid', async () => {
    const r = await run({ target: 'ws', restart: 'command' }, { command: 'echo no such service >&2; exit 3' });
    expect(r.validity.valid).toBe(false);
    expect(r.validity.flags.map((f) => f.code)).toContain('RESTART_FAILED');
    expect(r.restart.ok).toBe(false);
    expect(r.restart.error).toMatch(/exit 3.*no such service/s);
    expect(r.restart.command!.exitCode).toBe(3);
    expect(r.droppedConnections).toBe(0);
  });

  it('a command that stops the local target: the runner respawns it like a process manager and measures the herd', async () => {
    const r = await run({ target: 'ws', restart: 'command' }, { command: 'kill -TERM $REBOUND_TARGET_PIDS' });
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expectConsistent(r);
    expect(r.restart.command!.exitCode).toBe(0);
    expect(r.droppedConnections).toBe(20);
    expect(r.neverReconnected).toBe(0);
    expect(r.restart.serverDownMs).toBeGreaterThan(0);
  });

  it('a hook that answers 500 fails the restart; one that restarts the target is measured', async () => {
    let answer = 500;
    let calls = 0;
    const server: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        calls++;
        if (answer === 200) for (const pid of (JSON.parse(body) as { pids: number[] }).pids) process.kill(pid, 'SIGKILL');
        res.writeHead(answer).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/restart`;
    try {
      const failed = await run({ target: 'ws', restart: 'hook' }, { hookUrl });
      expect(failed.validity.flags.map((f) => f.code)).toContain('RESTART_FAILED');
      expect(failed.restart.hook!.status).toBe(500);
      answer = 200;
      const ok = await run({ target: 'ws', restart: 'hook' }, { hookUrl });
      expect(ok.validity.valid, JSON.stringify(ok.validity)).toBe(true);
      expect(ok.restart.hook!.status).toBe(200);
      expect(ok.droppedConnections).toBe(20);
      expect(ok.neverReconnected).toBe(0);
      expect(calls).toBe(2);
    } finally {
      server.close();
    }
  });
});

describe('avalanche options', () => {
  const parse = (values: Record<string, string>, config: RestartConfig = {}) => () => parseAvalancheOptions({ values, origin: 'CLI' }, config);
  it.each([
    [{ target: 'ws', restart: 'command' }, {}, /needs AVALANCHE_RESTART_COMMAND/],
    [{ target: 'ws', restart: 'hook' }, {}, /needs AVALANCHE_RESTART_HOOK_URL/],
    [{ target: 'ws', restart: 'hook' }, { hookUrl: 'http://10.1.2.3/x' }, /loopback/],
    [{ target: 'ws', restart: 'rolling' }, {}, /needs several nodes/],
    [{ target: 'ws', restart: 'kill', url: 'http://127.0.0.1:9' }, {}, /with --url use --restart command or hook/],
    [{ target: 'ws', workers: '4' }, {}, /replay target only/],
    [{ target: 'ws', broadcastUrl: 'http://10.0.0.1:8090/_broadcast' }, {}, /broadcast-url must be a loopback/],
    [{ target: 'ws', broadcastUrl: 'http://127.0.0.1:8090/_broadcast', nodes: '2', restart: 'rolling' }, {}, /each node gets its own publisher/],
    [{ target: 'ws', restart: 'reboot' }, {}, /must be one of kill, term, rolling, command, hook/],
  ] as const)('%j is rejected', (values, config, msg) => {
    expect(parse(values as Record<string, string>, config as RestartConfig)).toThrow(msg);
  });
});

describe('avalanche cancellation', () => {
  it('an aborted run rejects with RR_ERR_RUN_FAILED and stops the target it started', async () => {
    const ac = new AbortController();
    const run = runAvalanche(parseAvalancheOptions({ values: { ...SMALL, target: 'ws', warmupMs: '30000' }, origin: 'test' }), {}, { signal: ac.signal });
    let url = '';
    run.events.on('phase', (name, detail) => {
      if (name === 'connect') url = /http:\/\/\S+/.exec(detail)![0];
      if (name === 'warmup') ac.abort();
    });
    await expect(run.result).rejects.toMatchObject({ code: 'RR_ERR_RUN_FAILED', message: 'the run was cancelled' });
    const res = await fetch(`${url}/health`).then(
      () => 'answered',
      () => 'refused',
    );
    expect(res).toBe('refused');
  });
});

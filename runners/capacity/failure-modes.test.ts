import { createServer, type Server } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { parseCapacityOptions } from './options.ts';
import { runCapacity } from './run.ts';
import { withNoLeanTarget } from '../../engine/targets/testing.ts';

/**
 * Every failure mode and validity rule the capacity walk names, tripped for real: the rig's own
 * fd limit, the target's fd limit, a target that exits mid-step, free memory under the floor,
 * a target that never completes a handshake (connect-rate bound), a stop the runner cannot do,
 * and a scenario that throws.
 */
const run = (values: Record<string, string>) => runCapacity(parseCapacityOptions({ values, origin: 'test' }));

describe('capacity failure modes and validity', () => {
  const services: ServiceHandle[] = [];
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
    for (const s of servers) s.close();
  });

  it("the rig: a loader process out of descriptors is the runner's limit (RIG_LIMIT, invalid)", { timeout: 90_000 }, async () => {
    const r = (await run({ targets: 'ws', scenarios: 'S2', s2Steps: '300', s2Ramp: '1000', s2Hold: '0', s2Workers: '1', s2WorkerFdLimit: '150' })).results[0]!;
    expect(r.failureMode).toMatch(/^the rig: .*runner's own fd limit/);
    expect(r.steps[0]).toMatchObject({ pass: false, metrics: { failureMode: 'the rig' } });
    expect(r.validity.valid).toBe(false);
    expect(r.validity.flags.map((f) => f.code)).toEqual(expect.arrayContaining(['RIG_LIMIT', 'RUNNER_FD_LIMIT']));
  });

  it("fd limit: a one-process target started with a small open-file limit is the target's limit", { timeout: 90_000 }, async () => {
    const r = (await run({ targets: 'ws', scenarios: 'S2', s2Steps: '100,400', s2Ramp: '1000', s2Hold: '0', s2TargetFdLimit: '200', s2ConnectTimeoutMs: '3000' })).results[0]!;
    expect(r.steps.map((s) => s.pass)).toEqual([true, false]);
    expect(r.failureMode).toMatch(/^fd limit: the target held \d+ open files against its limit of 200/);
    expect(r.steps[1]!.metrics.targetFdLimit).toBe(200);
    expect(r.validity.valid).toBe(true);
    expect(r.headline.value as number).toBeLessThan(400);
  });

  // Above the two starts' own deadlines (startDeadlineMs: 30 s, 120 s) plus two short steps, so a slow start ends as the run's failureMode, not as vitest's timeout.
  it('serverWorkers: replay as 3 processes holds a step one process cannot, under the same per-process fd limit', { timeout: 240_000 }, async () => {
    // The limit binds the cluster's primary too, and it holds each accepted socket until a worker takes it: at 1000/s on a
    // loaded machine it piled up to 193 of 200 and reset the rest. At 200/s it stays under 150, and one process still cannot hold 400.
    const values = { targets: 'replay', scenarios: 'S2', s2Steps: '400', s2Ramp: '200', s2Hold: '0', s2TargetFdLimit: '200', s2ConnectTimeoutMs: '10000' };
    const one = (await run(values)).results[0]!;
    // failureMode first: a run with no step says why there (a target that did not start, a scenario error), where steps[0] would be a TypeError.
    expect(one.failureMode).toMatch(/^fd limit/);
    expect(one.steps[0]!.pass).toBe(false);
    const three = (await run({ ...values, serverWorkers: '3' })).results[0]!;
    expect(three.failureMode, JSON.stringify(three.validity.flags)).toMatch(/^none: every step held/);
    expect(three.steps[0]!.pass).toBe(true);
    expect(three.headline.value).toBe(400);
  });

  it('target start: a local target that cannot start ends the walk with a named failure mode (TARGET_START), not an empty step list', { timeout: 60_000 }, async () => {
    // 24 open files is too few for Node and tsx to load the server: each process exits before it listens.
    const r = (await run({ targets: 'replay', scenarios: 'S2', serverWorkers: '3', s2Steps: '100', s2TargetFdLimit: '24' })).results[0]!;
    expect(r.failureMode).toMatch(/^target start: replay with --workers 3 \(open-file limit 24\): replay exited before listening/);
    expect(r.steps).toEqual([]);
    expect(r.headline.value).toBeNull();
    expect(r.validity).toMatchObject({ valid: false, flags: [{ code: 'TARGET_START', severity: 'fatal', message: expect.stringMatching(/^S2 100: RR_ERR_SERVICE_START: target start: replay/) }] });
  });

  it('serverWorkers is refused with a target that cannot run as workers (socketio-csr) and with url', () => {
    expect(parseCapacityOptions({ values: { targets: 'replay,ws,socketio', scenarios: 'S2', serverWorkers: '2' }, origin: 'test' }).serverWorkers).toBe(2);
    expect(() => parseCapacityOptions({ values: { targets: 'ws,socketio-csr', scenarios: 'S2', serverWorkers: '2' }, origin: 'test' })).toThrow(/"socketio-csr" cannot run: .*Connection State Recovery/);
    expect(() => parseCapacityOptions({ values: { targets: 'replay', scenarios: 'S2', serverWorkers: '2', url: 'http://127.0.0.1:9' }, origin: 'test' })).toThrow(/cannot go with url/);
  });

  it('crash: the target exits during a step and the walk stops there', { timeout: 90_000 }, async () => {
    const svc = await startService('ws');
    services.push(svc);
    const killer = setTimeout(() => void svc.kill('SIGKILL'), 1500);
    const r = (await run({ targets: 'ws', url: svc.httpUrl, scenarios: 'S2', s2Steps: '1500,3000', s2Ramp: '500', s2Hold: '1', s2ConnectTimeoutMs: '3000' })).results[0]!;
    clearTimeout(killer);
    expect(r.steps).toHaveLength(1);
    expect(r.failureMode).toMatch(/^crash: the target exited during the step/);
  });

  it('memory: available memory under the floor stops the walk before a step', async () => {
    const r = (await run({ targets: 'ws', scenarios: 'S2', s2Steps: '10', s2MinFreeMb: '10000000' })).results[0]!;
    expect(r.failureMode).toMatch(/^memory: available memory \d+ MB is under the floor of 10000000 MB/);
    expect(r.steps).toEqual([expect.objectContaining({ pass: false, metrics: expect.objectContaining({ failureMode: 'memory' }) })]);
    expect(r.headline.value).toBeNull();
  });

  it('connect-rate bound: connects that time out waiting for the target', { timeout: 60_000 }, async () => {
    // Answers /health and /metrics but never completes a WebSocket upgrade: the extreme of a target that accepts slower than the ramp.
    const server = createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(req.url === '/metrics' ? '{}' : '{"status":"ok"}'));
    server.on('upgrade', () => {});
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const r = (await run({ targets: 'ws', url, scenarios: 'S2', s2Steps: '40', s2Ramp: '400', s2Hold: '0', s2ConnectTimeoutMs: '500' })).results[0]!;
    expect(r.failureMode).toMatch(/^connect-rate bound: 40 of 40 failed connects timed out/);
    server.closeAllConnections();
  });

  it('S6 on an external target is not run (NOT_RUN), never faked', async () => {
    const r = (await run({ targets: 'ws', url: 'http://127.0.0.1:9', scenarios: 'S6' })).results[0]!;
    expect(r.steps).toEqual([]);
    expect(r.failureMode).toMatch(/^not run: an external target cannot be stopped/);
    expect(r.validity.flags.map((f) => f.code)).toEqual(['NOT_RUN']);
  });

  it('a scenario that throws is recorded as an invalid result and the suite goes on (SCENARIO_ERROR)', async () => {
    // S6 needs a lean client (its holders are lean only): a target that declares none makes it throw before it starts anything.
    const out = await withNoLeanTarget((noLean) => run({ targets: noLean, scenarios: 'S6,S1', s1Counts: '10', s1Runs: '1', s1Hold: '0', s1Warmup: '0' }));
    expect(out.results.map((r) => r.scenario)).toEqual(['S6', 'S1']);
    expect(out.results[0]!.failureMode).toMatch(/^error: RR_ERR_TARGET_UNSUPPORTED/);
    expect(out.results[0]!.validity).toMatchObject({ valid: false, flags: [{ code: 'SCENARIO_ERROR', severity: 'fatal' }] });
  });
});

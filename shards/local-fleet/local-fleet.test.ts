import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../bench/idle-local-fleet.ts';
import { CHROMIUM, chartProblems, openBrowser, openReport } from '../../engine/pages/browser-harness.ts';
import { isAlive as alive } from '../../services/common/process-info.ts';
import { costTable, servicesFloor, targetBaseline } from './costs.ts';
import { spawn } from 'node:child_process';
import { meminfo, parseCpuBusyTicks, parseMeminfo, parseSockstat } from '../../engine/measure/proc.ts';
import { classifyWall } from './run.ts';
import { FleetSampler, type FleetSample } from './sampler.ts';
import { processTreeUsage } from '../../engine/measure/target-usage.ts';

/**
 * The local fleet end to end: real runner services, a real replay server (workers by the fd
 * limit), the real coordinator, on loopback; small counts so it runs in tens of seconds.
 */
const quiet = () => {};
const tmp = () => mkdtempSync(join(tmpdir(), 'rr-local-fleet-'));

describe('local fleet', () => {
  it('3 shards x 500 through the coordinator: counts add up, every shard result kept, everything closed', async () => {
    const out = tmp();
    const { code, result: r } = await main(['--n', '1500', '--shards', '3', '--hold', '2', '--ramp', '1500', '--target-per-process', '800', '--out', out], quiet);
    expect(r).toBeDefined();
    const c = r!.coordinator;
    expect(c.shards).toBe(3);
    expect(c.perShard.map((s) => s.status)).toEqual(['done', 'done', 'done']);
    expect(c.perShard.map((s) => s.clients)).toEqual([500, 500, 500]);
    const m = c.merged as { clients: number; subscribed: number; failed: number; openAtEndOfHold: number };
    // The merge adds up: 3 x 500, and the sum of what each shard stored itself.
    expect(m.clients).toBe(1500);
    expect(m.subscribed).toBe(1500);
    expect(m.failed).toBe(0);
    expect(m.openAtEndOfHold).toBe(1500);
    expect(r!.reached.perShard.map((s) => s.subscribed)).toEqual([500, 500, 500]);
    expect(r!.reached.subscribed).toBe(r!.reached.perShard.reduce((a, s) => a + (s.subscribed ?? 0), 0));
    for (const [i, s] of c.perShard.entries()) {
      const stored = JSON.parse(readFileSync(join(out, 'shards', `s${i + 1}`, `${s.jobId}.json`), 'utf8')) as { subscribed: number; shardLabel: unknown };
      expect(stored.subscribed).toBe(500);
    }
    // 1500 connections at 800 per target process: two replay workers behind one port.
    expect(r!.params.targetWorkers).toBe(2);
    expect(r!.costTable.baselines.targetProcs).toBe(3);
    expect(r!.costTable.baselines.runnerServices).toBe(3);
    // The workers' baseline is their own reading once loaded (every shard stored one), not /proc's half-loaded first sample.
    expect(r!.costTable.baselines.runnerWorkersBaselineFrom).toBe('workers');
    expect(r!.costTable.baselines.runnerWorkers).toBe(r!.reached.perShard.reduce((a, s) => a + (s.workersOwn?.procs ?? 0), 0));
    expect(r!.costTable.baselines.runnerWorkersRssBytes).toBe(r!.reached.perShard.reduce((a, s) => a + (s.workersOwn?.rss ?? 0), 0));
    expect(r!.wall.mode).toBe('NONE');
    expect(code).toBe(0);
    // The kernel saw the connections. Its count is machine-wide (other jobs' sockets come and go
    // in the same network namespace, and a few dozen HTTP polls ride along): within 10%.
    // Only a lower bound: a heavy job elsewhere on the machine adds its sockets to the count.
    expect(r!.reached.maxConnsKernel).toBeGreaterThan(1350);
    expect(r!.closed.allExited).toBe(true);
    for (const f of ['fleet.json', 'fleet.html', 'coordinator.json', 'coordinator.html']) expect(existsSync(join(out, f)), f).toBe(true);
    const html = readFileSync(join(out, 'fleet.html'), 'utf8');
    for (const id of ['fleet-ramp', 'fleet-memory', 'fleet-cpu']) expect(html).toContain(id);
    expect(html).toContain('target B/conn');
    // The page draws: ramp, memory and CPU charts with data on labelled axes, no request beyond its own file.
    if (existsSync(CHROMIUM)) {
      const b = await openBrowser();
      try {
        const page = await openReport(b.context, join(out, 'fleet.html'), 'local-fleet.png');
        expect(chartProblems(page, join(out, 'fleet.html'), 200)).toEqual([]);
        expect(page.charts.map((ch) => ch.id)).toEqual(['fleet-ramp', 'fleet-memory', 'fleet-cpu']);
      } finally {
        await b.close();
      }
    }
  }, 180_000);

  it('a memory floor above free memory aborts the ramp: MEMORY_FLOOR, how far it got, everything closed', async () => {
    const out = tmp();
    const aboveFree = Math.ceil((meminfo()!.memTotal + 1024 ** 3) / 1048576);
    // 4000 at 400/s: ten seconds of ramp, so the floor (armed when connecting starts) cuts it part-way.
    const { code, result: r } = await main(['--n', '4000', '--shards', '2', '--hold', '30', '--ramp', '400', '--min-free-mib', String(aboveFree), '--out', out], quiet);
    expect(r!.wall.mode).toBe('MEMORY_FLOOR');
    expect(r!.memoryFloor.tripped).toBe(true);
    expect(r!.memoryFloor.memAvailableBytes).toBeLessThan(r!.memoryFloor.minFreeBytes);
    expect(code).toBe(1);
    // How far it got: some connected, not all, and never the hold.
    expect(r!.reached.subscribed).toBeGreaterThan(0);
    expect(r!.reached.subscribed).toBeLessThan(4000);
    expect(r!.reached.perShard.every((s) => s.partial)).toBe(true);
    expect(r!.coordinator.perShard.every((s) => s.status !== 'done')).toBe(true);
    // Closed: every process we started is gone (the runner services aborted their jobs first).
    expect(r!.closed.allExited).toBe(true);
    expect(r!.closed.leftPids).toEqual([]);
    const f = JSON.parse(readFileSync(join(out, 'fleet.json'), 'utf8')) as { wall: { mode: string } };
    expect(f.wall.mode).toBe('MEMORY_FLOOR');
  }, 180_000);
});

describe('/proc parsers', () => {
  it('reads sockstat and meminfo lines', () => {
    expect(parseSockstat('sockets: used 11\nTCP: inuse 7 orphan 1 tw 2 alloc 9 mem 211\n')).toEqual({ tcpInuse: 7, tcpOrphan: 1, tcpTw: 2, tcpAlloc: 9, tcpMemPages: 211, tcpMemBytes: 211 * 4096 });
    expect(parseSockstat('nothing')).toBeUndefined();
    const m = parseMeminfo('MemTotal: 100 kB\nMemAvailable: 40 kB\nSlab: 10 kB\nSReclaimable: 4 kB\nSUnreclaim: 6 kB\n');
    expect(m).toEqual({ memTotal: 102400, memAvailable: 40960, slab: 10240, sUnreclaim: 6144, sReclaimable: 4096 });
    expect(alive(process.pid)).toBe(true);
    // user nice system idle iowait irq softirq steal: irq and softirq are nobody's process time.
    expect(parseCpuBusyTicks('cpu  100 5 40 9000 7 3 60 2 0 0\ncpu0 50 2 20 4500 3 1 30 1 0 0\n')).toBe(147);
    expect(parseCpuBusyTicks('intr 1 2 3')).toBeUndefined();
  });
});

describe('another job on the machine', () => {
  const busyChild = (ms: number) => spawn(process.execPath, ['-e', `const e = Date.now() + ${ms}; while (Date.now() < e);`], { stdio: 'ignore' });
  /** Two fleet samples 1.5 s apart, and the busy child's own CPU over the same window, read from its /proc stat beside each sample. */
  const sampleAround = async (child: number, roots: () => { target: number | undefined; runners: number[] }) => {
    const s = new FleetSampler(roots, { minFreeBytes: 0 });
    s.sample();
    const t0 = Date.now();
    const ticks0 = processTreeUsage(child)!.ticks;
    await new Promise((r) => setTimeout(r, 1500));
    const sample = s.sample()!;
    const childPct = ((processTreeUsage(child)!.ticks - ticks0) / 100 / ((Date.now() - t0) / 1000)) * 100;
    return { sample, childPct };
  };

  // The child's share of a core depends on what else the box runs (beside the suite on a 2-core
  // box it got 40%, and 14% with more running); what the sampler must do is book whatever it got
  // to the right group. The two readings are taken microseconds apart in 10 ms ticks: 3 points of
  // slack plus a tenth of the share.
  it("a busy process outside the fleet is other CPU; the same process as a runner is the fleet's", async () => {
    const outside = busyChild(3000);
    const a = await sampleAround(outside.pid!, () => ({ target: undefined, runners: [] }));
    outside.kill();
    expect(a.childPct, 'the busy child ran').toBeGreaterThan(3);
    // Whatever else runs on the box adds to it: a lower bound only.
    expect(a.sample.otherCpuPct).toBeGreaterThanOrEqual(a.childPct - (3 + a.childPct / 10));
    const inside = busyChild(3000);
    const b = await sampleAround(inside.pid!, () => ({ target: undefined, runners: [inside.pid!] }));
    inside.kill();
    expect(b.childPct, 'the busy child ran').toBeGreaterThan(3);
    expect(Math.abs(b.sample.runners.cpuPct - b.childPct)).toBeLessThan(3 + b.childPct / 10);
  }, 20_000);

  it('connects that failed while other processes took the CPU are MACHINE_BUSY, not a wall; on a quiet box the same failures are CONNECT_RATE', () => {
    const x = { floorTripped: false, failureCauses: { timeout: 800, target: 200 }, failed: 1000, disconnectedDuringHold: {}, shardErrors: [], targetMaxFds: 0, targetFdLimit: undefined, targetCpuPeak: 120, runnerLoopLagP99Ms: 400, n: 10_000, subscribed: 9000, rampTotal: 1000, pingsPerSec: 100 };
    const busy = classifyWall({ ...x, otherCpu: { meanPct: 90, peakPct: 160 } });
    expect(busy.mode).toBe('MACHINE_BUSY');
    expect(busy.evidence).toMatch(/mean 90% of one core \(peak 160%/);
    expect(classifyWall({ ...x, otherCpu: { meanPct: 3, peakPct: 20 } }).mode).toBe('CONNECT_RATE');
    // Nothing failed: a busy machine is no wall.
    expect(classifyWall({ ...x, failed: 0, failureCauses: {}, otherCpu: { meanPct: 90, peakPct: 160 } }).mode).toBe('NONE');
  });
});

describe('cost table: the runner workers baseline', () => {
  const sample = (at: number, conns: number, workers: { rss: number; procs: number }): FleetSample =>
    ({ at, t: at, conns, target: { rss: 100e6, rssAnon: 50e6, procs: 2, cpuPct: 0 }, runners: { rss: 80e6, rssAnon: 40e6, procs: 1, cpuPct: 0 }, runnerWorkers: { ...workers, rssAnon: workers.rss / 2, cpuPct: 0 }, slab: 1e6, tcpMemPages: 0, tcpInuse: conns * 2, memAvailable: 1e10 }) as unknown as FleetSample;
  // Workers seen half-loaded at 21 MB each, loaded at 45 MB (their own reading), then 10,000 clients add 40 MB.
  const samples = [sample(0, 0, { rss: 0, procs: 0 }), sample(1000, 0, { rss: 42e6, procs: 2 }), sample(2000, 10_000, { rss: 130e6, procs: 2 })];

  it("uses the workers' own loaded reading: start-up is not booked per client", () => {
    const t = costTable(samples, samples[0]!, [], 60, undefined, { rss: 90e6, procs: 2 });
    expect(t.baselines.runnerWorkersBaselineFrom).toBe('workers');
    expect(t.rows.at(-1)!.runnerBytesPerConn).toBe(4000);
  });

  it('falls back to the first /proc sample with every worker alive when a reading is missing or covers fewer workers', () => {
    for (const own of [undefined, { rss: 45e6, procs: 1 }]) {
      const t = costTable(samples, samples[0]!, [], 60, undefined, own);
      expect(t.baselines.runnerWorkersBaselineFrom).toBe('proc');
      expect(t.rows.at(-1)!.runnerBytesPerConn).toBe(8800);
    }
  });
});

describe('cost table: the runner services baseline', () => {
  const sample = (at: number, conns: number, servicesRss: number): FleetSample =>
    ({ at, t: at, conns, target: { rss: 100e6, rssAnon: 50e6, procs: 1, cpuPct: 0 }, runners: { rss: servicesRss, rssAnon: servicesRss / 2, procs: 2, cpuPct: 0 }, runnerWorkers: { rss: at ? 90e6 + conns * 4000 : 0, rssAnon: 45e6, procs: at ? 2 : 0, cpuPct: 0 }, slab: 1e6, tcpMemPages: 0, tcpInuse: conns * 2, memAvailable: 1e10 }) as unknown as FleetSample;
  // The services read 220 MB when every worker runs, a GC gives 50 MB of their job's start-up back
  // during the ramp, then they sit at 172 MB while the workers' clients add 4,000 B each (CI's case).
  const samples = [sample(0, 0, 160e6), sample(1000, 0, 220e6), sample(2000, 2000, 170e6), sample(3000, 4000, 172e6), sample(4000, 0, 120e6)];

  it("is their lowest from every worker running to the hold's end: a GC of start-up garbage books no negative client", () => {
    const t = costTable(samples, samples[0]!, [2000], 60, 3000, { rss: 90e6, procs: 2 });
    expect(t.baselines.runnerServicesRssBytes).toBe(170e6);
    expect(t.rows.map((r) => r.runnerBytesPerConn)).toEqual([4000, 4500]);
    // Read at the first sample with every worker alive (the code before) the 2,000 row read -21,000 B; after the hold (closing) is not the floor.
    expect(servicesFloor(samples, samples[1]!)!.runners.rss).toBe(120e6);
  });
});

describe("cost table: the target's baseline instant", () => {
  const sample = (at: number, conns: number, targetRss: number): FleetSample =>
    ({ at, t: at, conns, target: { rss: targetRss, rssAnon: targetRss / 2, procs: 4, cpuPct: 0 }, runners: { rss: 80e6, rssAnon: 40e6, procs: 1, cpuPct: 0 }, runnerWorkers: { rss: 0, rssAnon: 0, procs: 0, cpuPct: 0 }, slab: 1e6, tcpMemPages: 0, tcpInuse: conns * 2, memAvailable: 1e10 }) as unknown as FleetSample;
  // The target gives 150 MB of start-up memory back after the fleet's first sample, then 100,000 connections add 100 MB.
  const samples = [sample(0, 0, 1_000e6), sample(1000, 30, 900e6), sample(2000, 0, 850e6), sample(3000, 40_000, 890e6), sample(4000, 100_000, 950e6)];

  it('is the last sample before the first connections, the instant the shards read theirs', () => {
    const t = costTable(samples, samples[0]!, [40_000], 60);
    expect(t.baselines.targetRssBytes).toBe(850e6);
    expect(t.rows.map((r) => r.targetBytesPerConn)).toEqual([1000, 1000]);
    // Read from the fleet's first sample (the code before) the rows read -2,750 and -500 B.
    expect(targetBaseline([samples[0]!, samples[4]!], samples[0]!).target.rss).toBe(1_000e6);
  });
});

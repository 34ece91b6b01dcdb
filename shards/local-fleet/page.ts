import type { ChartSpec, ReportModel } from '../../engine/pages/types.ts';
import type { LocalFleetResult } from './run.ts';

const MB = 1048576;
const n = (v: number | null | undefined) => (v === null || v === undefined ? 'n/a' : Math.round(v).toLocaleString('en-US'));
const mib = (b: number) => `${Math.round(b / MB).toLocaleString('en-US')} MiB`;
const col = (r: LocalFleetResult, name: string) => {
  const i = r.series.columns.indexOf(name);
  return r.series.rows.map((row) => (row[i] ?? null) as number | null);
};

/** The fleet page: the ramp (kernel's count and the shards' subscribed), memory curves, CPU, the cost table. */
export function localFleetReport(r: LocalFleetResult, command: string): ReportModel {
  const x = col(r, 'tSec').map((v) => v ?? 0);
  const toMb = (name: string) => col(r, name).map((v) => (v === null ? null : Math.round((v / MB) * 10) / 10));
  const markers = [
    ...(r.memoryFloor.atSec !== null ? [{ x: r.memoryFloor.atSec, label: 'memory floor', color: '#D55E00' }] : []),
  ];
  const ramp: ChartSpec = {
    id: 'fleet-ramp',
    title: 'Connections over time',
    note: `The kernel's count ((TCP inuse growth) / 2) and the shards' subscribed (their job progress, polled every ${r.params.pollMs} ms). Ramp ${r.params.rampTotal}/s over ${r.params.shards} shards, then a ${r.params.hold} s hold.`,
    xLabel: 'seconds since the baseline',
    yLabel: 'connections',
    x,
    series: [
      { label: 'connections (kernel)', values: col(r, 'conns'), color: '#0072B2', width: 2, reduce: 'min' },
      { label: 'subscribed (shards)', values: col(r, 'subscribed'), color: '#009E73', width: 2, spanGaps: true, reduce: 'min' },
    ],
    markers,
    hlines: [{ y: r.params.n, label: `asked ${n(r.params.n)}`, color: '#999999' }],
  };
  const memory: ChartSpec = {
    id: 'fleet-memory',
    title: 'Memory: every process group, the kernel, and what is left',
    note: `RSS sums over /proc (target tree, runner services, runner workers), Slab and TCP buffer pages from /proc/meminfo and /proc/net/sockstat, and MemAvailable against the ${n(r.memoryFloor.minFreeBytes / MB)} MiB floor.`,
    xLabel: 'seconds since the baseline',
    yLabel: 'MiB',
    y2Label: 'MemAvailable, MiB',
    x,
    series: [
      { label: 'target RSS', values: toMb('targetRss'), color: '#0072B2', width: 2 },
      { label: 'runner workers RSS', values: toMb('runnerWorkersRss'), color: '#E69F00', width: 2 },
      { label: 'runner services RSS', values: toMb('runnerServicesRss'), color: '#CC79A7', width: 1 },
      { label: 'kernel Slab', values: toMb('slab'), color: '#009E73', width: 2 },
      { label: 'TCP buffers', values: col(r, 'tcpMemPages').map((v) => (v === null ? null : Math.round((v * 4096) / MB))), color: '#56B4E9', width: 1 },
      { label: 'MemAvailable (right axis)', values: toMb('memAvailable'), color: '#D55E00', width: 2, reduce: 'min', axis: 'y2' },
    ],
    markers,
    hlines: [{ y: Math.round(r.memoryFloor.minFreeBytes / MB), label: 'floor', color: '#D55E00', axis: 'y2' }],
  };
  const cpu: ChartSpec = {
    id: 'fleet-cpu',
    title: 'CPU: target and runners (% of one core; the box has 2)',
    note: `The ping traffic shows here during the hold: every connection is pinged once per interval (${r.pingInterval.effectiveSec || 'n/a'} s), so connections / interval pings per second.`,
    xLabel: 'seconds since the baseline',
    yLabel: '% of one core',
    x,
    series: [
      { label: 'target', values: col(r, 'targetCpuPct'), color: '#0072B2', width: 2, reduce: 'max' },
      { label: 'runners', values: col(r, 'runnerCpuPct'), color: '#E69F00', width: 2, reduce: 'max' },
    ],
    markers,
  };
  const b = r.costTable.baselines;
  const rows = r.costTable.rows;
  const summary = [
    ['row', 'connections', 'target B/conn', 'runner B/client', 'kernel B/conn (target end + runner end)', 'total B/conn', 'formula total', 'measured total', 'ping s'],
    ...rows.map((x) => [String(x.milestone === 'max' ? 'largest N' : n(x.milestone)), n(x.conns), n(x.targetBytesPerConn), n(x.runnerBytesPerConn), `${n(x.kernelBytesPerConn)} (${n(x.kernelTargetEnd)} + ${n(x.kernelRunnerEnd)})`, n(x.totalBytesPerConn), mib(x.predictedTotalBytes), mib(x.measuredTotalBytes), String(x.pingIntervalSec)]),
  ];
  const held = r.wall.mode === 'NONE';
  return {
    title: `Local fleet idle: ${r.target}, ${n(r.params.n)} connections over ${r.params.shards} shards`,
    subtitle: `${r.params.targetWorkers} target process(es), ramp ${r.params.rampTotal}/s, hold ${r.params.hold} s, ping ${r.pingInterval.effectiveSec || 'n/a'} s (${r.pingInterval.note}); started ${r.startedAt}; load ${r.machine.loadBefore.join(' ')} → ${r.machine.loadAfter.join(' ')}; other processes' CPU mean ${r.machine.otherCpu.meanPct}% of one core (peak ${r.machine.otherCpu.peakPct}%)`,
    command,
    seed: null,
    generatedAt: new Date().toISOString(),
    flags: r.coordinator.validity.flags.map((f) => ({ target: r.target, severity: f.severity, code: f.code, plain: f.code, message: f.message })),
    verdicts: [
      {
        target: r.target,
        level: held ? 'good' : 'lost',
        words: held ? `Held ${n(r.reached.subscribed)}` : `Wall: ${r.wall.mode}`,
        detail: `${n(r.reached.subscribed)} subscribed of ${n(r.params.n)}, ${n(r.reached.failed)} failed, most at once ${n(r.reached.maxConnsKernel)} (kernel), held ${r.reached.heldSec} s. ${r.wall.evidence}`,
      },
    ],
    summary,
    sections: [
      { title: 'Ramp', charts: [ramp] },
      {
        title: 'Memory and the cost table',
        intro: `${r.costTable.formula}. Baselines: target ${mib(b.targetRssBytes)} over ${b.targetProcs} process(es) (${mib(b.perTargetProcBytes)} each), runner services ${mib(b.runnerServicesRssBytes)} (${b.runnerServices} x ${mib(b.perRunnerServiceBytes)}), runner workers ${mib(b.runnerWorkersRssBytes)} (${b.runnerWorkers} x ${mib(b.perRunnerWorkerBytes)}); private (RssAnon) ${mib(b.totalAnonBytes)} of the ${mib(b.totalRssBytes)} RSS. ${r.costTable.kernelSplit}.${r.prediction ? ` Formula check on this run: the half-way row's terms predict ${mib(r.prediction.predicted)} at the largest N, measured ${mib(r.prediction.measured)} (${(r.prediction.error * 100).toFixed(1)}% off; connection-dependent part ${(r.prediction.variableError * 100).toFixed(1)}% off).` : ''}`,
        charts: [memory, cpu],
      },
    ],
  };
}

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../lib/cli.ts';
import { argvToValues, helpText, parseOptions } from '../lib/options.ts';
import { commandLine, writeReport } from '../engine/pages/index.ts';
import { COORDINATOR_PAGES } from '../shards/coordinator/page.ts';
import { formatReport } from '../shards/coordinator/summary.ts';
import { LOCAL_FLEET_OPTIONS } from '../shards/local-fleet/options.ts';
import { localFleetReport } from '../shards/local-fleet/page.ts';
import { runLocalFleet, type LocalFleetResult } from '../shards/local-fleet/run.ts';

/**
 * `npm run bench:idle:local-fleet -- --target replay --n 1000000 [--shards K] [--ping-interval S]`:
 * K local runner services and the target on this box, driven through the coordinator as a remote
 * fleet is; memory of every process and of the kernel sampled each second; a memory floor aborts
 * the ramp. Writes fleet.json + fleet.html (cost table, ramp, memory curves) and the coordinator's
 * own merged JSON + HTML into the output folder. Exit 0 all held with 0 failures, 1 a wall was
 * hit (named in the result), 2 bad input or a fatal validity flag.
 */
export function summaryText(r: LocalFleetResult): string {
  const n = (v: number | null | undefined) => (v === null || v === undefined ? 'n/a' : Math.round(v).toLocaleString('en-US'));
  const lines = [
    formatReport(r.coordinator).trimEnd(),
    '',
    `local fleet: ${r.target}, ${n(r.params.n)} asked over ${r.params.shards} shards (${r.params.targetWorkers} target process(es)), ramp ${r.params.rampTotal}/s, ping ${r.pingInterval.effectiveSec || 'n/a'} s`,
    `reached: ${n(r.reached.subscribed)} subscribed, ${n(r.reached.failed)} failed, most at once ${n(r.reached.maxConnsKernel)} (kernel), held ${r.reached.heldSec} s`,
    `wall: ${r.wall.mode}: ${r.wall.evidence}`,
    `machine: other processes used a mean ${r.machine.otherCpu.meanPct}% of one core (peak ${r.machine.otherCpu.peakPct}%) during the ramp and hold; load ${r.machine.loadBefore.join(' ')} before`,
    'cost table (bytes per connection):',
    '  row          conns      target  runner  kernel  total   formula MiB  measured MiB',
    ...r.costTable.rows.map((x) => `  ${String(x.milestone === 'max' ? 'largest' : x.milestone).padEnd(11)} ${n(x.conns).padStart(10)} ${n(x.targetBytesPerConn).padStart(7)} ${n(x.runnerBytesPerConn).padStart(7)} ${n(x.kernelBytesPerConn).padStart(7)} ${n(x.totalBytesPerConn).padStart(7)} ${n(x.predictedTotalBytes / 1048576).padStart(12)} ${n(x.measuredTotalBytes / 1048576).padStart(13)}`),
    `baselines: target ${n(r.costTable.baselines.targetRssBytes / 1048576)} MiB / ${r.costTable.baselines.targetProcs} procs, runner services ${n(r.costTable.baselines.runnerServicesRssBytes / 1048576)} MiB / ${r.costTable.baselines.runnerServices}, runner workers ${n(r.costTable.baselines.runnerWorkersRssBytes / 1048576)} MiB / ${r.costTable.baselines.runnerWorkers}`,
    `target B/conn: merged ${n(r.targetMemory.merged)} (${r.targetMemory.mergedSource ?? 'n/a'}${r.targetMemory.mergedComplete === false ? ', INCOMPLETE' : ''}) vs cost table ${n(r.targetMemory.costTable)} at ${n(r.targetMemory.costTableConns)} conns: ${r.targetMemory.differencePct ?? 'n/a'}%`,
    ...(r.prediction ? [`formula check: predicted ${n(r.prediction.predicted / 1048576)} MiB, measured ${n(r.prediction.measured / 1048576)} MiB (${(r.prediction.error * 100).toFixed(1)}% off)`] : []),
    `closed: ${r.closed.allExited ? 'every process exited' : `left ${r.closed.leftPids.join(',')}`}; TCP inuse ${r.closed.tcpInuseBefore} before, ${r.closed.tcpInuseAfter ?? 'n/a'} after`,
    `files: ${r.files.json ?? ''} ${r.files.html ?? ''}`,
  ];
  return lines.join('\n') + '\n';
}

export async function main(argv: string[], log: (l: string) => void = (l) => process.stderr.write(l + '\n')): Promise<{ code: number; result?: LocalFleetResult }> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`usage: npm run bench:idle:local-fleet -- [options]\n${helpText(LOCAL_FLEET_OPTIONS)}\n`);
    return { code: 0 };
  }
  const o = parseOptions(LOCAL_FLEET_OPTIONS, { values: argvToValues(argv, LOCAL_FLEET_OPTIONS), origin: 'CLI' });
  const r = await runLocalFleet(o, log);
  const command = commandLine('bench:idle:local-fleet', LOCAL_FLEET_OPTIONS, o as unknown as Record<string, unknown>);
  const out = r.files.out!;
  r.files.json = join(out, 'fleet.json');
  r.files.html = join(out, 'fleet.html');
  r.files.coordinatorJson = join(out, 'coordinator.json');
  await writeFile(r.files.coordinatorJson, JSON.stringify(r.coordinator, null, 2) + '\n');
  r.files.coordinatorHtml = await writeReport(r.files.coordinatorJson, { ...r.coordinator, test: 'multi-shard' } as never, { command: `${command} (coordinator part)` }, COORDINATOR_PAGES);
  await writeFile(r.files.json, JSON.stringify({ command, ...r }, null, 2) + '\n');
  await writeReport(r.files.json, localFleetReport(r, command));
  process.stdout.write(o.json ? JSON.stringify(r, null, 2) + '\n' : summaryText(r));
  return { code: r.exitCode, result: r };
}

if (import.meta.url === `file://${process.argv[1]}`) runCli(async (argv) => (await main(argv)).code);

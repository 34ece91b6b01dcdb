import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCliOptions, runCli } from '../lib/cli.ts';
import { ReboundError, toErrorBody } from '../lib/errors.ts';
import { medianOf } from '../lib/figures.ts';
import type { OptionTable } from '../lib/options.ts';
import { LOAD_OPTIONS } from '../runners/capacity/loader/kit.ts';
import { parseCapacityOptions } from '../runners/capacity/options.ts';
// The suite's median rounds (bytes per connection, as S1 reports them); µs and ratios keep fractions (medianOf).
import { median } from '../runners/capacity/target.ts';
import type { ScenarioContext, ScenarioResult, StepResult } from '../runners/capacity/types.ts';
import { resultsDir } from '../engine/measure/result-files.ts';
import { currentCommit } from '../engine/measure/summary.ts';
import { processTreeUsage } from '../engine/measure/target-usage.ts';
import { commandLine } from '../engine/pages/command.ts';
import { getTarget } from '../engine/targets/index.ts';
import { SERVICE_ENTRIES, startService, type ServiceName } from '../services/common/spawn.ts';

/**
 * `npm run bench:replay-transport -- [--subjects uws,replay-uws,replay-ws,ws] [--rounds 3] [--rate 2500]`
 * What the replay server costs against the uWebSockets.js reference server (issue 39), side by
 * side on this machine, in interleaved rounds (uws, replay-uws, replay-ws, ws, then again) because
 * the box is shared and noisy: the ratios are the figure, not the absolute µs.
 *  - cpu: each subject's server started on its own (port 0, services/common/spawn.ts); the capacity
 *    suite's S3 (its loaders, ledgers and publisher) against its URL: N connections over M
 *    streams, one unjudged step at the fixed publish rate as the warm-up, then the measured step
 *    at the same rate. Server CPU = utime+stime of the server's process tree (/proc) from the end
 *    of the warm-up step to the end of the measured step (its publishing, drain and settle);
 *    deliveries = the measured step's ledger (distinct accepted deliveries, drain included).
 *  - memory: the suite's S1 (idle bytes per connection: peak RSS − baseline over subscribed, from
 *    the /proc tree of a fresh local instance) with the subject's server args, one run per round.
 * A subject whose server refuses its args is reported "unavailable: <the server's error line>".
 */
const SUBJECT_NAMES = ['uws', 'replay-uws', 'replay-ws', 'ws', 'uws-control'] as const;
type SubjectName = (typeof SUBJECT_NAMES)[number];

interface SubjectSpec {
  /** The capacity suite's target (its client, its local service). */
  target: string;
  args: string[];
  /** Run without `args` when the server's --help does not know the flag (a server from before it). */
  dropWhenUnknown?: string;
}

/** The one subject list: what each name starts. */
const SUBJECTS: Record<SubjectName, SubjectSpec> = {
  uws: { target: 'uws', args: [] },
  // Today's replay server has one transport (ws); the flag is h-uws's, on its way.
  'replay-ws': { target: 'replay', args: ['--transport', 'ws'], dropWhenUnknown: '--transport' },
  'replay-uws': { target: 'replay', args: ['--transport', 'uws'] },
  ws: { target: 'ws', args: [] },
  // The uws server once more, as its own subject: its ratio to uws is the method's own noise on
  // this box (an A/A control), the yardstick for how far a ratio is from 1 by chance alone.
  'uws-control': { target: 'uws', args: [] },
};

export const OPTIONS = {
  subjects: { type: 'string', default: 'uws,replay-uws,replay-ws,ws', maxLength: 100, pattern: /^[\w-]+(,[\w-]+){0,7}$/, doc: `subjects in round order, comma-separated, from ${SUBJECT_NAMES.join(', ')}; ratios are against uws (the first subject when uws is not listed)` },
  parts: { type: 'enum', default: 'both', values: ['both', 'cpu', 'memory'], doc: 'what to measure: S3 CPU per delivery, S1 idle bytes per connection, or both' },
  rounds: { type: 'int', default: 3, min: 1, max: 9, doc: 'interleaved rounds (each subject once per round, per part); figures are medians over rounds' },
  connections: { type: 'int', default: 10_000, min: 100, max: 100_000, doc: 'cpu: connections (subscribers), over the loaders' },
  streams: { type: 'int', default: 1000, min: 1, max: 100_000, doc: 'cpu: streams; connection i subscribes to stream i % streams' },
  rate: { type: 'int', default: 2500, min: 1, max: 100_000, doc: 'cpu: fixed total publish rate, messages/s (deliveries/s = rate × connections / streams)' },
  stepSec: { type: 'number', default: 8, min: 1, max: 120, doc: 'cpu: seconds of publishing in the warm-up step and again in the measured step' },
  // The suite's own specs (ranges, defaults), so a value S3 would refuse is refused here first.
  drainMs: { ...LOAD_OPTIONS.drainMs, default: 1000, doc: 'cpu: wait after the last publish before the ledgers settle, ms (inside the measured window)' },
  loaders: { ...LOAD_OPTIONS.loaders, doc: `cpu: ${LOAD_OPTIONS.loaders.doc}` },
  idleConnections: { type: 'int', default: 10_000, min: 100, max: 100_000, doc: 'memory: idle connections per S1 run' },
  idleRamp: { type: 'int', default: 1000, min: 1, max: 100_000, doc: 'memory: S1 connects/s' },
  out: { type: 'optional-string', default: undefined, doc: 'summary JSON path (default: RESULTS_DIR or ./results, replay-transport-cost-<time>.json)' },
  json: { type: 'bool', default: false, doc: 'print the summary JSON on stdout instead of the tables' },
} as const satisfies OptionTable;

type Options = ReturnType<typeof parseCliOptions<typeof OPTIONS>>;

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** A server's error line is shown as given, bounded: it is another process's output. */
const MAX_ERROR_LINE = 400;
/** Share of the offered deliveries/s a run must reach for its schedule to count as held. */
const SCHEDULE_HELD = 0.9;

export interface Subject {
  name: SubjectName;
  target: string;
  service: ServiceName;
  /** The server args actually used (after dropping an unknown flag). */
  args: string[];
  /** Why the args differ from the subject's own, when they do. */
  note?: string;
  /** Set when the server refused to start: its own error line. */
  unavailable?: string;
}

export interface CpuRun {
  round: number;
  subject: SubjectName;
  /** Distinct accepted deliveries of the measured step (ledger). */
  delivered: number | null;
  /** Server CPU (process tree, utime+stime) over the measured window, seconds. */
  serverCpuSec: number | null;
  windowSec: number | null;
  usPerDelivery: number | null;
  /**
   * The user-space part of usPerDelivery (utime alone). Both servers make one send per delivery,
   * so the kernel's share is the same work and swings with the box; this part is the servers' own code.
   */
  usUserPerDelivery: number | null;
  deliveriesPerSec: number | null;
  /** The publisher kept the fixed rate: deliveries/s over the step >= SCHEDULE_HELD of the offered (a loaded box stretches the step). */
  scheduleHeld: boolean | null;
  deliveredPct: number | null;
  p99Ms: number | null;
  pass: boolean | null;
  limitedBy: string | null;
  machineBusyPct: number | null;
  loaderCpuPct: number | null;
  loadavg1: number;
  flags: string[];
  error?: string;
}

export interface MemoryRun {
  round: number;
  subject: SubjectName;
  bytesPerConnection: number | null;
  subscribed: number | null;
  baselineRssMb: number | null;
  peakRssMb: number | null;
  loadavg1: number;
  flags: string[];
  error?: string;
}

const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The last non-empty stderr line of a server started with `args` that exits before listening. */
function serverErrorLine(service: ServiceName, args: string[]): string {
  const r = spawnSync(process.execPath, ['--import', 'tsx', SERVICE_ENTRIES[service], ...args, '--port', '0'], { cwd: ROOT, encoding: 'utf8', timeout: 20_000, maxBuffer: 1 << 20 });
  const line = (r.stderr ?? '').split('\n').map((l) => l.trim()).filter(Boolean).at(-1) ?? `exit ${r.status ?? r.signal}, nothing on stderr`;
  return line.slice(0, MAX_ERROR_LINE).replace(/[^\x20-\x7e]/g, '?');
}

/** Does the server's --help list `flag`? (serviceMain prints every option of its table.) */
function serverKnows(service: ServiceName, flag: string): boolean {
  const r = spawnSync(process.execPath, ['--import', 'tsx', SERVICE_ENTRIES[service], '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 20_000, maxBuffer: 1 << 20 });
  return new RegExp(`(^|\\s)${flag}(\\s|$)`, 'm').test(r.stdout ?? '');
}

/** Resolve each subject's args and start its server once: one that refuses is unavailable, with its reason. */
export async function resolveSubjects(names: readonly SubjectName[], log: (l: string) => void): Promise<Subject[]> {
  const out: Subject[] = [];
  for (const name of names) {
    const spec = SUBJECTS[name];
    const service = getTarget(spec.target).service!.name as ServiceName;
    const s: Subject = { name, target: spec.target, service, args: spec.args };
    if (spec.dropWhenUnknown && !serverKnows(service, spec.dropWhenUnknown)) {
      s.args = [];
      s.note = `${SERVICE_ENTRIES[service]} has no ${spec.dropWhenUnknown} option here: run as plain ${SERVICE_ENTRIES[service]}`;
    }
    try {
      const h = await startService(service, { args: s.args });
      await h.stop(5000);
    } catch (err) {
      s.unavailable = serverErrorLine(service, s.args);
      log(`${name}: unavailable: ${s.unavailable} (${toErrorBody(err).message})`);
    }
    if (s.note) log(`${name}: ${s.note}`);
    out.push(s);
  }
  return out;
}

const quietCtx = (s: Subject, log: (l: string) => void, progress: ScenarioContext['progress'] = () => {}): Omit<ScenarioContext, 'url' | 'serviceArgs'> => ({
  target: getTarget(s.target),
  seed: 1,
  signal: new AbortController().signal,
  log: (l) => log(`  ${s.name}: ${l}`),
  progress,
});

const flagsOf = (r: ScenarioResult) => r.validity.flags.map((f) => `${f.code}: ${f.message}`.slice(0, 300));

/**
 * One cpu run: the subject's server on its own, S3 against its URL at the fixed rate twice (the
 * first step is the warm-up), server CPU read at the end of each step.
 */
async function cpuRun(s: Subject, o: Options, round: number, log: (l: string) => void): Promise<CpuRun> {
  const base = { round, subject: s.name, loadavg1: r2(loadavg()[0]!) };
  const empty = { delivered: null, serverCpuSec: null, windowSec: null, usPerDelivery: null, usUserPerDelivery: null, deliveriesPerSec: null, scheduleHeld: null, deliveredPct: null, p99Ms: null, pass: null, limitedBy: null, machineBusyPct: null, loaderCpuPct: null, flags: [] };
  const h = await startService(s.service, { args: s.args });
  try {
    const opts = parseCapacityOptions({
      values: { targets: s.target, url: h.httpUrl, scenarios: 'S3', s3Connections: o.connections, s3Streams: o.streams, s3Rates: `${o.rate},${o.rate}`, s3StepSec: o.stepSec, s3WarmupSec: 0, s3DrainMs: o.drainMs, s3Loaders: o.loaders, s3StopAfterFailures: 2 },
      origin: 'bench',
    });
    // The CPU ticks of the server's tree at the end of each step: the warm-up's, then the measured one's.
    const marks: { at: number; usage: ReturnType<typeof processTreeUsage> }[] = [];
    const ctx = { ...quietCtx(s, log, () => void marks.push({ at: performance.now(), usage: processTreeUsage(h.pid) })), url: h.httpUrl };
    const r = await opts.perScenario.S3!.run(ctx);
    const step: StepResult | undefined = r.steps[1];
    const [a, b] = marks;
    if (!step || !a?.usage || !b?.usage) return { ...base, ...empty, flags: flagsOf(r), error: `no measured step (${r.steps.length} steps, ${marks.length} marks): ${r.failureMode ?? ''}` };
    const delivered = step.ledger ? step.ledger.receivedDeliveries - step.ledger.unacceptedDeliveries : null;
    // /proc counts CPU in USER_HZ ticks of 10 ms.
    const cpuSec = (b.usage.ticks - a.usage.ticks) / 100;
    const userSec = (b.usage.userTicks - a.usage.userTicks) / 100;
    const m = step.metrics;
    return {
      ...base,
      delivered,
      serverCpuSec: r2(cpuSec),
      windowSec: r2((b.at - a.at) / 1000),
      usPerDelivery: delivered ? r2((cpuSec * 1e6) / delivered) : null,
      usUserPerDelivery: delivered ? r2((userSec * 1e6) / delivered) : null,
      deliveriesPerSec: num(m.deliveriesPerSec),
      scheduleHeld: num(m.deliveriesPerSec) === null || num(m.offeredDeliveriesPerSec) === null ? null : (m.deliveriesPerSec as number) >= SCHEDULE_HELD * (m.offeredDeliveriesPerSec as number),
      deliveredPct: num(m.deliveredPct),
      p99Ms: num(m.p99Ms),
      pass: step.pass,
      limitedBy: typeof m.limitedBy === 'string' ? m.limitedBy : null,
      machineBusyPct: num(m.machineBusyPct),
      loaderCpuPct: num(m.loaderCpuPct),
      flags: flagsOf(r),
    };
  } catch (err) {
    return { ...base, ...empty, error: toErrorBody(err).message.slice(0, MAX_ERROR_LINE) };
  } finally {
    await h.stop(5000);
  }
}

/** One memory run: the suite's S1 at one count and ramp, one run, on a fresh local instance with the subject's args. */
async function memoryRun(s: Subject, o: Options, round: number, log: (l: string) => void): Promise<MemoryRun> {
  const base = { round, subject: s.name, loadavg1: r2(loadavg()[0]!) };
  try {
    const opts = parseCapacityOptions({ values: { targets: s.target, scenarios: 'S1', s1Counts: String(o.idleConnections), s1Ramps: String(o.idleRamp), s1Runs: 1 }, origin: 'bench' });
    const r = await opts.perScenario.S1!.run({ ...quietCtx(s, log), serviceArgs: s.args });
    const m = r.steps[0]?.metrics ?? {};
    const mb = (v: unknown) => (num(v) === null ? null : r1((v as number) / 1048576));
    return { ...base, bytesPerConnection: num(m.bytesPerConnection), subscribed: num(m.subscribedMin), baselineRssMb: mb(m.baselineRssBytes), peakRssMb: mb(m.peakRssBytes), flags: flagsOf(r), ...(r.steps[0]?.pass ? {} : { error: String(r.steps[0]?.reason ?? r.failureMode ?? 'no step') }) };
  } catch (err) {
    return { ...base, bytesPerConnection: null, subscribed: null, baselineRssMb: null, peakRssMb: null, flags: [], error: toErrorBody(err).message.slice(0, MAX_ERROR_LINE) };
  }
}

export interface SubjectSummary {
  subject: SubjectName;
  status: string;
  /** cpu: median µs per delivery over rounds, and the median of the per-round ratios to the anchor. */
  usPerDeliveryMedian: number | null;
  usPerDeliveryRuns: (number | null)[];
  cpuRatioMedian: number | null;
  cpuRatioRuns: (number | null)[];
  /** The same for the user-space part alone (CpuRun.usUserPerDelivery). */
  usUserPerDeliveryMedian: number | null;
  userRatioMedian: number | null;
  userRatioRuns: (number | null)[];
  deliveriesPerSecMedian: number | null;
  p99MsMedian: number | null;
  passes: string;
  /** Runs whose publisher kept the fixed rate, of all runs. */
  scheduleHeld: string;
  /** memory: median bytes per connection over rounds, and its ratio to the anchor's median. */
  bytesPerConnMedian: number | null;
  bytesPerConnRuns: (number | null)[];
  memRatio: number | null;
}

/** Medians and per-round ratios against `anchor` (the same round's run of it). */
export function summarize(subjects: readonly Subject[], anchor: SubjectName, cpu: readonly CpuRun[], mem: readonly MemoryRun[]): SubjectSummary[] {
  const rounds = [...new Set([...cpu, ...mem].map((x) => x.round))].sort((a, b) => a - b);
  const cpuOf = (s: SubjectName, round: number) => cpu.find((x) => x.subject === s && x.round === round);
  const anchorMem = median(mem.filter((x) => x.subject === anchor).map((x) => x.bytesPerConnection).filter((v): v is number => v !== null));
  return subjects.map((s) => {
    const mine = cpu.filter((x) => x.subject === s.name);
    const us = rounds.map((r) => cpuOf(s.name, r)?.usPerDelivery ?? null);
    const ratiosOf = (field: 'usPerDelivery' | 'usUserPerDelivery') =>
      rounds.map((r) => {
        const x = cpuOf(s.name, r)?.[field];
        const y = cpuOf(anchor, r)?.[field];
        return x && y ? r3(x / y) : null;
      });
    const ratios = ratiosOf('usPerDelivery');
    const userRatios = ratiosOf('usUserPerDelivery');
    const present = (xs: (number | null)[]) => xs.filter((v): v is number => v !== null);
    const userUs = medianOf(present(mine.map((x) => x.usUserPerDelivery)));
    const userRatio = medianOf(present(userRatios));
    const m = mem.filter((x) => x.subject === s.name);
    const bpc = rounds.map((r) => m.find((x) => x.round === r)?.bytesPerConnection ?? null);
    const bpcMedian = median(present(bpc));
    const usMedian = medianOf(present(us));
    const ratioMedian = medianOf(present(ratios));
    const dps = medianOf(present(mine.map((x) => x.deliveriesPerSec)));
    const p99 = medianOf(present(mine.map((x) => x.p99Ms)));
    return {
      subject: s.name,
      status: s.unavailable ? `unavailable: ${s.unavailable}` : (s.note ?? 'ok'),
      usPerDeliveryMedian: usMedian === null ? null : r2(usMedian),
      usPerDeliveryRuns: us,
      cpuRatioMedian: ratioMedian === null ? null : r3(ratioMedian),
      cpuRatioRuns: ratios,
      usUserPerDeliveryMedian: userUs === null ? null : r2(userUs),
      userRatioMedian: userRatio === null ? null : r3(userRatio),
      userRatioRuns: userRatios,
      deliveriesPerSecMedian: dps === null ? null : Math.round(dps),
      p99MsMedian: p99,
      passes: `${mine.filter((x) => x.pass).length}/${mine.length}`,
      scheduleHeld: `${mine.filter((x) => x.scheduleHeld).length}/${mine.length}`,
      bytesPerConnMedian: bpcMedian,
      bytesPerConnRuns: bpc,
      memRatio: bpcMedian !== null && anchorMem ? r3(bpcMedian / anchorMem) : null,
    };
  });
}

/** The goals of issue 39, judged on replay-uws: met, not met, or why they could not be judged. */
export function goals(rows: readonly SubjectSummary[]): { goal: string; figure: string; verdict: string }[] {
  const ru = rows.find((r) => r.subject === 'replay-uws');
  const judge = (v: number | null | undefined, max: number) => (v === null || v === undefined ? (ru?.status.startsWith('unavailable') ? 'not measured (replay-uws unavailable)' : 'not measured') : v <= max ? 'met' : 'not met');
  return [
    { goal: 'replay-uws server CPU per delivery <= 1.10x uws (median of per-round ratios)', figure: ru?.cpuRatioMedian === null || ru === undefined ? 'n/a' : `${ru.cpuRatioMedian}x`, verdict: judge(ru?.cpuRatioMedian, 1.1) },
    { goal: 'replay-uws idle bytes per connection <= 1,500 (median)', figure: ru?.bytesPerConnMedian === null || ru === undefined ? 'n/a' : `${ru.bytesPerConnMedian} B`, verdict: judge(ru?.bytesPerConnMedian, 1500) },
  ];
}

const cell = (v: number | string | null | undefined) => (v === null || v === undefined ? 'n/a' : typeof v === 'number' ? v.toLocaleString('en-US') : v);

export function tableText(rows: readonly SubjectSummary[], anchor: SubjectName, o: { deliveriesPerSec: number; connections: number; rounds: number }): string {
  const lines = [
    `server CPU per delivery at ${o.deliveriesPerSec.toLocaleString('en-US')} deliveries/s offered over ${o.connections.toLocaleString('en-US')} connections, and idle bytes per connection; ratios = subject / ${anchor} (cpu: in the same round); medians of ${o.rounds} interleaved rounds`,
    `| subject | µs CPU/delivery | per round | ratio to ${anchor} | per-round ratios | µs user/delivery | user ratio | per-round user ratios | deliveries/s | p99 ms | steps in budget | schedule held | idle B/conn | per round | B/conn ratio |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.subject} | ${cell(r.usPerDeliveryMedian)} | ${r.usPerDeliveryRuns.map(cell).join(' / ')} | ${cell(r.cpuRatioMedian)} | ${r.cpuRatioRuns.map(cell).join(' / ')} | ${cell(r.usUserPerDeliveryMedian)} | ${cell(r.userRatioMedian)} | ${r.userRatioRuns.map(cell).join(' / ')} | ${cell(r.deliveriesPerSecMedian)} | ${cell(r.p99MsMedian)} | ${r.passes} | ${r.scheduleHeld} | ${cell(r.bytesPerConnMedian)} | ${r.bytesPerConnRuns.map(cell).join(' / ')} | ${cell(r.memRatio)} |`),
    // The full error line is in the JSON; the table keeps its start.
    ...rows.filter((r) => r.status !== 'ok').map((r) => `${r.subject}: ${r.status.length > 160 ? `${r.status.slice(0, 160)}...` : r.status}`),
  ];
  return lines.join('\n') + '\n';
}

export async function main(argv: string[], log: (l: string) => void = (l) => process.stderr.write(l + '\n')): Promise<number> {
  const o = parseCliOptions(OPTIONS, argv);
  const names = o.subjects.split(',').map((n) => {
    if (!(SUBJECT_NAMES as readonly string[]).includes(n)) throw new ReboundError('RR_ERR_OPTION_INVALID', `unknown subject "${n}"; known: ${SUBJECT_NAMES.join(', ')}`, { details: { option: 'subjects' } });
    return n as SubjectName;
  });
  if (new Set(names).size !== names.length) throw new ReboundError('RR_ERR_OPTION_INVALID', `a subject is listed twice in "${o.subjects}"`, { details: { option: 'subjects' } });
  const startedAt = new Date().toISOString();
  const commit = currentCommit();
  const loadStart = loadavg().map(r2);
  const subjects = await resolveSubjects(names, log);
  const live = subjects.filter((s) => !s.unavailable);
  const anchor: SubjectName = names.includes('uws') ? 'uws' : names[0]!;
  const cpu: CpuRun[] = [];
  const mem: MemoryRun[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    if (o.parts !== 'memory') {
      for (const s of live) {
        const r = await cpuRun(s, o, round, () => {});
        cpu.push(r);
        log(`cpu round ${round} ${s.name}: ${r.error ? `ERROR ${r.error}` : `${r.usPerDelivery} µs/delivery (${r.usUserPerDelivery} user; ${r.serverCpuSec} s CPU / ${r.delivered} deliveries over ${r.windowSec} s), ${r.deliveriesPerSec}/s${r.scheduleHeld ? '' : ' (schedule not held)'}, p99 ${r.p99Ms} ms, ${r.pass ? 'in budget' : `over budget (${r.limitedBy})`}, load ${r.loadavg1}`}`);
      }
    }
    if (o.parts !== 'cpu') {
      for (const s of live) {
        const r = await memoryRun(s, o, round, () => {});
        mem.push(r);
        log(`memory round ${round} ${s.name}: ${r.error ? `ERROR ${r.error} ` : ''}${r.bytesPerConnection} B/conn (${r.subscribed} subscribed, RSS ${r.baselineRssMb} → ${r.peakRssMb} MB), load ${r.loadavg1}`);
      }
    }
  }
  const rows = summarize(subjects, anchor, cpu, mem);
  const offeredDps = Math.round((o.rate * o.connections) / o.streams);
  const command = commandLine('bench:replay-transport', OPTIONS, o as unknown as Record<string, unknown>);
  // Read at the start: the code measured is the code loaded then, whatever is edited during the run.
  const summary = {
    bench: 'replay-transport-cost',
    command,
    commit,
    startedAt,
    measuredAt: new Date().toISOString(),
    machine: { loadavgAtStart: loadStart, loadavgAtEnd: loadavg().map(r2) },
    params: { ...o, out: undefined, json: undefined, offeredDeliveriesPerSec: offeredDps },
    anchor,
    subjects,
    summary: rows,
    // The rows again under the figure files' common name (docs/performance.md cites `results`).
    results: rows,
    goals: goals(rows),
    cpuRuns: cpu,
    memoryRuns: mem,
  };
  const file = o.out ?? join(resultsDir(), `replay-transport-cost-${startedAt.replace(/[:.]/g, '-')}.json`);
  mkdirSync(dirname(resolve(file)), { recursive: true });
  writeFileSync(file, JSON.stringify(summary, null, 2) + '\n');
  if (o.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  else {
    process.stdout.write(tableText(rows, anchor, { deliveriesPerSec: offeredDps, connections: o.connections, rounds: o.rounds }));
    for (const g of summary.goals) process.stdout.write(`goal: ${g.goal}: ${g.figure}: ${g.verdict}\n`);
    process.stdout.write(`load average ${loadStart.join(' ')} at start, ${summary.machine.loadavgAtEnd.join(' ')} at end; summary: ${file}\n`);
  }
  const failed = [...cpu, ...mem].some((x) => x.error);
  return failed ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) runCli(main);

import { randomSeed } from '../../lib/rng.ts';
import { until as pollUntil } from '../../lib/time.ts';
import type { OptionTable, OptionValues } from '../../lib/options.ts';
import { parseJson } from '../targets/payload.ts';
import { pickClient } from '../targets/index.ts';
import { afterOffline } from '../targets/reconnect.ts';
import type { TargetDefinition } from '../targets/types.ts';
import { targetModuleReport, type TargetModuleReport } from '../targets/user-module.ts';
import { connectPhase } from '../session/phases/connect.ts';
import { publishPhase } from '../session/phases/publish.ts';
import { RunSession } from '../session/session.ts';
import { outcomeLabel } from '../measure/loss-causes.ts';

/**
 * `npm run target:check`: a conformance walk over one target against its server, built on the
 * engine's own pieces (a RunSession's clients, ledger and timelines, the publish phase through the
 * target's `publish`, the lean client through pickClient). Each step is a verdict with its reason;
 * every step has a time bound and the walk an overall one, so a hook that throws or never settles
 * is a failed verdict naming the hook, never a hang or a crash.
 */

/** The one declaration of target:check's options (the CLI reads them; --help lists them). */
export const CHECK_OPTIONS = {
  target: { type: 'string', default: 'ws', pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, doc: 'the target to check: a built-in name, or the --target-module file\'s target (its default then)' },
  url: { type: 'optional-string', default: undefined, pattern: /^https?:\/\/[^\s]+$/, doc: "the target server's base URL; absent: a built-in with a local service is started for the walk" },
  stepTimeoutMs: { type: 'int', default: 8000, min: 500, max: 20_000, doc: 'time bound of each step, ms (a hook that has not settled by then fails its step)' },
  overallTimeoutMs: { type: 'int', default: 55_000, min: 2000, max: 60_000, doc: 'time bound of the whole walk, ms: steps left when it runs out fail as not reached' },
  leanClients: { type: 'int', default: 1000, min: 0, max: 5000, doc: 'connections of the lean-client step (0 skips it)' },
  json: { type: 'bool', default: false, doc: 'print the verdicts as JSON instead of lines' },
} as const satisfies OptionTable;

export const CHECK_STEPS = ['connects', 'subscribes', 'delivers', 'order', 'drop', 'reconnects', 'restored', 'lean', 'whispers', 'contract'] as const;
export type CheckStep = (typeof CHECK_STEPS)[number];

/** One line of the walk: `ok` false is a failure unless `skipped` (a capability not declared, a step an earlier failure made moot). */
export interface Verdict {
  step: CheckStep;
  ok: boolean;
  skipped?: boolean;
  reason: string;
  ms: number;
}

export interface CheckReport {
  target: string;
  url: string;
  /** Every verdict that ran held. */
  ok: boolean;
  verdicts: Verdict[];
  elapsedMs: number;
  /** A target file's hook faults (TARGET_MODULE_FAULT's input); absent for a built-in. */
  targetModule?: TargetModuleReport;
}

/** The target and its server; the walk's bounds default to CHECK_OPTIONS'. */
export type CheckOptions = { target: TargetDefinition; url: string } & Partial<Pick<OptionValues<typeof CHECK_OPTIONS>, 'stepTimeoutMs' | 'overallTimeoutMs' | 'leanClients'>>;

/** A library reconnect ('library') is waited for this many step bounds from the drop (its own backoff runs first). */
const LIBRARY_RECONNECT_STEPS = 2;
/** Clients of the walk: 0 is dropped and reconnected, 1 stays up (the control, the whisper's receiver). */
const CLIENTS = 2;
/** Messages before the drop (delivery, order) and while client 0 is offline (what a reconnect restores). */
const LIVE = 5;
const GAP = 3;

type Outcome<T> = { ok: true; value: T } | { ok: false; why: string };
const text = (err: unknown): string => (err instanceof Error ? err.message : String(err)).replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').slice(0, 300);

export async function checkTarget(o: CheckOptions): Promise<CheckReport> {
  const t = o.target;
  const stepMs = o.stepTimeoutMs ?? CHECK_OPTIONS.stepTimeoutMs.default;
  const started = Date.now();
  const deadline = started + (o.overallTimeoutMs ?? CHECK_OPTIONS.overallTimeoutMs.default);
  const verdicts: Verdict[] = [];
  const budget = () => Math.min(stepMs, deadline - Date.now());

  /** `p` within the step's bound: its value, or why not (a throw, or `what` not settling in time). */
  const bounded = async <T>(what: string, p: () => Promise<T> | T, ms = budget()): Promise<Outcome<T>> => {
    if (ms <= 0) return { ok: false, why: `not reached: the walk's overall bound (${o.overallTimeoutMs ?? CHECK_OPTIONS.overallTimeoutMs.default} ms) ran out` };
    let timer: NodeJS.Timeout | undefined;
    try {
      const value = await Promise.race([
        Promise.resolve().then(p),
        new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`${what} did not settle within ${ms} ms`)), ms))),
      ]);
      return { ok: true, value };
    } catch (err) {
      const why = text(err);
      return { ok: false, why: why.includes(what) ? why : `${what}: ${why}` };
    } finally {
      clearTimeout(timer);
    }
  };
  /** Polls `cond` until it holds or the step's bound passes. */
  const until = (cond: () => boolean, ms = budget()): Promise<boolean> => pollUntil(cond, Math.max(0, ms));
  const verdict = (step: CheckStep, t0: number, ok: boolean, reason: string, skipped = false) => verdicts.push({ step, ok, ...(skipped ? { skipped } : {}), reason, ms: Date.now() - t0 });
  const skipRest = (why: string) => {
    for (const step of CHECK_STEPS) if (!verdicts.some((v) => v.step === step) && step !== 'lean' && step !== 'whispers' && step !== 'contract') verdict(step, Date.now(), false, `not checked: ${why}`, true);
  };

  const seed = randomSeed();
  const runId = `check-${started.toString(36)}-${seed}`;
  const sentAt = new Map<number, number>();
  const mangled: string[] = [];
  const foreign: string[] = [];
  const dropped: { at?: number; reason?: string } = {};
  let backAt: number | undefined;
  const session = new RunSession({
    target: t,
    urlOf: () => o.url,
    clients: CLIENTS,
    messages: LIVE + GAP,
    runId,
    stream: `target-check-${runId}`,
    seed,
    hooks: {
      delivery: (d) => {
        // Intact: the publisher's own payload, byte for byte (an envelope left on, a re-encoding or a lost field all show).
        const data = d.message.data;
        if (d.sentAt !== sentAt.get(d.seq) || JSON.stringify(parseJson(data)) !== data) mangled.push(data.slice(0, 120));
      },
      foreign: (_i, m) => void (foreign.length < 8 && foreign.push(String(m.data).slice(0, 120))),
      disconnected: (i, info) => {
        if (i === 0 && dropped.at !== undefined && dropped.reason === undefined) dropped.reason = info.reason;
      },
      connected: (i, info) => {
        if (i === 0 && info.attempt > 0 && backAt === undefined) backAt = info.at;
      },
    },
  });
  const lean: RunSession[] = [];
  try {
    // connects
    let t0 = Date.now();
    const opened = await bounded('createClient()', () => session.openClients());
    const connects = opened.ok ? await Promise.all(session.clients.map((c) => bounded('connect()', () => c.connect()))) : [];
    const failed = connects.filter((c): c is { ok: false; why: string } => !c.ok);
    if (!opened.ok || failed.length) {
      verdict('connects', t0, false, opened.ok ? `${failed.length} of ${CLIENTS} clients failed: ${failed[0]!.why}` : opened.why);
      skipRest('no connection');
      return finish();
    }
    verdict('connects', t0, true, `${CLIENTS} clients: connect() resolved in ${Date.now() - t0} ms`);

    // subscribes
    t0 = Date.now();
    const subscribed = await until(() => session.upCount === CLIENTS, Math.min(1000, budget()));
    verdict('subscribes', t0, subscribed, subscribed ? 'each client emitted `connected` (attempt 0) when subscribed' : `connect() resolved but ${CLIENTS - session.upCount} of ${CLIENTS} clients emitted no \`connected\` event`);

    // delivers: through the target's own publish, then each arrival held to the publisher's bytes
    t0 = Date.now();
    const pub = await bounded('publish', () => session.run(publishPhase({ url: o.url, messages: LIVE, intervalMs: 20, timeoutMs: Math.max(200, Math.floor(stepMs / 3)), progressEveryMs: 0, onSend: (seq, at) => void sentAt.set(seq, at) })));
    if (!pub.ok || pub.value.result.published < LIVE) {
      const r = pub.ok ? pub.value.result : undefined;
      verdict('delivers', t0, false, pub.ok ? `the server accepted ${r!.published} of ${LIVE} messages: ${r!.failures.slice(0, 2).join('; ')}` : pub.why);
    } else {
      const arrived = await until(() => [...Array(LIVE).keys()].every((k) => session.clients.every((_, i) => session.ledger.latencyOf(i, k + 1) !== undefined)));
      const got = session.ledger.totals().receivedDeliveries;
      if (mangled.length) verdict('delivers', t0, false, `${mangled.length} arrivals were not the published payload byte for byte (first: ${JSON.stringify(mangled[0])}): hand over the payload as published, without your envelope`);
      else if (!arrived) verdict('delivers', t0, false, `${got} of ${LIVE * CLIENTS} deliveries arrived${foreign.length ? `; ${session.foreign} arrivals were not this run's payloads (first: ${JSON.stringify(foreign[0])}): is the envelope unwrapped?` : ''}`);
      else verdict('delivers', t0, true, `${LIVE} messages published through ${t.publish ? 'the target\'s publish' : 'POST /_broadcast'} reached both clients intact`);
    }

    // order
    t0 = Date.now();
    const { outOfOrder, duplicates } = session.ledger.totals();
    if (!verdicts.at(-1)!.ok) verdict('order', t0, false, 'not checked: the messages did not all arrive', true);
    else verdict('order', t0, outOfOrder === 0 && duplicates === 0, outOfOrder || duplicates ? `${outOfOrder} out of order, ${duplicates} duplicates over ${LIVE * CLIENTS} deliveries` : 'every client got 1..' + LIVE + ' once, in publish order');

    // drop: no close handshake, seen as a disconnect with reason 'dropped'
    t0 = Date.now();
    dropped.at = Date.now();
    const d = await bounded('drop()', () => session.clients[0]!.drop());
    const seen = d.ok && d.value === true && (await until(() => dropped.reason !== undefined));
    if (!d.ok) verdict('drop', t0, false, d.why);
    else if (d.value !== true) verdict('drop', t0, false, `drop() returned ${JSON.stringify(d.value)} on an open connection (expected true)`);
    else if (!seen) verdict('drop', t0, false, 'drop() returned true but no `disconnected` event followed');
    else verdict('drop', t0, dropped.reason === 'dropped', dropped.reason === 'dropped' ? 'drop() cut the socket and the client emitted `disconnected` (dropped)' : `the disconnect's reason was '${dropped.reason}' (expected 'dropped' for drop())`);
    if (!verdicts.at(-1)!.ok) {
      skipRest('the drop failed');
      return finish();
    }

    // What a reconnect can restore is judged over messages published while client 0 is away.
    const gap = await bounded('publish', () => session.run(publishPhase({ url: o.url, firstSeq: LIVE + 1, messages: LIVE + GAP, intervalMs: 0, timeoutMs: Math.max(200, Math.floor(stepMs / 3)), progressEveryMs: 0, onSend: (seq, at) => void sentAt.set(seq, at) })));
    // A library that was back before the gap was accepted may have got it live: nothing to judge then.
    const backBeforeGap = backAt !== undefined;

    // reconnects
    t0 = Date.now();
    if (t.reconnect === 'manual') {
      const back = await bounded('reconnect()', () => session.reconnect(0, afterOffline(0, { retryMs: 200, maxAttempts: 3, attemptTimeoutMs: budget() })));
      verdict('reconnects', t0, back.ok && back.value && backAt !== undefined, !back.ok ? back.why : !back.value ? 'reconnect() did not subscribe again in 3 attempts' : backAt === undefined ? 'reconnect() resolved but the client emitted no `connected` event (attempt > 0)' : `the runner's reconnect() subscribed again after ${backAt - dropped.at} ms offline`);
    } else {
      // A library's first retry waits out its own backoff (@anycable/core's default, at the 3 s
      // ping: 1.5-9 s), which one step's bound can miss: it gets two, counted from the drop.
      const libraryMs = LIBRARY_RECONNECT_STEPS * stepMs;
      const back = await until(() => backAt !== undefined, Math.min(dropped.at! + libraryMs, deadline) - Date.now());
      verdict('reconnects', t0, back, back ? `the client's library reconnected by itself after ${backAt! - dropped.at!} ms offline` : `capabilities.reconnect is 'library' but the client emitted no \`connected\` (attempt > 0) within ${libraryMs} ms of the drop (${LIBRARY_RECONNECT_STEPS} x --step-timeout-ms)`);
    }

    // restored: the session's own resume outcome and the missed messages, against the declaration
    t0 = Date.now();
    const gapSeqs = [...Array(GAP).keys()].map((k) => LIVE + 1 + k);
    if (!verdicts.at(-1)!.ok) verdict('restored', t0, false, 'not checked: the client did not reconnect', true);
    else if (!gap.ok || gap.value.result.published < GAP) verdict('restored', t0, false, `the messages meant for the offline client were not accepted: ${gap.ok ? gap.value.result.failures.slice(0, 2).join('; ') : gap.why}`);
    else if (backBeforeGap) verdict('restored', t0, false, 'the client was back before the missed messages were published: nothing to judge');
    else {
      await until(() => gapSeqs.every((s) => session.ledger.latencyOf(1, s) !== undefined));
      await until(() => gapSeqs.every((s) => session.ledger.latencyOf(0, s) !== undefined), Math.min(2000, budget()));
      const filled = gapSeqs.filter((s) => session.ledger.latencyOf(0, s) !== undefined).length;
      const outcomes = Object.keys(session.lossReport().resumeOutcomes);
      const said = outcomes.length ? outcomes.map(outcomeLabel).join(', ') : 'no resume outcome';
      const declared = t.capabilities.resume;
      const saw = filled === GAP ? (outcomes.includes('session_restored') ? 'session' : 'history') : 'nothing';
      const holds = declared === 'none' || (filled === GAP && (declared === 'history' ? outcomes.some((k) => k === 'history_filled' || k === 'session_restored') : outcomes.includes('session_restored')));
      const more = declared === 'none' && filled === GAP ? ` (the server restored ${GAP} of ${GAP} missed messages: declare resume 'session' or 'history' so losses are booked right)` : '';
      verdict('restored', t0, holds, `declared resume '${declared}'; the reconnect restored ${saw}: ${filled} of ${GAP} messages published while offline arrived after it (${said})${more}`);
    }

    // lean: tens of thousands per process, checked at `leanClients`
    t0 = Date.now();
    const leanChoice = pickClient(t, { prefer: 'lean' });
    const n = o.leanClients ?? CHECK_OPTIONS.leanClients.default;
    if (leanChoice?.kind !== 'lean') verdict('lean', t0, true, `no lean client declared (${t.leanUnsupported ?? 'leanUnsupported'})`, true);
    else if (n === 0) verdict('lean', t0, true, 'skipped (--lean-clients 0)', true);
    else {
      const ls = new RunSession({ target: t, urlOf: () => o.url, clients: n, messages: 1, runId, stream: `target-check-lean-${runId}`, seed, createClient: leanChoice.create });
      lean.push(ls);
      const ramp = await bounded('lean connect', () => ls.run(connectPhase({ perSec: n * 4, timeoutMs: Math.max(100, budget() - 500) })));
      const up = ls.upCount;
      if (!ramp.ok || up < n) {
        const causes = Object.entries(ls.book.summary().connectFailureCauses).map(([k, v]) => `${k} x${v}`).join(', ');
        // The first lean connect failure's words, where the book kept them.
        const f = targetModuleReport(ls.clients)?.faults[0];
        verdict('lean', t0, false, `${up} of ${n} lean clients subscribed${causes ? ` (failures: ${causes})` : ''}${ramp.ok ? '' : `; ${ramp.why}`}${f ? `; ${f.hook}: ${f.sample}` : ''}`);
      } else {
        const p = await bounded('publish', () => ls.run(publishPhase({ url: o.url, messages: 1, intervalMs: 0, timeoutMs: Math.max(200, Math.floor(stepMs / 3)), progressEveryMs: 0 })));
        const all = p.ok && (await until(() => ls.ledger.totals().receivedDeliveries === n));
        verdict('lean', t0, all, all ? `${n} lean clients subscribed and each got the published message (${Date.now() - t0} ms)` : `${n} subscribed; ${ls.ledger.totals().receivedDeliveries} of ${n} got the published message${p.ok ? '' : ` (${p.why})`}`);
      }
    }

    // whispers: client-to-client through the server
    t0 = Date.now();
    if (!t.capabilities.whispers) verdict('whispers', t0, true, 'not declared', true);
    else {
      const token = `whisper-${runId}`;
      const w = await bounded('whisper()', () => {
        if (typeof session.clients[0]!.whisper !== 'function') throw new Error('capabilities.whispers is true but the client has no whisper()');
        session.clients[0]!.whisper({ check: token });
      });
      const got = w.ok && (await until(() => foreign.some((f) => f.includes(token))));
      verdict('whispers', t0, got, !w.ok ? w.why : got ? 'a whisper from one client reached the other' : `whisper() returned but the other client got nothing within ${stepMs} ms`);
    }
    return finish();
  } finally {
    session.close();
    for (const s of lean) s.close();
  }

  function finish(): CheckReport {
    const targetModule = targetModuleReport([...session.clients, ...lean.flatMap((s) => s.clients)]);
    if (targetModule) {
      const f = targetModule.faults;
      verdict('contract', Date.now(), f.length === 0, f.length ? `${targetModule.file} broke the contract: ${f.map((x) => `${x.hook} x${x.count} (first: ${x.sample})`).join('; ')}` : `${targetModule.file}: no hook broke the contract`);
    }
    const order = (v: Verdict) => CHECK_STEPS.indexOf(v.step);
    verdicts.sort((a, b) => order(a) - order(b));
    return { target: t.name, url: o.url, ok: verdicts.every((v) => v.ok || v.skipped), verdicts, elapsedMs: Date.now() - started, ...(targetModule ? { targetModule } : {}) };
  }
}

/** The verdicts as lines: `PASS|FAIL|SKIP step reason`. */
export function formatCheck(r: CheckReport): string {
  const mark = (v: Verdict) => (v.skipped ? 'SKIP' : v.ok ? 'PASS' : 'FAIL');
  const lines = r.verdicts.map((v) => `${mark(v)}  ${v.step.padEnd(10)} ${v.reason}`);
  return `target:check ${r.target} at ${r.url} (${r.elapsedMs} ms)\n${lines.join('\n')}\n${r.ok ? 'every declared capability holds' : 'FAILED: the lines marked FAIL do not hold'}\n`;
}

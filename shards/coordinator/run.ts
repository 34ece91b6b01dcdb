import { ReboundError } from '../../lib/errors.ts';
import { parseOptions, type OptionTable } from '../../lib/options.ts';
import { redactUrlCredentialsDeep } from '../../lib/redact.ts';
import { stamp } from '../../engine/measure/result-files.ts';
import { mergeShards } from '../merge/merge.ts';
import type { ShardOutcome } from '../merge/types.ts';
import { combineClock, measureOffset, wallClock, type ClockSample } from './clock.ts';
import { checkShard } from './health.ts';
import { safeText } from '../../lib/escape.ts';
import { multiTest, NOT_FORWARDED, SHARED_STREAM_TESTS, TEST_TABLES, type CoordOptions } from './options.ts';
import { runShardJob } from './shard-job.ts';

export function parseShardList(csv: string): { name: string; url: string }[] {
  const urls = csv.split(',').map((s) => s.trim()).filter(Boolean);
  if (!urls.length) throw new ReboundError('RR_ERR_SHARDS_MISSING', 'no shards: set SHARDS=url1,url2,... (runner base URLs) or pass --shards');
  return urls.map((url, i) => {
    if (!URL.canParse(url)) throw new ReboundError('RR_ERR_OPTION_INVALID', `shard ${i + 1} is not a URL: ${JSON.stringify(url)}`, { details: { option: 'shards' } });
    const { protocol } = new URL(url);
    if (protocol !== 'http:' && protocol !== 'https:') throw new ReboundError('RR_ERR_OPTION_INVALID', `shard ${i + 1} must be an http(s) URL: ${JSON.stringify(url)}`, { details: { option: 'shards' } });
    return { name: `s${i + 1}`, url: url.replace(/\/+$/, '') };
  });
}

/** Validate the test's params with its table (when this tree has it) and return what to send. */
export function testQuery(test: string, values: Record<string, unknown>): Record<string, string> {
  const table = TEST_TABLES[test as keyof typeof TEST_TABLES] as OptionTable | undefined;
  const forwarded = Object.fromEntries(Object.entries(values).filter(([k]) => !NOT_FORWARDED.includes(k)));
  if (table) multiTest(test)?.checkQuery?.(parseOptions(table, { values: forwarded, origin: 'CLI' }));
  return Object.fromEntries(Object.entries(forwarded).map(([k, v]) => [k, String(v)]));
}

/** For a caller that drives the coordinator in-process (the local fleet): stop polling, watch each shard's progress. */
export interface MultiShardControl {
  signal?: AbortSignal;
  onProgress?: (shard: string, status: string, progress: unknown) => void;
}

/**
 * Fan one test out over every shard at once and merge exactly. Progress goes to `log` (one line
 * per shard event, prefixed with the shard's name); the report is the merged JSON.
 */
export async function runMultiShard(o: CoordOptions, params: Record<string, string>, print: (line: string) => void, ctl: MultiShardControl = {}) {
  // Every line may carry a shard's text (its log, errors, snippets): escaped before it is shown.
  const log = (line: string) => print(safeText(line));
  const started = new Date();
  const shards = parseShardList(o.shards);
  const token = o.token || undefined;
  const k = shards.length;
  const perShardN = o.perShardN || (o.total ? Math.ceil(o.total / k) : 0);
  if (perShardN && (params.n !== undefined || params.clients !== undefined)) {
    throw new ReboundError('RR_ERR_OPTION_INVALID', 'give the clients per shard once: PER_SHARD_N/--per-shard-n/TOTAL or the test\'s --n, not both', { details: { option: 'perShardN' } });
  }
  const endpoint = `/bench-${o.test}-${o.target}`;
  const table = TEST_TABLES[o.test as keyof typeof TEST_TABLES];
  const mode = o.sharedStream ? 'shared' : 'own';
  if (mode === 'shared') checkSharedStream(o.test, params);

  // The health sweep: every shard checked at once, before any job is sent.
  const health = await Promise.all(shards.map((s) => checkShard(s.name, s.url, token, { maxBytes: o.maxResponseBytes, route: { test: o.test, target: o.target } })));
  for (const h of health) log(`[${h.name}] ${h.ok ? 'healthy' : `UNHEALTHY: ${h.problem}`} (${h.url})`);
  // A target no shard serves is the caller's name, not a sick fleet: say which targets they do serve.
  if (health.every((h) => h.unserved)) {
    const known = [...new Set(health.flatMap((h) => h.unserved!))];
    throw new ReboundError('RR_ERR_TARGET_UNKNOWN', `no shard serves target "${o.target}" for ${o.test} (POST ${endpoint}); the shards serve: ${safeText(known.join(', ')) || 'none'}. A target file of your own is loaded on every shard with TARGET_MODULES (docs/targets.md)`, { details: { option: 'target', known } });
  }
  const sick = health.filter((h) => !h.ok);
  if (sick.length && !o.skipUnhealthy) {
    throw new ReboundError('RR_ERR_SHARD_UNHEALTHY', `${sick.length} of ${k} shards failed the health sweep: ${sick.map((h) => `${h.name} ${h.url}: ${safeText(h.problem ?? '')}`).join('; ')} (pass --skip-unhealthy to run on the others)`);
  }
  const live = shards.filter((s) => health.find((h) => h.name === s.name)?.ok);
  const publisher = mode === 'shared' ? live[0]?.name : undefined;

  const before = new Map<string, ClockSample>();
  const exchange = async (into: Map<string, ClockSample>) => {
    const now = wallClock();
    await Promise.all(live.map(async (s) => {
      try {
        into.set(s.name, await measureOffset(s.url, o.clockExchanges, undefined, now));
      } catch (err) {
        log(`[${s.name}] ${(err as Error).message}`);
      }
    }));
  };
  if (mode === 'shared') await exchange(before);

  const sharedTag = `${o.test}-multi-${stamp(started)}`;
  const asked = new Map<string, Record<string, string>>();
  const launch = (s: { name: string; url: string }, i: number, onProgress?: (status: string, progress: unknown) => void): Promise<ShardOutcome> => {
    const h = health.find((x) => x.name === s.name)!;
    if (!h.ok) return Promise.resolve<ShardOutcome>({ name: s.name, url: s.url, status: 'unreachable', error: `health sweep: ${h.problem}`, durationMs: 0 });
    let query: Record<string, string> = { ...params };
    if (perShardN) query.n = String(perShardN);
    if (mode === 'shared') {
      // One stream, one tag; only the publisher publishes, the others only subscribe and record.
      query.stream = params.stream ?? sharedTag;
      query.runId = params.runId ?? sharedTag;
      if (s.name !== publisher) query.subscribeOnly = '1';
    } else {
      // Own streams: each shard on its own stream/rooms, so no shard hears another's traffic.
      if (params.stream !== undefined) query.stream = `${params.stream}-s${i + 1}`;
      // And on its own whatever else the test shares between clients (whispers' rooms).
      const own = multiTest(o.test)?.ownStream;
      if (own) query = own(query, `s${i + 1}`);
    }
    asked.set(s.name, query);
    return runShardJob(
      { name: s.name, url: s.url, endpoint, query },
      {
        token,
        pollMs: o.pollMs,
        timeoutMs: o.timeoutSec * 1000,
        planGraceMs: o.planGraceSec * 1000,
        maxResponseBytes: o.maxResponseBytes,
        logLines: o.logLines,
        table,
        allowParamMismatch: o.allowParamMismatch,
        onLine: (l) => log(`[${s.name}] ${l}`),
        ...(onProgress || ctl.onProgress ? { onProgress: (st: string, p: unknown) => (onProgress?.(st, p), ctl.onProgress?.(s.name, st, p)) } : {}),
        ...(ctl.signal ? { signal: ctl.signal } : {}),
      },
    ).then((out) => (log(`[${s.name}] ${out.status}${out.error ? `: ${out.error}` : ''}`), out));
  };

  let outcomes: ShardOutcome[];
  if (mode === 'shared') {
    // Barrier: the publisher starts only once every subscriber's clients are connected and
    // listening, so no subscriber misses a message because it was still ramping.
    const subs = shards.map((s, i) => ({ s, i })).filter(({ s }) => s.name !== publisher);
    const listening: Promise<void>[] = [];
    const subRuns = subs.map(({ s, i }) => {
      let ready!: () => void;
      listening.push(new Promise<void>((r) => (ready = r)));
      const watch = (status: string, progress: unknown) => {
        const phase = (progress as { phase?: unknown } | undefined)?.phase;
        if (status !== 'running' && status !== 'queued') ready();
        else if (phase === 'listen' || phase === 'settle' || phase === 'report') ready();
      };
      return launch(s, i, watch).finally(ready);
    });
    await Promise.all(listening);
    if (subs.length) log(`[coordinator] ${subs.length} subscribing shard(s) listening; starting the publisher ${publisher ?? '(none)'}`);
    const pubIdx = shards.findIndex((s) => s.name === publisher);
    const pubRun = pubIdx >= 0 ? launch(shards[pubIdx]!, pubIdx) : undefined;
    const done = await Promise.all([...subRuns, ...(pubRun ? [pubRun] : [])]);
    outcomes = shards.map((s) => done.find((d) => d.name === s.name)!);
  } else {
    outcomes = await Promise.all(shards.map((s, i) => launch(s, i)));
  }

  const sharedClock = async () => {
    const after = new Map<string, ClockSample>();
    await exchange(after);
    for (const out of outcomes) {
      const b = before.get(out.name);
      const a = after.get(out.name);
      if (b && a) out.clock = combineClock(b, a);
    }
    const offsets = outcomes.flatMap(({ name, clock: c }) => (c ? [{ name, offsetMs: c.offsetMs, uncertaintyMs: c.uncertaintyMs, rttMs: c.rttMs }] : []));
    return { publisher: publisher ?? '', offsets, maxUncertaintyMs: Math.max(0, ...offsets.map((x) => x.uncertaintyMs)) };
  };
  const clock = mode === 'shared' ? await sharedClock() : null;

  const run = await mergeShards(outcomes, {
    perShardN: perShardN || undefined,
    mode,
    clockStepBudgetMs: o.clockStepMs,
    decodeDeadlineMs: o.histogramDeadlineMs,
    ...(publisher ? { publisher } : {}),
    // Each result's own params are held to what that shard was asked, by meaning (an echo at enqueue proves nothing about what ran).
    schema: (x) => ({ test: o.test, required: multiTest(o.test)?.required ?? [], ...(o.allowParamMismatch ? {} : { asked: asked.get(x.name) ?? {} }), ...(table ? { table } : {}) }),
  });
  const { exitCode, exitReason } = verdict(run);
  // Printed, written and reported from here: shard and target URLs without their credentials.
  return redactUrlCredentialsDeep({
    testType: o.test,
    target: o.target,
    endpoint,
    mode: `${mode}-stream` as const,
    shards: k,
    perShardN: perShardN || null,
    startedAt: started.toISOString(),
    elapsedMs: Date.now() - started.getTime(),
    params,
    meta: { shardUrls: shards.map((s) => s.url), publisher: publisher ?? null },
    clock,
    validity: run.validity,
    perShard: run.perShard,
    merged: run.merged,
    exitCode,
    exitReason,
  });
}

/** The merged JSON of a fleet run (what `npm run bench:multi` writes and the multi-shard report reads). */
export type MultiShardReport = Awaited<ReturnType<typeof runMultiShard>>;

function checkSharedStream(test: string, params: Record<string, string>): void {
  if (!SHARED_STREAM_TESTS.includes(test)) {
    throw new ReboundError('RR_ERR_OPTION_INVALID', `--shared-stream needs a test with one publisher and subscribers (${SHARED_STREAM_TESTS.join(', ')}); ${test} has none`, { details: { option: 'sharedStream' } });
  }
  if (params.workers !== undefined && params.workers !== '1') {
    throw new ReboundError('RR_ERR_OPTION_INVALID', '--shared-stream runs one worker per shard (workers put each worker on its own stream)', { details: { option: 'workers' } });
  }
  if (params.subscribeOnly !== undefined || params['subscribe-only'] !== undefined) {
    throw new ReboundError('RR_ERR_OPTION_INVALID', 'subscribe-only is set per shard by the coordinator in --shared-stream mode, not by hand', { details: { option: 'subscribeOnly' } });
  }
}

/** The benchmark's exit codes: 2 on a fatal flag, 1 on a failed shard or any loss, else 0. */
export function verdict(run: Awaited<ReturnType<typeof mergeShards>>): { exitCode: 0 | 1 | 2; exitReason: string } {
  const fatal = run.validity.flags.filter((f) => f.severity === 'fatal');
  if (fatal.length) return { exitCode: 2, exitReason: `invalid: ${fatal.map((f) => f.code).join(', ')}` };
  const failed = run.perShard.filter((x) => x.status !== 'done');
  if (failed.length) return { exitCode: 1, exitReason: `failed shards: ${failed.map((x) => `${x.name} (${x.status})`).join(', ')}` };
  const lost = run.merged.lostDeliveries;
  if (typeof lost === 'number' && lost > 0) return { exitCode: 1, exitReason: `${lost} deliveries lost` };
  const idleFailed = run.merged.failed;
  if (typeof idleFailed === 'number' && idleFailed > 0) return { exitCode: 1, exitReason: `${idleFailed} connections failed` };
  return { exitCode: 0, exitReason: 'ok' };
}

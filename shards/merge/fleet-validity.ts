import { verdict } from '../../engine/measure/validity.ts';
import { num, type FleetFlag, type ShardOutcome, type ShardSummary } from './types.ts';
import type { MergeOptions } from './merge.ts';
import { carriedShardFlags, mergedFigureFlags } from './fleet-rules.ts';

/** A shard's p99 this many times the fleet's median p99 (and 50 ms above it) is called out. */
const OUTLIER_FACTOR = 3;
const OUTLIER_MIN_MS = 50;
/** Below this share of its target every shard stopping at one count is the rig's ceiling. */
const CEILING_SHARE = 0.99;

/** Default latency budget for a wall-clock step during a run (ms): NTP slews stay far below it, a step does not. */
const CLOCK_STEP_BUDGET_MS = 50;

/**
 * A shard whose wall clock moved against its monotonic clock by more than the budget during the run
 * (the runner's `clockDrift`, shards/runner/clock-drift.ts): every latency it stamped across the
 * step carries it. Fatal when the shard measured latencies; a warning for counts-only tests.
 */
function clockStepFlags(ok: readonly ShardOutcome[], budgetMs: number): FleetFlag[] {
  return ok.flatMap((o): FleetFlag[] => {
    const d = o.result!.clockDrift as { maxStepMs?: unknown; endStepMs?: unknown } | undefined;
    const step = num(d?.maxStepMs);
    if (step === undefined || step <= budgetMs) return [];
    const latency = (o.result!.latencyHistogram?.count ?? 0) > 0;
    return [{
      code: 'CLOCK_STEPPED',
      severity: latency ? 'fatal' : 'warning',
      shards: [o.name],
      message: `${o.name}'s wall clock stepped ${step} ms against its monotonic clock during the run (${typeof d?.endStepMs === 'number' ? `${d.endStepMs} ms at the end` : 'end unknown'}; budget ${budgetMs} ms)${latency ? ': its latencies carry the step' : ''}`,
    }];
  });
}

/**
 * Validity across the fleet: the benchmark's cross-shard rules, plus the shards' own flags
 * carried over with their names so one shard's problem is visible in the merged verdict.
 */
export function fleetValidity(
  outcomes: readonly ShardOutcome[],
  perShard: readonly ShardSummary[],
  merged: Record<string, unknown>,
  opts: MergeOptions & Required<Pick<MergeOptions, 'plan'>>,
): { valid: boolean; flags: FleetFlag[] } {
  const flags: FleetFlag[] = [];
  const ok = outcomes.filter((o) => o.status === 'done' && o.result);
  const invalid = outcomes.filter((o) => o.status === 'invalid');
  if (invalid.length) {
    flags.push({
      code: 'SHARD_RESULT_INVALID',
      severity: 'warning',
      shards: invalid.map((o) => o.name),
      message: `${invalid.length} of ${outcomes.length} shards returned a result that fails the schema (${invalid.map((o) => `${o.name}: ${(o.error ?? '').replace(/^SHARD_RESULT_INVALID: /, '')}`).join('; ')}); they are left out of every figure, not counted as the target's loss`,
    });
  }
  const bad = outcomes.filter((o) => !(o.status === 'done' && o.result) && o.status !== 'invalid');
  if (bad.length) {
    flags.push({
      code: 'SHARD_FAILED',
      severity: 'warning',
      shards: bad.map((o) => o.name),
      message: `${bad.length} of ${outcomes.length} shards did not finish (${bad.map((o) => `${o.name}: ${o.status}${o.error ? ` (${o.error})` : ''}`).join('; ')}); their clients are left out of every figure, not counted as the target's loss`,
    });
  }
  if (!ok.length) flags.push({ code: 'NO_SHARD_SUCCEEDED', severity: 'fatal', message: 'no shard returned a result' });

  const done = perShard.filter((s) => s.status === 'done');
  const connected = done.map((s) => s.connected);
  // Without PER_SHARD_N the clients each shard was asked are the ceiling's measure, when all asked the same.
  const asked = done.map((s) => s.clients);
  const n = opts.perShardN ?? (asked.length && asked.every((c) => c !== null && c === asked[0]) ? asked[0]! : undefined);
  if (n !== undefined && connected.length >= 2 && connected.every((c) => c !== null && c === connected[0]) && connected[0]! < CEILING_SHARE * n) {
    flags.push({
      code: 'UNIFORM_SHARD_CEILING',
      severity: 'fatal',
      message: `every shard stopped at exactly ${connected[0]} connected of ${n} asked: a limit of the load generator (fd, ports, memory), not of the target`,
    });
  }

  // Shared-stream mode has one publisher by design; only own-stream shards must all publish.
  if (opts.mode !== 'shared') {
    const pubs = ok.map((o) => ({ name: o.name, p: o.result!.published })).filter((x): x is { name: string; p: number } => typeof x.p === 'number');
    const silent = pubs.filter((x) => x.p === 0);
    if (silent.length && silent.length < pubs.length) {
      flags.push({
        code: 'PARTIAL_PUBLISHER_SILENCE',
        severity: 'fatal',
        shards: silent.map((x) => x.name),
        message: `shards ${silent.map((x) => x.name).join(', ')} published nothing while the others did: their delivery figures measure the publisher, not the target`,
      });
    }
  }

  const withLat = perShard.filter((s) => s.latency && s.latency.count > 0);
  if (withLat.length >= 3) {
    const p99s = withLat.map((s) => s.latency!.p99).sort((a, b) => a - b);
    const median = p99s[Math.floor((p99s.length - 1) / 2)]!;
    const out = withLat.filter((s) => s.latency!.p99 > OUTLIER_FACTOR * median && s.latency!.p99 - median > OUTLIER_MIN_MS);
    if (out.length) {
      flags.push({
        code: 'SHARD_LATENCY_OUTLIER',
        severity: 'warning',
        shards: out.map((s) => s.name),
        message: `p99 of ${out.map((s) => `${s.name} ${s.latency!.p99} ms`).join(', ')} is over ${OUTLIER_FACTOR}x the shards' median p99 ${median} ms: look at that shard's machine before blaming the target`,
      });
    }
  }

  if (opts.mode === 'shared') {
    const clocks = ok.filter((o) => o.clock);
    const worst = Math.max(0, ...clocks.map((o) => o.clock!.uncertaintyMs));
    const raw = merged.latencyRawMs as { p50: number } | undefined;
    if (clocks.length < ok.length) {
      flags.push({ code: 'CLOCK_UNCERTAINTY_EXCEEDS_LATENCY', severity: 'fatal', shards: ok.filter((o) => !o.clock).map((o) => o.name), message: 'shared-stream run without a clock measurement for every shard: its latencies cannot be corrected' });
    } else if (raw && worst > raw.p50) {
      flags.push({
        code: 'CLOCK_UNCERTAINTY_EXCEEDS_LATENCY',
        severity: 'fatal',
        shards: clocks.filter((o) => o.clock!.uncertaintyMs > raw.p50).map((o) => o.name),
        message: `clock offset uncertainty up to ${worst} ms exceeds the median latency ${raw.p50} ms: the corrected latencies are within the clock error`,
      });
    }
  }

  for (const o of ok) {
    const fatal = (o.result!.validity?.flags ?? []).filter((f) => f.severity === 'fatal');
    if (fatal.length) {
      flags.push({ code: 'SHARD_INVALID', severity: 'fatal', shards: [o.name], message: `${o.name}: ${fatal.map((f) => `${f.code} (${f.message})`).join('; ')}` });
    }
  }
  flags.push(...clockStepFlags(ok, opts.clockStepBudgetMs ?? CLOCK_STEP_BUDGET_MS), ...mergedFigureFlags(merged, opts.plan), ...carriedShardFlags(ok));
  return verdict(flags);
}

import { isObj, num } from '../../lib/figures.ts';
import type { MergeSpec, NamedShardResult } from '../../engine/session/module.ts';

const obj = (v: unknown) => (isObj(v) ? v : undefined);

/** A shard's idle figures a capacity user came for, as kept in `perShard[]`. */
export function idleShardFigures(r: Readonly<Record<string, unknown>> | undefined) {
  if (!r || (r.runner === undefined && r.targetMetrics === undefined && r.failureCauses === undefined)) return undefined;
  const runner = obj(r.runner);
  const tm = obj(r.targetMetrics);
  const causes = obj(r.failureCauses) ?? obj(r.connectFailureCauses);
  return {
    // The shard's own target figure: the target's growth over *this shard's* subscribed (the whole target when the shards share it).
    targetBytesPerConnection: num(tm?.bytesPerConnection) ?? null,
    runnerRssPerClientBytes: num(runner?.rssPerClientBytes) ?? null,
    runnerPeakRssBytes: num(runner?.rssPeakBytes) ?? null,
    failureCauses: causes ? (Object.fromEntries(Object.entries(causes).filter(([, n]) => typeof n === 'number')) as Record<string, number>) : null,
  };
}

export type IdleShardFigures = NonNullable<ReturnType<typeof idleShardFigures>>;

/**
 * Fleet idle figures. Every shard samples the one target they all load, so each sees the whole
 * target's memory: the target's bytes per connection is (highest peak any shard saw − lowest
 * baseline) / subscribed over all shards, never a sum or a mean of the shards' own quotients.
 * Runner memory is per shard machine: Σ(peak − baseline) / Σ subscribed. A shard whose samples
 * missed part of the target (`targetMetrics.complete: false`), or that does not say, makes the
 * merged figure `complete: false`, flagged FLEET_TARGET_MEMORY_INCOMPLETE: never silently low.
 */
export function mergeIdle(ok: readonly NamedShardResult[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const subscribed = ok.reduce((n, o) => n + (num(o.result.subscribed) ?? 0), 0);
  const tms = ok.map((o) => obj(o.result.targetMetrics)).filter((t): t is Record<string, unknown> => t !== undefined);
  const peaks = tms.map((t) => num(t.peakRssBytes)).filter((v): v is number => v !== undefined);
  const bases = tms.map((t) => num(t.baselineRssBytes)).filter((v): v is number => v !== undefined);
  if (tms.length === ok.length && peaks.length === ok.length && bases.length === ok.length && subscribed > 0) {
    const peak = Math.max(...peaks);
    const base = Math.min(...bases);
    out.targetBytesPerConnection = Math.round((peak - base) / subscribed);
    // Our own words, not the shards': which shards missed part of the target, or did not say.
    const partial = ok.filter((_, i) => tms[i]!.complete === false).map((o) => o.name);
    const unsaid = ok.filter((_, i) => typeof tms[i]!.complete !== 'boolean').map((o) => o.name);
    const why = [
      partial.length ? `${partial.join(', ')} saw only part of the target's processes while the connections were held (their TARGET_MEMORY_INCOMPLETE flags say how)` : '',
      unsaid.length ? `${unsaid.join(', ')} did not say whether their samples covered every process of the target (a runner from before that check)` : '',
    ].filter(Boolean);
    out.targetMemory = {
      source: [...new Set(tms.map((t) => (typeof t.source === 'string' && /^[\w-]{1,32}$/.test(t.source) ? t.source : 'unknown')))].join(','),
      baselineRssBytes: base,
      peakRssBytes: peak,
      subscribed,
      shardsSampling: tms.length,
      /** False: the figure may understate the target (FLEET_TARGET_MEMORY_INCOMPLETE says why). */
      complete: why.length === 0,
      incompleteReason: why.length ? `${why.join('; ')}: the merged target bytes per connection may be understated` : null,
      incompleteShards: [...partial, ...unsaid],
    };
  } else if (tms.length) {
    out.targetBytesPerConnection = null;
    out.targetMemory = { note: `${ok.length - peaks.length} of ${ok.length} shards did not sample the target's memory: no fleet figure` };
  }
  const runners = ok.map((o) => obj(o.result.runner));
  const grow = runners.map((r) => (r && num(r.rssPeakBytes) !== undefined && num(r.rssBaselineBytes) !== undefined ? num(r.rssPeakBytes)! - num(r.rssBaselineBytes)! : undefined));
  if (runners.some(Boolean)) {
    out.runnerRssPerClientBytes = grow.every((g) => g !== undefined) && subscribed > 0 ? Math.round(grow.reduce((a, b) => a! + b!, 0)! / subscribed) : null;
    out.runnerRssPerClientBytesByShard = Object.fromEntries(ok.map((o, i) => [o.name, num(runners[i]?.rssPerClientBytes) ?? null]));
  }
  const causes = ok.map((o) => [o.name, obj(o.result.failureCauses)] as const).filter(([, c]) => c);
  if (causes.length) out.failureCausesByShard = Object.fromEntries(causes);
  return out;
}

/** How idle results add up over shards: the funnel's counts, the phases' extents, the target's memory from every shard's samples. */
export const IDLE_MERGE: MergeSpec = {
  sum: ['clients', 'connected', 'welcomed', 'subscribed', 'failed', 'openAtEndOfHold'],
  max: ['rampElapsedMs', 'timeToAllSubscribedMs', 'holdElapsedMs', 'totalElapsedMs'],
  countMaps: ['failureCauses', 'disconnectedDuringHold'],
  counts: ['clients', 'connected', 'welcomed', 'subscribed', 'failed', 'openAtEndOfHold'],
  nonNegative: ['rampElapsedMs', 'holdElapsedMs', 'totalElapsedMs'],
  check(r) {
    // Declared counts: integers >= 0 by the time this runs.
    const n = r as Readonly<Record<string, number | undefined>>;
    const clients = n.clients;
    if (clients !== undefined) for (const k of ['connected', 'subscribed', 'failed']) if (n[k] !== undefined && n[k] > clients) return `${k} ${n[k]} exceeds clients ${clients}`;
    // connected / welcomed / subscribed are the stages of one funnel (the benchmark's idle fields):
    // a client that connected but timed out before its subscription is in `connected` and in
    // `failed`, so only the last stage and the failures partition the clients.
    const funnel = (['connected', 'welcomed', 'subscribed'] as const).filter((k) => n[k] !== undefined);
    for (let i = 1; i < funnel.length; i++) {
      const [a, b] = [funnel[i - 1]!, funnel[i]!];
      if (n[b]! > n[a]!) return `${b} ${n[b]} exceeds ${a} ${n[a]}`;
    }
    const last = funnel.at(-1);
    return last && n.failed !== undefined && clients !== undefined && n[last]! + n.failed > clients ? `${last} ${n[last]} + failed ${n.failed} exceeds clients ${clients}` : undefined;
  },
  derive(merged, shards) {
    if (shards.some((s) => s.result.runner !== undefined || s.result.targetMetrics !== undefined) && shards.some((s) => s.result.subscribed !== undefined)) Object.assign(merged, mergeIdle(shards));
  },
  perShard: idleShardFigures,
  rules(merged) {
    const tm = merged.targetMemory as { complete?: unknown; incompleteReason?: unknown; incompleteShards?: unknown } | undefined;
    return tm?.complete === false ? [{ code: 'FLEET_TARGET_MEMORY_INCOMPLETE', severity: 'warning', ...(Array.isArray(tm.incompleteShards) ? { shards: tm.incompleteShards as string[] } : {}), message: String(tm.incompleteReason) }] : [];
  },
};

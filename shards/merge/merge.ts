import { mergeLatency, summarize, type EncodedLatency } from '../../engine/measure/latency.ts';
import { addMaps, pct } from '../../engine/session/results.ts';
import { verdict } from '../../engine/measure/validity.ts';
import { fleetValidity } from './fleet-validity.ts';
import { shiftLatency } from './latency-shift.ts';
import { MERGE_PLAN, type MergePlan } from './plan.ts';
import { screenOutcomes, type SchemaContext } from './schema.ts';
import { judgeOnPublisher } from './shared-stream.ts';
import { CONDITIONS } from '../../chaos/weather/conditions.ts';
import { mergeDisruptions } from '../../runners/jitter/merge.ts';
import type { WeatherResult } from '../../runners/jitter/weather.ts';
import { num, type ShardOutcome, type ShardResult, type ShardSummary } from './types.ts';

/** Connected clients of a result, whatever the runner calls them. */
const connectedOf = (r: ShardResult): number | undefined => num(r.connectedClients) ?? num(r.subscribed) ?? num(r.connected);

export interface MergeOptions {
  /** Clients asked of each shard (for the uniform-ceiling rule). */
  perShardN?: number;
  /** `own`: every shard publishes its own stream on its own clock; `shared`: one publisher, offsets corrected. */
  mode?: 'own' | 'shared';
  /** Shared mode: the shard whose clock stamped `sentAt` (the publisher); its offset is the reference. */
  publisher?: string;
  /** What each shard was asked (test, query, option table): its result is checked against it before the merge. */
  schema?: (o: ShardOutcome) => SchemaContext;
  /** A shard whose wall clock stepped more than this against its monotonic clock during the run is CLOCK_STEPPED (ms; default 50). */
  clockStepBudgetMs?: number;
  /** Time each shard's histogram may take to decode before its shard is refused (ms; default DEFAULT_DECODE_DEADLINE_MS). */
  decodeDeadlineMs?: number;
  /** The runners' merge declarations (default: every module's, MERGE_PLAN). */
  plan?: MergePlan;
}

/**
 * Exact merge of N shard results: counters add, latency HdrHistograms add bucket by bucket (never
 * percentiles averaged, never samples pooled), rates are recomputed from the summed counts, and
 * min-normalised figures come from the merged histogram. Shards that did not finish are left out
 * of every figure (their clients are not the target's loss) and named in the validity flags.
 */
export async function mergeShards(input: readonly ShardOutcome[], opts: MergeOptions = {}) {
  const mode = opts.mode ?? 'own';
  const plan = opts.plan ?? MERGE_PLAN;
  // Nothing a shard returned is believed before it passes the schema: a malformed result is that shard's failure.
  const given = await screenOutcomes(input, opts.schema, opts.decodeDeadlineMs, plan);
  // Shared stream: subscribers are judged against the publisher's accepted set before anything adds up.
  const { outcomes, flags: sharedFlags } = mode === 'shared' && opts.publisher ? judgeOnPublisher(given, opts.publisher) : { outcomes: given, flags: [] };
  const ok = outcomes.filter((o): o is ShardOutcome & { result: ShardResult } => o.status === 'done' && o.result !== undefined);
  const reference = mode === 'shared' ? (outcomes.find((o) => o.name === opts.publisher)?.clock?.offsetMs ?? 0) : 0;
  // A shard's latency in shared mode is its receive clock minus the publisher's send clock: remove the difference.
  const corrected = new Map<string, EncodedLatency>();
  for (const o of ok) {
    // The screen let only histograms that decoded in time through, re-encoded by the library itself.
    const h = o.result.latencyHistogram;
    if (!h) continue;
    corrected.set(o.name, mode === 'shared' && o.clock ? shiftLatency(h, -(o.clock.offsetMs - reference) * 1000) : h);
  }

  const merged: Record<string, unknown> = {};
  const figures = (k: string) => ok.map((o) => num(o.result[k])).filter((v): v is number => v !== undefined);
  // Summed fields first, then the max ones (mergePlan keeps the two lists apart).
  for (const k of [...plan.sum, ...plan.max]) {
    const vals = figures(k);
    if (vals.length) merged[k] = plan.max.includes(k) ? Math.max(...vals) : Math.round(vals.reduce((a, b) => a + b, 0) * 1000) / 1000;
  }
  // The schema let only maps of counts through.
  for (const k of plan.countMaps) {
    const maps = ok.map((o) => o.result[k]).filter((m): m is Record<string, number> => typeof m === 'object' && m !== null);
    if (maps.length) merged[k] = addMaps(maps);
  }
  const published = figures('published');
  if (published.length) {
    // Own streams: each shard published its own copy, so the per-message count is the max, the work the sum.
    merged.published = Math.max(...published);
    merged.publishedTotal = mode === 'shared' ? merged.published : published.reduce((a, b) => a + b, 0);
  }

  if (merged.expectedDeliveries !== undefined) {
    // Arrivals of messages whose publish outcome was unknown are outside expected, as in a shard's own rates.
    const received = (merged.receivedDeliveries as number) - ((merged.unconfirmedDeliveries as number | undefined) ?? 0);
    merged.deliveryRatePct = pct(received, merged.expectedDeliveries as number);
    const connectedExpected = ok.reduce((n, o) => n + (connectedOf(o.result) ?? 0) * (num(o.result.totalMessages) ?? 0), 0);
    if (connectedExpected > 0) merged.deliveryRateOfConnectedPct = pct(received, connectedExpected);
  }

  let latency: EncodedLatency | undefined;
  if (corrected.size) {
    latency = mergeLatency([...corrected.values()]);
    // Min-normalisation after the merge: one floor for the union, from the exact minimum.
    const report = summarize(latency);
    Object.assign(merged, report);
    merged.latencyHistogram = latency;
  }
  // The runners' own fleet figures (a rate from their summed counts), over everything merged so far.
  for (const s of plan.specs) s.derive?.(merged, ok);
  const weather = await mergeWeatherConditions(ok, { ...opts, mode, plan });
  if (weather) merged.weather = weather;

  const perShard = outcomes.map((o) => summarizeShard(o, corrected.get(o.name), plan));
  const floors = perShard.filter((s) => s.latency).map((s) => s.latency!.min).sort((a, b) => a - b);
  const medianFloor = floors.length ? floors[Math.floor((floors.length - 1) / 2)]! : 0;
  for (const s of perShard) if (s.latency) s.skewEstimateMs = Math.round((s.latency.min - medianFloor) * 1000) / 1000;

  const validity = fleetValidity(outcomes, perShard, merged, { ...opts, mode, plan });
  if (sharedFlags.length) validity.flags.push(...sharedFlags);
  validity.valid = verdict(validity.flags).valid;
  if (merged.subscribed !== undefined) merged.uniformShardCeiling = validity.flags.some((f) => f.code === 'UNIFORM_SHARD_CEILING');
  return { merged, perShard, validity };
}

/**
 * Network weather: each condition merged as a fleet of its own, by this same merge (the screen,
 * the histogram decode under its deadline, the summed counts and count maps, the exact latency
 * union, min-normalised after it), over each shard's figures for that condition's clients; the
 * disruption spreads as the workers' merge combines them. Shared mode: clock offsets are taken
 * relative to the publisher's beforehand (the publisher may have no weather block of its own).
 */
async function mergeWeatherConditions(ok: readonly (ShardOutcome & { result: ShardResult })[], opts: MergeOptions): Promise<WeatherResult | undefined> {
  const weatherOf = (o: ShardOutcome & { result: ShardResult }) => o.result.weather as WeatherResult | undefined;
  const withWeather = ok.filter((o) => weatherOf(o) !== undefined);
  if (!withWeather.length) return undefined;
  const reference = opts.mode === 'shared' ? (ok.find((o) => o.name === opts.publisher)?.clock?.offsetMs ?? 0) : 0;
  const conditions: WeatherResult['conditions'] = [];
  for (const name of CONDITIONS) {
    const parts = withWeather.flatMap((o) => weatherOf(o)!.conditions.filter((c) => c.condition === name).map((c) => ({ o, c })));
    if (!parts.length) continue;
    const { merged: m, perShard } = await mergeShards(
      parts.map(({ o, c }) => ({
        name: o.name,
        url: o.url,
        status: 'done' as const,
        durationMs: o.durationMs,
        ...(o.clock ? { clock: { ...o.clock, offsetMs: o.clock.offsetMs - reference } } : {}),
        result: { ...c, totalMessages: o.result.totalMessages, validity: { valid: true, flags: [] } },
      })),
      { mode: opts.mode ?? 'own', ...(opts.decodeDeadlineMs !== undefined ? { decodeDeadlineMs: opts.decodeDeadlineMs } : {}), ...(opts.plan ? { plan: opts.plan } : {}) },
    );
    const merged = parts.filter(({ o }) => perShard.some((p) => p.name === o.name && p.status === 'done'));
    const n = (k: string) => (typeof m[k] === 'number' ? (m[k] as number) : 0);
    conditions.push({
      condition: name,
      share: parts[0]!.c.share,
      clients: n('clients'),
      proxies: merged.reduce((a, { c }) => a + c.proxies, 0),
      expectedDeliveries: n('expectedDeliveries'),
      receivedDeliveries: n('receivedDeliveries'),
      lostDeliveries: n('lostDeliveries'),
      unconfirmedDeliveries: n('unconfirmedDeliveries'),
      deliveryRatePct: n('deliveryRatePct'),
      ...(m.latencyHistogram ? summarize(m.latencyHistogram as EncodedLatency) : summarize({ histogram: '', minUs: 0, maxUs: 0, count: 0, negatives: 0 })),
      latencyHistogram: (m.latencyHistogram as EncodedLatency | undefined) ?? { histogram: '', minUs: 0, maxUs: 0, count: 0, negatives: 0 },
      ...(m.lossByCause ? { lossByCause: m.lossByCause as WeatherResult['conditions'][number]['lossByCause'] } : {}),
      ...(m.resumeOutcomes ? { resumeOutcomes: m.resumeOutcomes as Record<string, number> } : {}),
      ...(m.replayedDeliveries !== undefined ? { replayedDeliveries: n('replayedDeliveries') } : {}),
      disruptions: mergeDisruptions(merged.map(({ c }) => c.disruptions)),
      // Shards whose figures for this condition the screen refused (left out of it, named here).
      ...(merged.length < parts.length ? { excludedShards: parts.filter((p) => !merged.includes(p)).map(({ o }) => o.name) } : {}),
    });
  }
  return { spec: weatherOf(withWeather[0]!)!.spec, scale: weatherOf(withWeather[0]!)!.scale, conditions };
}

function summarizeShard(o: ShardOutcome, latency: EncodedLatency | undefined, plan: MergePlan): ShardSummary {
  const r = o.result;
  return {
    name: o.name,
    url: o.url,
    status: o.status,
    jobId: o.jobId ?? null,
    error: o.error ?? null,
    durationMs: o.durationMs,
    clients: r ? (num(r.clients) ?? null) : null,
    connected: r ? (connectedOf(r) ?? null) : null,
    receivedDeliveries: r ? (num(r.receivedDeliveries) ?? null) : null,
    lostDeliveries: r ? (num(r.lostDeliveries) ?? null) : null,
    deliveryRatePct: r ? (num(r.deliveryRatePct) ?? null) : null,
    latency: latency && latency.count ? summarize(latency).latencyRawMs : null,
    skewEstimateMs: null,
    clock: o.clock ?? null,
    valid: r?.validity ? r.validity.valid : null,
    flags: Array.isArray(r?.validity?.flags) ? r.validity.flags.map((f) => `${f.severity}:${f.code}`) : [],
    // The runners' own per-shard figures (idle's memory per connection, failure causes).
    ...Object.assign({}, ...plan.specs.map((s) => (r && s.perShard?.(r)) || {})),
  };
}

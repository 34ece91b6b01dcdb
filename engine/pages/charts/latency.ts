import * as hdr from 'hdr-histogram-js';
import type { EncodedLatency } from '../../measure/latency.ts';
import type { ChartSpec } from '../types.ts';
import { alignTables, colorFor, round } from './common.ts';

/** Percentiles sampled from each histogram: every 1% and the tail out to 99.999%. */
const PERCENTILES = [
  ...Array.from({ length: 100 }, (_, i) => i),
  99.2, 99.4, 99.6, 99.8, 99.9, 99.95, 99.99, 99.999, 100,
];
/** Log axes cannot show 0: values below this are drawn here (the chart note says so). */
const FLOOR_MS = 0.1;

export interface LatencyInput {
  label: string;
  latency: EncodedLatency;
}

/** One CDF table per target from its exact histogram: x latency (ms), y % of deliveries at or below. */
function cdf(enc: EncodedLatency, minNormalised: boolean): { x: number[]; y: number[] } {
  const h = hdr.decodeFromCompressedBase64(enc.histogram);
  const shift = minNormalised ? enc.minUs : 0;
  const byX = new Map<number, number>();
  for (const p of PERCENTILES) {
    // Bucket-rounded values clamp into the exact [min, max], as summarize() does.
    const us = p === 100 ? enc.maxUs : p === 0 ? enc.minUs : Math.min(enc.maxUs, Math.max(enc.minUs, h.getValueAtPercentile(p)));
    const ms = Math.max(FLOOR_MS, round((us - shift) / 1000));
    byX.set(ms, Math.max(byX.get(ms) ?? 0, p));
  }
  const x = [...byX.keys()].sort((a, b) => a - b);
  return { x, y: x.map((v) => byX.get(v)!) };
}

/**
 * Latency CDFs, raw and min-normalised, one line per target. Raw includes any clock offset
 * between publisher and subscriber; min-normalised subtracts the smallest latency seen, so a
 * constant offset cancels and only the spread (queueing, replay after reconnect) remains.
 */
export function latencyCdfCharts(inputs: readonly LatencyInput[], idPrefix = 'latency'): ChartSpec[] {
  const withData = inputs.map((inp, i) => ({ ...inp, color: colorFor(i) })).filter((inp) => inp.latency.count > 0);
  if (withData.length === 0) return [];
  return ([false, true] as const).map((norm) => {
    const t = alignTables(withData.map((inp) => cdf(inp.latency, norm)));
    return {
      id: `${idPrefix}-cdf-${norm ? 'min-normalised' : 'raw'}`,
      title: norm ? 'Latency CDF, min-normalised' : 'Latency CDF, raw',
      note: norm
        ? 'Latency minus the fastest delivery of the run: constant clock offsets cancel. A curve reaching 100% far to the right means late (replayed) messages.'
        : `Arrival minus publish time. Where a curve flattens below 100%, the rest of the deliveries came late: that is the tail. Values under ${FLOOR_MS} ms are drawn at ${FLOOR_MS} ms (log axis).`,
      xLabel: norm ? 'latency above the run minimum (ms, log)' : 'latency (ms, log)',
      yLabel: '% of deliveries at or below',
      xLog: true,
      yRange: [0, 100],
      x: t.x,
      series: withData.map((inp, i) => ({ label: inp.label, values: t.ys[i]!, color: inp.color, spanGaps: true, reduce: 'max' as const })),
    };
  });
}

import type { RunSeries } from '../../measure/timeseries.ts';
import type { ChartSpec, MarkerSpec } from '../types.ts';
import { colorFor, eventColor, slug } from './common.ts';

/** A chaos or restart event as runners record it (ChaosEvent satisfies this). Times in ms since publishing began. */
export interface TimelineEvent {
  kind: string;
  scope: string;
  target: number;
  atMs: number;
  durationMs?: number;
  endedAtMs?: number;
  applied: boolean;
}

export interface TimelineInput {
  label: string;
  clients: number;
  series: RunSeries;
  events: readonly TimelineEvent[];
}

/** Spans beyond this are summarised in the note instead of drawn (a page must stay readable). */
const MAX_MARKERS = 300;

/** Each bucket is drawn at its end: a dip never shows before the event that caused it. */
const xAxis = (s: RunSeries) => s.connected.map((_, k) => (s.startMs + (k + 1) * s.bucketMs) / 1000);

/**
 * Group-wide events (network chaos on a proxy group, a restart) as labelled spans; per-client
 * drops are too many to draw one by one, so they become a per-second count series instead.
 */
export function eventMarkers(events: readonly TimelineEvent[], publishedUntilSec?: number): { markers: MarkerSpec[]; omitted: number } {
  const wide = events.filter((e) => e.applied && e.scope !== 'client');
  const markers: MarkerSpec[] = wide.slice(0, MAX_MARKERS).map((e) => {
    const end = e.endedAtMs ?? (e.durationMs ? e.atMs + e.durationMs : undefined);
    return { x: e.atMs / 1000, ...(end !== undefined ? { x2: end / 1000 } : {}), label: `${e.kind}${e.scope === 'group' ? ` g${e.target}` : ''}`, color: eventColor(e.kind) };
  });
  markers.unshift({ x: 0, label: 'publishing starts', color: '#2e7d32' });
  if (publishedUntilSec !== undefined) markers.push({ x: publishedUntilSec, label: 'last message', color: '#2e7d32' });
  return { markers, omitted: Math.max(0, wide.length - MAX_MARKERS) };
}

/** Applied client-scope events per series bucket. */
function clientEventsPerBucket(s: RunSeries, events: readonly TimelineEvent[]): number[] {
  const out = new Array<number>(s.connected.length).fill(0);
  for (const e of events) {
    if (!e.applied || e.scope !== 'client') continue;
    const k = Math.floor((e.atMs - s.startMs) / s.bucketMs);
    if (k >= 0 && k < out.length) out[k]!++;
  }
  return out;
}

function lastPublishSec(s: RunSeries): number | undefined {
  for (let k = s.published.length - 1; k >= 0; k--) if (s.published[k]! > 0) return (s.startMs + (k + 1) * s.bucketMs) / 1000;
  return undefined;
}

/** Connected clients over time for one target, with every disruption marked. */
export function connectedChart(inp: TimelineInput): ChartSpec {
  const s = inp.series;
  const { markers, omitted } = eventMarkers(inp.events, lastPublishSec(s));
  const drops = clientEventsPerBucket(s, inp.events);
  const hasDrops = drops.some((d) => d > 0);
  return {
    id: `connected-${slug(inp.label)}`,
    title: `Connected clients over time: ${inp.label}`,
    note: `Each point covers the second ending there. Dips are clients offline; the lower line is the fewest connected within the second.${hasDrops ? ' Grey bars count client drops per second (right axis).' : ''} Shaded spans are network disruptions.${omitted ? ` ${omitted} further events not drawn.` : ''}`,
    xLabel: 'seconds since publishing began',
    yLabel: 'clients connected',
    ...(hasDrops ? { y2Label: 'client drops per second' } : {}),
    yRange: [0, inp.clients],
    x: xAxis(s),
    series: [
      { label: 'connected (end of second)', values: s.connected, color: colorFor(0), reduce: 'min' },
      { label: 'fewest connected in the second', values: s.connectedMin, color: '#D55E00', width: 1, dash: [4, 3], reduce: 'min' },
      ...(hasDrops ? [{ label: 'client drops', values: drops, color: '#9e9e9e', bars: true, axis: 'y2' as const, reduce: 'max' as const }] : []),
    ],
    markers,
  };
}

/** Arrivals per second and, by publish time, the share of each second's messages that were delivered at all. */
export function deliveriesChart(inp: TimelineInput): ChartSpec {
  const s = inp.series;
  const { markers } = eventMarkers(inp.events, lastPublishSec(s));
  return {
    id: `deliveries-${slug(inp.label)}`,
    title: `Deliveries over time: ${inp.label}`,
    note: 'Each point covers the second ending there. Bars: first deliveries arriving each second (a burst after a dip is a replay). Line: of the messages published in that second, the % delivered by the end of the run (below 100 = lost).',
    xLabel: 'seconds since publishing began',
    yLabel: 'deliveries arriving per second',
    y2Label: '% of that second\'s messages delivered',
    x: xAxis(s),
    series: [
      { label: 'arrivals per second', values: s.arrivals, color: colorFor(4), bars: true, reduce: 'max' },
      { label: 'delivered % (by publish time)', values: s.deliveredPctByPublish, color: '#c62828', axis: 'y2', spanGaps: true, reduce: 'min' },
    ],
    markers,
  };
}

/** Every target's connected share or delivered share over time on one chart: the side-by-side view. */
export function comparisonCharts(inputs: readonly TimelineInput[]): ChartSpec[] {
  const withSeries = inputs.map((inp, i) => ({ ...inp, color: colorFor(i) }));
  if (withSeries.length === 0) return [];
  // Every target ran the same seeded schedule: the first target's events mark the shared timeline.
  const { markers } = eventMarkers(withSeries[0]!.events);
  const axis = (f: (s: RunSeries, k: number) => number | null) => {
    // Whole seconds since publishing began: each target's buckets start a few ms apart, so snap them to one grid.
    const all = withSeries.flatMap((w) => xAxis(w.series));
    const lo = Math.round(Math.min(...all));
    const xs = Array.from({ length: Math.round(Math.max(...all)) - lo + 1 }, (_, i) => lo + i);
    const ys = withSeries.map((w) => {
      const s = w.series;
      return xs.map((x) => {
        const k = Math.round((x * 1000 - s.startMs) / s.bucketMs) - 1;
        return k >= 0 && k < s.connected.length ? f(s, k) : null;
      });
    });
    return { xs, ys };
  };
  const delivered = axis((s, k) => s.deliveredPctByPublish[k] ?? null);
  const connected = axis((s, k) => s.connectedMin[k]!);
  return [
    {
      id: 'compare-delivered',
      title: 'Delivered % by publish time, every target',
      note: 'A target whose line stays at the top lost nothing; every dip is messages that never arrived (published while clients were away and not replayed).',
      xLabel: 'seconds since publishing began',
      yLabel: '% of messages delivered',
      yRange: [0, 100],
      x: delivered.xs,
      series: withSeries.map((w, i) => ({ label: w.label, values: delivered.ys[i]!, color: w.color, width: 2, spanGaps: true, reduce: 'min' as const })),
      markers,
    },
    {
      id: 'compare-connected',
      title: 'Connected clients %, every target',
      note: 'Fewest clients connected within the second ending at each point. Deeper or wider dips mean clients came back later.',
      xLabel: 'seconds since publishing began',
      yLabel: '% of clients connected',
      yRange: [0, 100],
      x: connected.xs,
      series: withSeries.map((w, i) => ({ label: w.label, values: connected.ys[i]!.map((v) => (v === null ? null : Math.round((v / Math.max(1, w.clients)) * 10000) / 100)), color: w.color, width: 2, spanGaps: true, reduce: 'min' as const })),
      markers,
    },
  ];
}

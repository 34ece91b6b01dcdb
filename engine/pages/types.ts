/**
 * The report's data model. A runner turns its result into a ReportModel (title, validity,
 * verdicts, summary rows, sections of charts); one page template renders any model. Charts are
 * plain data (ChartSpec), drawn in the page by uPlot, so every chart function is testable
 * without a browser and the page carries only what it draws.
 */

/** How a series is reduced when several points fall into one drawn pixel column (drawing only). */
export type Reduce = 'min' | 'max' | 'mean';

interface SeriesSpec {
  label: string;
  /** One value per x; null draws a gap (or is spanned when the series sets spanGaps). */
  values: (number | null)[];
  color: string;
  width?: number;
  dash?: number[];
  /** Draw as bars (counts per bucket) instead of a line. */
  bars?: boolean;
  /** Plot against the right-hand axis (ChartSpec.y2Label). */
  axis?: 'y' | 'y2';
  /** Show a dot per point (sparse series such as capacity steps). */
  points?: boolean;
  spanGaps?: boolean;
  /** Which extreme survives downsampling: dips matter for delivery and connections, peaks for latency. */
  reduce?: Reduce;
}

/** A vertical event line (x) or shaded span (x..x2) with a label: a chaos step, a restart, a budget step. */
export interface MarkerSpec {
  x: number;
  x2?: number;
  label: string;
  color: string;
}

/** A horizontal reference line: a budget, a baseline. */
interface HLineSpec {
  y: number;
  label: string;
  color: string;
  axis?: 'y' | 'y2';
}

export interface ChartSpec {
  id: string;
  title: string;
  /** One sentence: what to look for in this chart. */
  note: string;
  xLabel: string;
  yLabel: string;
  y2Label?: string;
  /** Logarithmic x (latency spans four decades). Values must be > 0. */
  xLog?: boolean;
  /** x values are counts (run numbers, steps): ticks only on whole numbers. */
  xIntegers?: boolean;
  yRange?: [number, number];
  /** Increasing x values shared by every series. */
  x: number[];
  series: SeriesSpec[];
  markers?: MarkerSpec[];
  hlines?: HLineSpec[];
}

/** A table of figures inside a section (the page's summary table is ReportModel.summary). */
export interface TableSpec {
  id: string;
  caption: string;
  /** First row is the header; first column names the row. */
  rows: string[][];
}

/** One segment of a stacked bar: a named quantity in its legend colour. */
interface StackSegment {
  key: string;
  label: string;
  value: number;
  color: string;
}

/**
 * Horizontal stacked bars, one per target, segments summing to the bar's total: lost deliveries
 * stacked by cause. Drawn as inline SVG by the page (no script), with a legend, a <title> and a
 * <desc> that reads every number, so it is readable without colour or sight.
 */
export interface StackSpec {
  id: string;
  title: string;
  note: string;
  /** What the bar length counts ("lost deliveries"). */
  unit: string;
  bars: { label: string; total: number; segments: StackSegment[] }[];
  legend: { key: string; label: string; color: string }[];
}

export interface Section {
  title: string;
  /** Short text under the heading. */
  intro?: string;
  charts: ChartSpec[];
  /** Stacked bars, drawn before the charts. */
  stacks?: StackSpec[];
  /** Tables of figures, after the charts. */
  tables?: TableSpec[];
  /** Charts that were not drawn and why (no disruptions, no series in an older result...). */
  omitted?: string[];
}

type VerdictLevel = 'good' | 'late' | 'lost';

/** One tile per target: a colour and a few words, readable without any number. */
export interface Verdict {
  target: string;
  level: VerdictLevel;
  words: string;
  /** Supporting figures, shown smaller. */
  detail: string;
}

export interface BannerFlag {
  target: string;
  severity: 'fatal' | 'warning';
  code: string;
  /** Plain-words meaning of the flag. */
  plain: string;
  /** The runner's own message with the figures. */
  message: string;
}

export interface ReportModel {
  title: string;
  subtitle: string;
  /** Shell command that reproduces the run (secrets redacted). */
  command: string;
  seed: number | null;
  generatedAt: string;
  /** Validity flags of the runs; null where validity does not apply (a trend over runs). */
  flags: BannerFlag[] | null;
  verdicts: Verdict[];
  /** First row is the header. */
  summary: string[][];
  sections: Section[];
}

export interface ReportMeta {
  /** The command that reproduces the run; writeReport's callers build it with `commandLine`. */
  command: string;
}

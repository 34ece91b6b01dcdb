import { fmtInt } from './charts/common.ts';
import type { Verdict } from './types.ts';

export interface VerdictInput {
  target: string;
  lostDeliveries: number;
  expectedDeliveries: number;
  /** Clients that lost their connection and were never subscribed again. */
  unrecovered: number;
  /** Worst p95 recovery time over the run's disruption kinds, ms; null without disruptions. */
  recoveryP95Ms: number | null;
  /** Of lostDeliveries, those of clients still offline when the run ended ("not back by the end", CLIENTS_OFFLINE_AT_END). */
  notBackByEnd?: number;
}

/** "Late" is relative: this much slower than the fastest target of the same run, and at least this many ms slower. */
const LATE_FACTOR = 2;
const LATE_MIN_EXTRA_MS = 1000;

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * One verdict per target, the comparison report's answer at a glance: red for lost messages or
 * clients that never came back, amber for complete delivery but recovery much slower than the
 * best target in the same run, green otherwise. A report of one target has nothing to be late against.
 */
export function verdicts(rows: readonly VerdictInput[]): Verdict[] {
  const p95s = rows.map((r) => r.recoveryP95Ms).filter((v): v is number => v !== null && v > 0);
  const best = p95s.length ? Math.min(...p95s) : null;
  return rows.map((r) => {
    const rec = r.recoveryP95Ms === null ? 'no disruptions' : `recovery p95 ${secs(r.recoveryP95Ms)}`;
    const offline = r.notBackByEnd ? ` (${fmtInt(r.notBackByEnd)} of them not back by the end: clients still offline when the run ended)` : '';
    const detail = `${fmtInt(r.lostDeliveries)} of ${fmtInt(r.expectedDeliveries)} deliveries lost${offline}; ${rec}${r.unrecovered ? `; ${r.unrecovered} clients never back` : ''}`;
    if (r.lostDeliveries > 0 || r.unrecovered > 0) {
      const words = [r.lostDeliveries > 0 ? 'lost messages' : '', r.unrecovered > 0 ? 'clients never came back' : ''].filter(Boolean).join(', ');
      return { target: r.target, level: 'lost', words: words.charAt(0).toUpperCase() + words.slice(1), detail };
    }
    const late = best !== null && r.recoveryP95Ms !== null && r.recoveryP95Ms > LATE_FACTOR * best && r.recoveryP95Ms - best >= LATE_MIN_EXTRA_MS;
    return late ? { target: r.target, level: 'late', words: 'Nothing lost, but came back late', detail } : { target: r.target, level: 'good', words: rows.length > 1 ? 'Nothing lost, came back promptly' : 'Nothing lost', detail };
  });
}

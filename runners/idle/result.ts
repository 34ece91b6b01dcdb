import type { runIdle } from './run.ts';

/**
 * The idle runner's result: the benchmark's IdleResult fields plus Rebound's runner and target
 * figures, as runIdle builds them.
 */
export type IdleResult = Omit<Awaited<ReturnType<typeof runIdle>>, 'clientSeries'> & {
  /** Runner-side client counts each second: [ms since the ramp began, connected, subscribed, failed, open], at most ~300 rows (absent in older results). */
  clientSeries?: number[][];
};

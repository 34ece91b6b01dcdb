import type { runThroughput } from './run.ts';

/** The benchmark's ThroughputResult (JitterResult fields + rates) with Rebound's ledger counts and histogram, as runThroughput builds it. */
export type ThroughputResult = Awaited<ReturnType<typeof runThroughput>>;

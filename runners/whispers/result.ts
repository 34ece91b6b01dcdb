import type { runWhispers } from './run.ts';

/**
 * The benchmark's WhispersResult fields plus Rebound's ledger counts, histogram and validity, as
 * runWhispers builds them; the fields it shares with the publish-and-listen results carry their
 * names (RunFields: a whisper is a delivery).
 */
export type WhispersResult = Awaited<ReturnType<typeof runWhispers>>;

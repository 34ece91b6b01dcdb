import type { OptionTable } from '../../../lib/options.ts';
import { JITTER_OPTIONS } from '../../../runners/jitter/options.ts';
import { jitterModule } from '../../../runners/jitter/module.ts';
import { shownOptions } from './adapter.ts';
import { benchmarkFields } from './bench-fields.ts';
import { CLIENT_COMPAT_OPTIONS, COMPAT_OPTIONS, compatAdapter } from './compat.ts';
import { queryOptions } from './route-target.ts';

// The URL options and the target are the route's business, never the query's.
const { toxiproxyUrl: _x, reconnectStrategy, ...JITTER_QUERY } = queryOptions(JITTER_OPTIONS);
const PER_PROCESS = JITTER_OPTIONS.clients.max;

/** The jitter CLI's table as the HTTP surface sees it, plus the benchmark's names. */
const JITTER_HTTP_OPTIONS = {
  ...JITTER_QUERY,
  // One process holds at most JITTER_OPTIONS.clients.max clients; workers multiply that.
  clients: { ...JITTER_QUERY.clients, max: PER_PROCESS * 64, doc: `concurrent clients (at most ${PER_PROCESS} per worker process: raise workers beyond)` },
  reconnectStrategy: { ...reconnectStrategy, aliases: ['reconnectMode'] },
  samplesCap: COMPAT_OPTIONS.samplesCap,
  label: COMPAT_OPTIONS.label,
  ...CLIENT_COMPAT_OPTIONS,
  shard: COMPAT_OPTIONS.shard,
  workers: { type: 'int', default: 1, min: 1, max: 64, doc: 'runner worker processes: clients are split over them, each on its own stream <stream>-w<i> with its own publisher (the benchmark\'s multi-shard layout), results merged exactly' },
} as const satisfies OptionTable;

export const jitterAdapter = compatAdapter(jitterModule, JITTER_HTTP_OPTIONS, { echo: ['samplesCap', 'label', 'shard', 'workers'], shown: (o: { jitter: object }) => shownOptions(o.jitter), finish: benchmarkFields });

import type { OptionTable } from '../../lib/options.ts';

/** The runner service's own options (CLI flags or env). */
export const RUNNER_SERVICE_OPTIONS = {
  port: { type: 'int', default: 3001, min: 0, max: 65535, env: ['PORT'], doc: "port to listen on (the benchmark's default 3001; 0 = any free port, reported on stdout)" },
  host: { type: 'string', default: '127.0.0.1', env: ['HOST'], doc: 'address to bind; anything but loopback requires BENCH_RUNNER_TOKEN' },
  token: { type: 'string', default: '', env: ['BENCH_RUNNER_TOKEN'], doc: 'bearer token for every route but GET /health and GET /time (empty = open, loopback only)' },
  resultsDir: { type: 'string', default: 'results', env: ['RESULTS_DIR'], doc: 'where jobs and results are stored (survives restarts)' },
  stopGraceMs: { type: 'int', default: 20_000, min: 1000, max: 600_000, env: ['RUNNER_STOP_GRACE_MS'], doc: 'on SIGTERM, how long running jobs get to close their clients and record a partial result' },
} as const satisfies OptionTable;

import { fileURLToPath } from 'node:url';
import type { OptionTable, OptionValues } from '../../lib/options.ts';

export const DEFAULT_MANIFEST = fileURLToPath(new URL('./tests.json', import.meta.url));

/** `npm run bench:rebaseline` and `bench:rebaseline:history`: the benchmark's env names, plus flags. */
export const REBASELINE_OPTIONS = {
  manifest: { type: 'string', default: DEFAULT_MANIFEST, env: ['REBASELINE_MANIFEST'], doc: 'tests manifest (JSON, same schema)' },
  filter: { type: 'string', default: '', env: ['FILTER'], doc: 'comma-separated id substrings, categories or runners' },
  dryRun: { type: 'bool', default: false, env: ['DRY_RUN'], doc: 'print the plan and exit 0' },
  includeIdle: { type: 'bool', default: false, env: ['INCLUDE_IDLE'], doc: 'also run idle tests (skipped unless FILTER names them)' },
  includeAvalanche: { type: 'bool', default: false, env: ['INCLUDE_AVALANCHE'], doc: 'also run avalanche tests' },
  repeat: { type: 'int', default: 1, min: 1, max: 50, env: ['REPEAT'], doc: 'runs per test; with K > 1 each metric is judged on a bootstrap interval' },
  update: { type: 'bool', default: false, doc: 'write the measured values (medians) as the new baselines, with their run ids' },
  runnerUrl: { type: 'optional-string', default: undefined, env: ['BENCH_RUNNER_URL'], doc: 'run every test on this runner service instead of locally' },
  shards: { type: 'string', default: '', env: ['SHARDS'], doc: 'run every test through the coordinator on these shards' },
  token: { type: 'string', default: '', env: ['BENCH_RUNNER_TOKEN'], doc: 'bearer token of the runner(s)' },
  outputDir: { type: 'string', default: 'results', env: ['OUTPUT_DIR', 'RESULTS_DIR'], doc: 'where <id>.json and runs/<time>/ go' },
  pollMs: { type: 'int', default: 5000, min: 50, max: 60_000, env: ['POLL_MS'], doc: 'ms between job polls (remote)' },
  timeoutSec: { type: 'int', default: 1800, min: 1, max: 86_400, env: ['SHARD_TIMEOUT_SEC'], doc: 'per-test deadline when remote, s' },
  last: { type: 'int', default: 5, min: 1, max: 1000, env: ['LAST'], doc: 'history: runs shown' },
  html: { type: 'bool', default: false, doc: 'history: also write <outputDir>/history.html, one trend chart per metric' },
} as const satisfies OptionTable;

export type RebaselineOptions = OptionValues<typeof REBASELINE_OPTIONS>;

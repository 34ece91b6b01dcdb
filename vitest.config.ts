import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{lib,services,runners,chaos,shards}/**/*.test.ts'],
    // `*.quiet.test.ts` measure something machine-wide (the kernel's socket count and memory), which
    // the other files' sockets disturb when they run in parallel: `.ci/run` runs them alone after
    // `npm test`, with REBOUND_QUIET_TESTS=1.
    exclude: process.env.REBOUND_QUIET_TESTS === '1' ? configDefaults.exclude : [...configDefaults.exclude, '**/*.quiet.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real servers and sockets: keep files in separate forks so one suite's sockets never count against another's fd budget.
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});

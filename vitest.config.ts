import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{lib,services,runners,chaos,shards}/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real servers and sockets: keep files in separate forks so one suite's sockets never count against another's fd budget.
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});

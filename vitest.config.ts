import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { uwsAvailability } from './services/uws/load.ts';

// `*.quiet.test.ts` measure something machine-wide (the kernel's socket count and memory), which
// the other files' sockets disturb when they run in parallel: `.ci/run` runs them alone after
// `npm test`, with REBOUND_QUIET_TESTS=1.
const exclude = process.env.REBOUND_QUIET_TESTS === '1' ? configDefaults.exclude : [...configDefaults.exclude, '**/*.quiet.test.ts'];

/**
 * The replay server's suites run once per transport: the whole tree with REPLAY_TRANSPORT=ws (the
 * fixture and spawned servers read it), and the replay server's socket-facing suites again with
 * REPLAY_TRANSPORT=uws where uWebSockets.js loads here. Its pure units (broker, hub, ping
 * scheduler) do not touch a socket and run once.
 */
const replayUws: TestProjectInlineConfiguration = {
  extends: true,
  test: {
    name: 'replay-uws',
    // The fuzz suite runs a replay server on each transport itself (services/fuzz/fuzz.test.ts).
    include: ['services/replay-server/**/*.test.ts'],
    exclude: [...exclude, 'services/replay-server/broker/**', 'services/replay-server/hub/**', 'services/replay-server/connection/ping.test.ts', 'services/replay-server/transport/**'],
    env: { REPLAY_TRANSPORT: 'uws' },
  },
};

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real servers and sockets: keep files in separate forks so one suite's sockets never count against another's fd budget.
    pool: 'forks',
    fileParallelism: true,
    // Three files at once on this 2-core box: the suite mostly waits on real time (a full run at
    // two left the CPU 40 % idle), and three finished it in 1,224 s against 1,558-1,583 s at two.
    // Tests that judge latency or a clean validity on a shared box allow for the neighbours' load
    // (the soak's p99 slack, RUNNER_LOOP_LAG filtered): a loaded box blames the rig, never the target.
    maxWorkers: 3,
    projects: [
      { extends: true, test: { name: 'default', include: ['{lib,services,engine,runners,chaos,shards,cli,examples}/**/*.test.ts'], exclude, env: { REPLAY_TRANSPORT: 'ws' } } },
      ...(uwsAvailability().available ? [replayUws] : []),
    ],
  },
});

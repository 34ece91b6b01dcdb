import { setFlagsFromString } from 'node:v8';
import { exitWithError, serviceMain } from '../common/service-main.ts';
import { openBroker } from './broker/open.ts';
import { isReplayWorker, runPrimary, runWorker } from './cluster/index.ts';
import { createReplayServer } from './index.ts';
import { checkReplayOptions, REPLAY_SERVER_OPTIONS } from './options.ts';
import { resolveTransport } from './transport/index.ts';

/**
 * `npm run serve:replay -- [--workers N] [--history-limit 100] ...` (see --help).
 * One process by default; with --workers N the primary owns history/sessions and N workers
 * share the port.
 */
/**
 * V8 grows the young generation (up to 3 × 16 MiB semi-spaces) when many objects survive
 * scavenges, which is exactly what a burst of long-lived connections looks like; the space is
 * never handed back. Growth factor 1 keeps it at its initial size. The flag is read at each grow
 * decision, so setting it at startup works (unlike --max-semi-space-size).
 */
export function compactHeap(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}

if (isReplayWorker()) {
  await runWorker(compactHeap).catch((err: unknown) => exitWithError('replay', err));
} else {
  await serviceMain(
    'replay',
    REPLAY_SERVER_OPTIONS,
    async (parsed) => {
      // The transport is chosen once, in the primary: workers are given the concrete one.
      const opts = checkReplayOptions({ ...parsed, transport: resolveTransport(parsed.transport) }, 'CLI');
      if (opts.workers > 1) return runPrimary(opts);
      // A rolling reload needs workers; a stray SIGUSR2 must not kill a single process.
      process.on('SIGUSR2', () => process.stderr.write('replay: SIGUSR2 ignored: a rolling reload needs --workers 2 or more\n'));
      if (opts.compactHeap) compactHeap();
      // --broker redis: connect first, so an unreachable Redis is one clear coded line and exit 1.
      const broker = await openBroker(opts);
      const srv = createReplayServer(opts, broker ? { broker } : {});
      const port = await srv.listen();
      return { port, stop: () => srv.stop({ processExit: true }) };
    },
    // `--transport uws` where uWS does not load is an option error (exit 2); auto's notice comes here once.
    { check: (parsed) => void resolveTransport(parsed.transport) },
  );
}

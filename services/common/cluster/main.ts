import type { OptionTable, OptionValues } from '../../../lib/options.ts';
import { exitWithError, serviceMain, type RunningService, type ServiceMainOptions } from '../service-main.ts';
import { PrimaryLink, runHubPrimary } from './hub.ts';
import { isWorkerOf, serveAsWorker, workerOptions, type WorkerLifecycle } from './worker.ts';

/** The `--workers` option of a service that can run as a cluster; `env` names its variable. */
export function workersOption(env: string, doc = 'processes behind one port (node:cluster, round-robin accept); 0 or 1 = one process') {
  return { type: 'int', default: 0, min: 0, max: 64, env: [env], doc } as const;
}

/** A server that can also run as one worker of a cluster: its counters for the primary's sums. */
export interface ClusterableService extends RunningService {
  report: WorkerLifecycle['report'];
}

type ClusterTable = OptionTable & { workers: { type: 'int' }; stopGraceMs: { type: 'int' } };

/**
 * Entry point of a reference server (ws, Socket.IO) that runs as one process or, with
 * `--workers N` (N >= 2), as a primary and N workers sharing the port: the primary keeps the
 * workers (common pool) and serves the hub (relay, barrier, summed /metrics); each worker is the
 * ordinary server given a `PrimaryLink`.
 */
export async function clusterableMain<T extends ClusterTable>(
  name: string,
  envKey: string,
  table: T,
  start: (opts: OptionValues<T>, link: PrimaryLink | undefined) => Promise<ClusterableService>,
  { setupPrimary, primaryOptions, ...main }: ServiceMainOptions<T> & { setupPrimary?(): void; primaryOptions?(opts: OptionValues<T>): Promise<OptionValues<T>> } = {},
): Promise<void> {
  if (isWorkerOf(envKey)) {
    const opts = workerOptions<OptionValues<T>>(envKey);
    const svc = await start(opts, new PrimaryLink()).catch((err: unknown) => exitWithError(name, err));
    serveAsWorker({ port: svc.port, stopGraceMs: Number(opts.stopGraceMs), stop: () => svc.stop(), report: () => svc.report() });
    return;
  }
  await serviceMain(
    name,
    table,
    async (opts) => {
      const workers = Number(opts.workers);
      if (workers <= 1) return start(opts, undefined);
      setupPrimary?.();
      // What the workers are given (e.g. uWS: port 0 made one concrete port they all bind).
      const options = primaryOptions ? await primaryOptions(opts) : opts;
      return runHubPrimary({ label: name, size: workers, envKey, options, stopGraceMs: Number(opts.stopGraceMs) });
    },
    main,
  );
}

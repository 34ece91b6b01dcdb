import { clusterableMain, workersOption } from '../common/cluster/main.ts';
import { REFERENCE_LIMIT_OPTIONS } from '../common/limits.ts';
import { COMMON_SERVICE_OPTIONS } from '../common/service-main.ts';
import { loadUws } from './load.ts';
import { createUwsServer, portForWorkers } from './server.ts';

const OPTIONS = {
  ...COMMON_SERVICE_OPTIONS,
  ...REFERENCE_LIMIT_OPTIONS,
  workers: workersOption('UWS_WORKERS', 'processes sharing the port through SO_REUSEPORT (the kernel spreads connections over them); 0 or 1 = one process'),
};

// Where the binary does not load, say so and why, before any option or port is touched.
const loaded = loadUws();
if (!loaded.ok && !process.argv.includes('--help')) {
  process.stderr.write(`uws: RR_ERR_TARGET_UNAVAILABLE: ${loaded.reason}\n`);
  process.exit(2);
}

/**
 * With `--workers N` every worker binds the same port itself (uWS does not use node's handles,
 * so node:cluster cannot share one): portForWorkers resolves the one port all N bind. The
 * primary's hub still relays broadcasts and whispers to every worker in order.
 */
await clusterableMain('uws', 'UWS_WORKER_OPTIONS', OPTIONS, (opts, link) => createUwsServer({ ...opts, sharePort: link !== undefined }, link), {
  primaryOptions: async (opts) => ({ ...opts, port: await portForWorkers(opts.host, opts.port) }),
});

import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { ReboundError } from '../../lib/errors.ts';
import { safeText } from '../../lib/escape.ts';
import { argvToValues, helpText, parseOptions } from '../../lib/options.ts';
import { listen, onRailway, type ListeningMessage } from '../../services/common/service-main.ts';
import { registerEnvTargetModules } from '../../engine/targets/user-module.ts';
import { createRunnerApp } from './app.ts';
import { acquireResultsLock } from './lock.ts';
import { checkBindToken, jobStoreLimits, RUNNER_SERVICE_OPTIONS } from './options.ts';

/**
 * `npm run serve:runner`: the bench-runner shard. Prints one JSON line with the bound port; on
 * SIGTERM it aborts running jobs (clients closed, partial result stored as `aborted`) and exits 0.
 */
const argv = process.argv.slice(2);
if (argv.includes('--help')) {
  process.stdout.write(`usage: npm run serve:runner -- [options]\n${helpText(RUNNER_SERVICE_OPTIONS)}\n`);
  process.exit(0);
}
const fail = (err: unknown): never => {
  const e = err as ReboundError;
  process.stderr.write(`runner: ${e.code ?? 'error'}: ${safeText(String(e.message))}\n`);
  process.exit(2);
};
/** A startup step that may refuse: its error ends the process (exit 2) before anything listens. */
const orFail = <T>(step: () => T): T => {
  try {
    return step();
  } catch (err) {
    return fail(err);
  }
};
let opts = orFail(() => parseOptions(RUNNER_SERVICE_OPTIONS, { values: argvToValues(argv, RUNNER_SERVICE_OPTIONS), env: process.env, origin: 'CLI' }));
// HOST unset on Railway binds `::` as the servers under test do: its private network may resolve
// `<service>.railway.internal` to IPv6, which an IPv4-only bind never answers.
if (process.env.HOST === undefined && !argv.some((a) => a === '--host' || a.startsWith('--host=')) && onRailway(process.env)) {
  opts = Object.freeze({ ...opts, host: '::' });
}
orFail(() => checkBindToken(opts.host, opts.token));
// Before the store loads: a second runner must not mark the first one's running job as failed.
const releaseLock = orFail(() => acquireResultsLock(resolve(opts.resultsDir)));
process.on('exit', releaseLock);
// The operator's own target files (TARGET_MODULES, docs/targets.md): loaded and checked before anything
// listens, so a bad file is a startup error; requests name their targets, never a file.
await registerEnvTargetModules().catch(fail);
const { app, store } = createRunnerApp({ token: opts.token, resultsDir: resolve(opts.resultsDir), limits: jobStoreLimits(opts) });
const server = createServer(app);
// Sync runs hold their request for the whole run: no request or idle timeout may cut them.
server.requestTimeout = 0;
server.timeout = 0;
server.keepAliveTimeout = 65_000;

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`runner: ${signal}, aborting running jobs\n`);
  setTimeout(() => process.exit(1), opts.stopGraceMs).unref();
  try {
    await store.abortAll();
    server.closeAllConnections();
    server.close();
  } finally {
    process.exit(0);
  }
};
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

const port = await listen(server, opts.port, opts.host).catch(fail);
const msg: ListeningMessage = { type: 'listening', service: 'runner', port, host: opts.host, pid: process.pid };
process.stdout.write(JSON.stringify(msg) + '\n');
process.send?.(msg);
process.on('disconnect', () => void shutdown('parent gone'));

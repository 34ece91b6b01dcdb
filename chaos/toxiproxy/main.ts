/**
 * Standalone embedded Toxiproxy: `npm run chaos:proxy -- --port 8474 --host 127.0.0.1`.
 * Prints `listening on <url> pid <pid>` once the API is up; SIGTERM/SIGINT stop it cleanly.
 */
import { readFile } from 'node:fs/promises';
import { toErrorBody } from '../../lib/errors.ts';
import type { ListeningMessage } from '../../services/common/service-main.ts';
import { argvToValues, helpText, parseOptions, type OptionTable } from '../../lib/options.ts';
import { createToxiproxyServer, DEFAULT_TOXIPROXY_SERVER_OPTIONS, TOXIPROXY_VERSION, type ProxyInput, type ToxiproxyServer } from './index.ts';

export const CHAOS_PROXY_CLI_OPTIONS = {
  port: { type: 'int', min: 0, max: 65535, default: DEFAULT_TOXIPROXY_SERVER_OPTIONS.port, env: ['TOXIPROXY_PORT', 'PORT'], doc: 'API port (0 = any free port)' },
  host: { type: 'string', default: DEFAULT_TOXIPROXY_SERVER_OPTIONS.host, env: ['TOXIPROXY_HOST', 'HOST'], doc: 'API host (0.0.0.0 to accept remote clients needs --allow-public)' },
  allowPublic: { type: 'bool', default: DEFAULT_TOXIPROXY_SERVER_OPTIONS.allowPublic, env: ['REBOUND_ALLOW_PUBLIC'], doc: 'allow a non-loopback API host, proxy listens and upstreams (default: loopback only; wildcard listens bind 127.0.0.1)' },
  config: { type: 'optional-string', default: undefined, doc: 'JSON file with an array of proxies to create at start (like toxiproxy-server -config)' },
  seed: { type: 'optional-string', default: undefined, pattern: /^\d+$/, doc: 'seed for toxicity rolls, jitter and slicer sizes' },
  help: { type: 'bool', default: false, doc: 'print this help' },
} satisfies OptionTable;

async function main(): Promise<void> {
  const opts = parseOptions(CHAOS_PROXY_CLI_OPTIONS, { values: argvToValues(process.argv.slice(2), CHAOS_PROXY_CLI_OPTIONS), env: process.env, origin: 'CLI' });
  if (opts.help) {
    process.stdout.write(`Embedded Toxiproxy-compatible chaos proxy (API ${TOXIPROXY_VERSION})\n\n${helpText(CHAOS_PROXY_CLI_OPTIONS)}\n`);
    return;
  }
  // Handlers go in before the listening line: a parent may signal us the moment it reads it, and
  // a signal that finds no handler kills the process with a signal status instead of exit 0.
  // `on`, not `once`: a second signal (npm forwards one, a user may send another) must not either.
  let server: ToxiproxyServer | undefined;
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(1), 5000).unref();
    void (server?.close() ?? Promise.resolve()).then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  const populate = opts.config ? (JSON.parse(await readFile(opts.config, 'utf8')) as ProxyInput[]) : undefined;
  server = await createToxiproxyServer({
    port: opts.port,
    host: opts.host,
    allowPublic: opts.allowPublic,
    ...(opts.seed === undefined ? {} : { seed: Number(opts.seed) }),
    ...(populate ? { populate } : {}),
  });
  if (stopping) return void (await server.close());
  // The pid lets an operator signal the server itself whatever launched it (npm, a shell).
  process.stdout.write(`listening on ${server.url} pid ${process.pid}\n`);
  // A parent that forked us (services/common/spawn.ts forkListening) hears the port as from every service.
  const msg: ListeningMessage = { type: 'listening', service: 'chaos-proxy', port: server.port, host: opts.host, pid: process.pid };
  process.send?.(msg);
}

// As every CLI (docs/errors.md): `error <code>: <message>`, exit 2 for bad input, 1 for a failure.
main().catch((err: unknown) => {
  const body = toErrorBody(err);
  process.stderr.write(`error ${body.code}: ${body.message}\n`);
  process.exit(body.statusCode < 500 ? 2 : 1);
});

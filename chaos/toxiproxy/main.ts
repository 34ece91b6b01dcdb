/**
 * Standalone embedded Toxiproxy: `npm run chaos:proxy -- --port 8474 --host 127.0.0.1`.
 * Prints `listening on <url> pid <pid>` once the API is up; SIGTERM/SIGINT stop it cleanly.
 */
import { readFile } from 'node:fs/promises';
import { argvToValues, helpText, parseOptions, type OptionTable } from '../../lib/options.ts';
import { createToxiproxyServer, DEFAULT_TOXIPROXY_SERVER_OPTIONS, TOXIPROXY_VERSION, type ProxyInput } from './index.ts';

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
  const populate = opts.config ? (JSON.parse(await readFile(opts.config, 'utf8')) as ProxyInput[]) : undefined;
  const server = await createToxiproxyServer({
    port: opts.port,
    host: opts.host,
    allowPublic: opts.allowPublic,
    ...(opts.seed === undefined ? {} : { seed: Number(opts.seed) }),
    ...(populate ? { populate } : {}),
  });
  // The pid lets an operator signal the server itself whatever launched it (npm, a shell).
  process.stdout.write(`listening on ${server.url} pid ${process.pid}\n`);
  const stop = () => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  const e = err as { code?: string; message?: string };
  process.stderr.write(`${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}\n`);
  process.exit(1);
});

import { jsonWsServer } from './servers.ts';

/**
 * Example 1's server as its own process (`node --import tsx examples/targets/serve-json-ws.ts [port]`),
 * the way a user's server runs beside Rebound: its tests read its memory from /proc and restart it
 * with an operator command. Prints its URL once listening; SIGTERM closes it.
 */
const port = Number(process.argv[2] ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write(`usage: serve-json-ws.ts [port 0..65535] (got ${JSON.stringify(process.argv[2])})\n`);
  process.exit(2);
}
const server = await jsonWsServer(port);
process.stdout.write(`${server.url}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));

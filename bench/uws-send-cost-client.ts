/**
 * bench/uws-send-cost.ts's client process: `count` WebSocket connections from `host` to the bench's
 * server on 127.0.0.1:`port`, each reading and dropping every frame; says "ready" to its parent once
 * all are open, and exits on any connection error (the bench then stops, saying so).
 *
 *   forked as: bench/uws-send-cost-client.ts <port> <count> <host>   (by the bench only)
 */
import WebSocket from 'ws';

const [port, count, host] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]];
// The parent's own values; checked so a wrong call fails at once instead of opening nothing.
if (!Number.isInteger(port) || !Number.isInteger(count) || count < 1 || count > 10_000 || !host || !process.send) {
  console.error('usage: forked by bench/uws-send-cost.ts with <port> <count 1..10000> <host>');
  process.exit(2);
}
let open = 0;
for (let i = 0; i < count; i++) {
  const c = new WebSocket(`ws://127.0.0.1:${port}/`, { localAddress: host, perMessageDeflate: false });
  c.on('open', () => void (++open === count && process.send!('ready')));
  c.on('error', (e) => {
    console.error(`client: ${e.message}`);
    process.exit(1);
  });
  // Paced: a burst of thousands of SYNs overflows the listen backlog.
  if (i % 200 === 199) await new Promise((r) => setTimeout(r, 20));
}

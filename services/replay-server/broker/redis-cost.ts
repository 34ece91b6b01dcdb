import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { runCli } from '../../../lib/cli.ts';
import { ReboundError } from '../../../lib/errors.ts';
import { argvToValues, helpText, parseOptions, type OptionTable } from '../../../lib/options.ts';
import { RedisBroker, redactUrl } from './redis.ts';

/**
 * What the Redis broker costs Redis per published message, and so per delivery: K brokers (the
 * nodes) on one Redis, N messages published over S streams through the broker's own publish
 * script, every broker reading them off the feed. No WebSocket clients: subscribers cost Redis
 * nothing (a node fans out from its memory), so per delivery = per message / subscribers.
 *
 * `REDIS_URL=redis://127.0.0.1:<port> npx tsx services/replay-server/broker/redis-cost.ts [--json]`
 *
 * Reads `INFO commandstats` and `INFO cpu` before and after (no CONFIG RESETSTAT: it never resets a
 * shared Redis's statistics) and uses its own key prefix, deleted at the end. Other clients of the
 * same Redis would be counted too: use a Redis of its own.
 */
const OPTIONS = {
  redisUrl: { type: 'string', default: 'redis://127.0.0.1:6379', env: ['REDIS_URL'], doc: 'Redis to measure (use one of its own)' },
  nodes: { type: 'int', default: 2, min: 1, max: 16, doc: 'brokers reading the feed (the nodes of the service)' },
  streams: { type: 'int', default: 1000, min: 1, max: 100_000, doc: 'streams the messages go to, round-robin' },
  messages: { type: 'int', default: 20_000, min: 100, max: 1_000_000, doc: 'messages published' },
  batch: { type: 'int', default: 1, min: 1, max: 100, doc: 'messages per publish call (one /_broadcast batch)' },
  inFlight: { type: 'int', default: 32, min: 1, max: 1000, doc: 'publish calls in flight' },
  subscribers: { type: 'int', default: 10, min: 1, max: 100_000, doc: 'subscribers per stream, for the per-delivery figure (S3: 10)' },
  json: { type: 'bool', default: false, doc: 'print the result as JSON' },
} as const satisfies OptionTable;

type Stats = Map<string, { calls: number; usec: number }>;

async function commandStats(r: Redis): Promise<Stats> {
  const out: Stats = new Map();
  for (const line of (await r.info('commandstats')).split('\n')) {
    const m = /^cmdstat_(\S+):calls=(\d+),usec=(\d+)/.exec(line.trim());
    if (m) out.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  }
  return out;
}

async function cpuSeconds(r: Redis): Promise<number> {
  const info = await r.info('cpu');
  const get = (k: string) => Number(new RegExp(`^${k}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return get('used_cpu_user') + get('used_cpu_sys');
}

const delta = (a: Stats, b: Stats, cmd: string) => ({ calls: (b.get(cmd)?.calls ?? 0) - (a.get(cmd)?.calls ?? 0), usec: (b.get(cmd)?.usec ?? 0) - (a.get(cmd)?.usec ?? 0) });
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help')) {
    process.stdout.write(`usage: REDIS_URL=redis://127.0.0.1:<port> npx tsx services/replay-server/broker/redis-cost.ts [options]\n${helpText(OPTIONS)}\n`);
    return 0;
  }
  const o = parseOptions(OPTIONS, { values: argvToValues(argv, OPTIONS), env: process.env, origin: 'CLI' });
  const prefix = `rrcost:${randomBytes(4).toString('hex')}:`;
  const admin = new Redis(o.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  admin.on('error', () => {});
  const brokers: RedisBroker[] = [];
  try {
    await admin.connect().catch((e: Error) => {
      throw new ReboundError('RR_ERR_REDIS_UNAVAILABLE', `cannot reach Redis at ${redactUrl(o.redisUrl)}: ${e.message}`);
    });
    for (let i = 0; i < o.nodes; i++) {
      const b = new RedisBroker({ url: o.redisUrl, prefix, historyLimit: 100, historyTtlSec: 300, sessionTtlSec: 300 });
      await b.connect();
      brokers.push(b);
    }
    const received = brokers.map(() => 0);
    brokers.forEach((b, i) => b.onMessages((m) => (received[i]! += m.length)));
    const before = await commandStats(admin);
    const cpu0 = await cpuSeconds(admin);
    const t0 = Date.now();
    let next = 0;
    const calls = Math.ceil(o.messages / o.batch);
    const worker = async () => {
      for (let c = next++; c < calls; c = next++) {
        const items = Array.from({ length: Math.min(o.batch, o.messages - c * o.batch) }, (_, k) => ({ stream: `s${(c * o.batch + k) % o.streams}`, message: JSON.stringify({ n: c * o.batch + k }) }));
        await brokers[c % brokers.length]!.publish(items);
      }
    };
    await Promise.all(Array.from({ length: o.inFlight }, worker));
    const deadline = Date.now() + 60_000;
    while (received.some((n) => n < o.messages) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const elapsedMs = Date.now() - t0;
    const after = await commandStats(admin);
    const cpu = (await cpuSeconds(admin)) - cpu0;
    // ioredis runs a defined script by EVALSHA, falling back to EVAL once per connection (NOSCRIPT).
    const sha = delta(before, after, 'evalsha');
    const ev = delta(before, after, 'eval');
    const publish = { calls: sha.calls + ev.calls, usec: sha.usec + ev.usec };
    const xread = delta(before, after, 'xread');
    const n = o.messages;
    const perMessageUs = (cpu * 1e6) / n;
    const result = {
      test: 'redis-cost',
      params: { nodes: o.nodes, streams: o.streams, messages: n, batch: o.batch, inFlight: o.inFlight, subscribers: o.subscribers },
      complete: received.every((r) => r >= n),
      received,
      elapsedMs,
      publishesPerSec: round((n / elapsedMs) * 1000, 0),
      publishScript: { calls: publish.calls, usecPerCall: round(publish.usec / Math.max(1, publish.calls)), usecPerMessage: round(publish.usec / n) },
      feedReads: { calls: xread.calls, usecPerCall: round(xread.usec / Math.max(1, xread.calls)), usecPerMessagePerNode: round(xread.usec / n / o.nodes), messagesPerCall: round((n * o.nodes) / Math.max(1, xread.calls), 1) },
      /** Redis's whole CPU (user + sys: command execution, networking, event loop) per message. */
      redisCpuUsecPerMessage: round(perMessageUs),
      redisCpuUsecPerDelivery: round(perMessageUs / o.subscribers),
      /** One Redis core's ceiling at this cost: messages per second (not deliveries). */
      ceilingMessagesPerRedisCore: round(1e6 / perMessageUs, 0),
    };
    if (o.json) process.stdout.write(JSON.stringify(result) + '\n');
    else {
      process.stdout.write(
        [
          `${n} messages over ${o.streams} streams, ${o.nodes} node(s) reading the feed, batch ${o.batch}: ${result.publishesPerSec} msg/s published, every node got every message: ${result.complete}`,
          `publish script: ${result.publishScript.usecPerCall} us per call, ${result.publishScript.usecPerMessage} us per message`,
          `feed reads: ${xread.calls} XREAD, ${result.feedReads.usecPerCall} us per call, ${result.feedReads.messagesPerCall} messages per call`,
          `Redis CPU (user+sys): ${result.redisCpuUsecPerMessage} us per message = ${result.redisCpuUsecPerDelivery} us per delivery at ${o.subscribers} subscribers; one Redis core ~ ${result.ceilingMessagesPerRedisCore} msg/s`,
        ].join('\n') + '\n',
      );
    }
    return result.complete ? 0 : 1;
  } finally {
    for (const b of brokers) await b.close();
    // Our keys only (bounded SCAN), so a shared Redis keeps its data.
    let cursor = '0';
    for (let i = 0; i < 10_000; i++) {
      const [c, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000).catch(() => ['0', [] as string[]] as const);
      if (keys.length) await admin.del(...keys).catch(() => 0);
      cursor = c;
      if (cursor === '0') break;
    }
    admin.disconnect();
  }
}

runCli(main);

import { createAdapter as createPubSubAdapter } from '@socket.io/redis-adapter';
import { createAdapter as createStreamsAdapter } from '@socket.io/redis-streams-adapter';
import { Redis } from 'ioredis';
import { ReboundError } from '../../lib/errors.ts';
import { redactUrl } from '../replay-server/broker/redis.ts';
import type { SocketIoMode } from './server.ts';

/** A connected Socket.IO adapter on Redis and how to let go of its connections. */
export interface RedisAdapterHandle {
  adapter: ReturnType<typeof createPubSubAdapter> | ReturnType<typeof createStreamsAdapter>;
  close(): Promise<void>;
}

/**
 * The reference stacks on Redis, as their docs set them up: `default` mode gets
 * `@socket.io/redis-adapter` (pub/sub: fan-out only, no recovery across nodes), `csr` gets
 * `@socket.io/redis-streams-adapter`, the adapter Socket.IO documents for Connection State
 * Recovery across nodes (sessions and missed packets in Redis). Connects first, so an unreachable
 * Redis is a clear error (RR_ERR_REDIS_UNAVAILABLE) and the process exits non-zero.
 */
export async function connectRedisAdapter(url: string, mode: SocketIoMode): Promise<RedisAdapterHandle> {
  const opts = { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 1 } as const;
  const clients = mode === 'csr' ? [new Redis(url, opts)] : [new Redis(url, opts), new Redis(url, opts)];
  for (const c of clients) c.on('error', () => {}); // reconnects on its own; errors are not fatal
  try {
    await Promise.all(clients.map((c) => c.connect()));
  } catch (err) {
    for (const c of clients) c.disconnect();
    throw new ReboundError('RR_ERR_REDIS_UNAVAILABLE', `cannot reach Redis at ${redactUrl(url)}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const adapter = mode === 'csr' ? createStreamsAdapter(clients[0]) : createPubSubAdapter(clients[0], clients[1]);
  return {
    adapter,
    async close() {
      for (const c of clients) c.disconnect();
    },
  };
}

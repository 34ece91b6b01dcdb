import { replayTarget } from './anycable.ts';
import { socketIoCsrTarget, socketIoTarget } from './socketio.ts';
import type { TargetDefinition } from './contract.ts';

/**
 * The stacks on Redis (issue 13): same clients as their in-memory twins, services started with
 * their Redis option. They need a Redis at `REDIS_URL` (default redis://127.0.0.1:6379), so they
 * are not in the default target set (`needsRedis`); name them with `--targets`.
 */
const onRedis = (base: TargetDefinition, name: string, description: string, args: string[], noWorkers?: string): TargetDefinition => ({
  ...base,
  name,
  description,
  needsRedis: true,
  service: { name: base.service!.name, args: [...base.service!.args, ...args] },
  ...(noWorkers ? { noWorkers } : {}),
});

const SOCKETIO_REDIS_NO_WORKERS = 'the Socket.IO server refuses --workers with --adapter redis (its workers share rooms through the cluster adapter); run several nodes (name:K) instead';

export const socketIoRedisTarget = onRedis(socketIoTarget, 'socketio-redis', 'Socket.IO 4 + @socket.io/redis-adapter (pub/sub, no recovery); manual reconnect after a 2 s offline floor', ['--adapter', 'redis'], SOCKETIO_REDIS_NO_WORKERS);
export const socketIoCsrRedisTarget = onRedis(socketIoCsrTarget, 'socketio-csr-redis', 'Socket.IO 4 + Connection State Recovery on @socket.io/redis-streams-adapter; library reconnect', ['--adapter', 'redis'], SOCKETIO_REDIS_NO_WORKERS);
export const replayRedisTarget = onRedis(replayTarget, 'replay-redis', "Rebound's replay server on its Redis broker, driven by the unmodified @anycable/core client", ['--broker', 'redis']);

import { setupPrimary } from '@socket.io/cluster-adapter';
import { ReboundError } from '../../lib/errors.ts';
import { clusterableMain, workersOption } from '../common/cluster/main.ts';
import { REFERENCE_LIMIT_OPTIONS } from '../common/limits.ts';
import { COMMON_SERVICE_OPTIONS } from '../common/service-main.ts';
import { createSocketIoServer } from './server.ts';

const OPTIONS = {
  ...COMMON_SERVICE_OPTIONS,
  ...REFERENCE_LIMIT_OPTIONS,
  mode: { type: 'enum', values: ['default', 'csr'], default: 'default', env: ['SOCKETIO_MODE'], doc: 'default (no recovery) or csr (Connection State Recovery, in-memory adapter)' },
  maxDisconnectionMs: { type: 'int', default: 120_000, min: 0, max: 3_600_000, env: ['SOCKETIO_CSR_MAX_MS'], doc: 'CSR: how long a session stays recoverable' },
  pingIntervalMs: { type: 'int', default: 25_000, min: 100, max: 600_000, env: ['SOCKETIO_PING_INTERVAL_MS'], doc: "Engine.IO ping interval (Socket.IO's default; the benchmark uses 3000)" },
  pingTimeoutMs: { type: 'int', default: 20_000, min: 100, max: 600_000, env: ['SOCKETIO_PING_TIMEOUT_MS'], doc: "Engine.IO ping timeout (Socket.IO's default; the benchmark uses 6000)" },
  adapter: { type: 'enum', values: ['memory', 'redis'], default: 'memory', env: ['SOCKETIO_ADAPTER'], doc: 'memory (one node) or redis: default mode uses @socket.io/redis-adapter, csr uses @socket.io/redis-streams-adapter (several nodes)' },
  redisUrl: { type: 'string', default: 'redis://127.0.0.1:6379', pattern: /^(rediss?:\/\/\S+|\/\S+)$/, env: ['REDIS_URL'], doc: 'redis://[user:pass@]host:port[/db], rediss://..., or a unix socket path; Redis for --adapter redis' },
  workers: workersOption('SOCKETIO_WORKERS', 'processes behind one port (node:cluster, @socket.io/cluster-adapter; WebSocket only, no sticky sessions needed); 0 or 1 = one process. Not with --mode csr (the cluster adapter cannot recover sessions) nor --adapter redis (run several nodes instead)'),
} as const;

const refuse = (message: string) => new ReboundError('RR_ERR_OPTION_INVALID', message, { details: { option: 'workers' } });

await clusterableMain('socketio', 'SOCKETIO_WORKER_OPTIONS', OPTIONS, (opts, link) => createSocketIoServer({ ...opts, mode: opts.mode as 'default' | 'csr', redisUrl: opts.adapter === 'redis' ? opts.redisUrl : undefined }, link), {
  setupPrimary,
  check(opts) {
    if (opts.workers <= 1) return;
    // @socket.io/cluster-adapter's docs: "Connection state recovery: NO" (its publish returns no offset to recover from).
    if (opts.mode === 'csr') throw refuse('--workers cannot go with --mode csr: @socket.io/cluster-adapter does not support Connection State Recovery, so a session could not be recovered on another worker; run csr as one process, or as several nodes with --adapter redis (Redis Streams adapter)');
    if (opts.adapter === 'redis') throw refuse('--workers cannot go with --adapter redis: workers share rooms through the cluster adapter; for Redis run several nodes (one process each) instead');
  },
});

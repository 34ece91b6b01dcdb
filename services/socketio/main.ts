import { REFERENCE_LIMIT_OPTIONS } from '../common/limits.ts';
import { COMMON_SERVICE_OPTIONS, serviceMain } from '../common/service-main.ts';
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
} as const;

await serviceMain('socketio', OPTIONS, (opts) =>
  createSocketIoServer({ ...opts, mode: opts.mode as 'default' | 'csr', redisUrl: opts.adapter === 'redis' ? opts.redisUrl : undefined }),
);

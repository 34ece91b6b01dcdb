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
} as const;

await serviceMain('socketio', OPTIONS, (opts) => createSocketIoServer({ ...opts, mode: opts.mode as 'default' | 'csr' }));

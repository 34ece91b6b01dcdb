import { COMMON_SERVICE_OPTIONS, serviceMain } from '../common/service-main.ts';
import { createSocketIoServer } from './server.ts';

const OPTIONS = {
  ...COMMON_SERVICE_OPTIONS,
  mode: { type: 'enum', values: ['default', 'csr'], default: 'default', env: ['SOCKETIO_MODE'], doc: 'default (no recovery) or csr (Connection State Recovery, in-memory adapter)' },
  maxDisconnectionMs: { type: 'int', default: 120_000, min: 0, max: 3_600_000, doc: 'CSR: how long a session stays recoverable' },
} as const;

await serviceMain('socketio', OPTIONS, (opts) => createSocketIoServer({ ...opts, mode: opts.mode as 'default' | 'csr' }));

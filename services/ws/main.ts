import { clusterableMain, workersOption } from '../common/cluster/main.ts';
import { REFERENCE_LIMIT_OPTIONS } from '../common/limits.ts';
import { COMMON_SERVICE_OPTIONS } from '../common/service-main.ts';
import { createWsServer } from './server.ts';

const OPTIONS = { ...COMMON_SERVICE_OPTIONS, ...REFERENCE_LIMIT_OPTIONS, workers: workersOption('WS_WORKERS') };

await clusterableMain('ws', 'WS_WORKER_OPTIONS', OPTIONS, (opts, link) => createWsServer(opts, link));

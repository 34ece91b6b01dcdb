import { COMMON_SERVICE_OPTIONS, serviceMain } from '../common/service-main.ts';
import { createWsServer } from './server.ts';

await serviceMain('ws', COMMON_SERVICE_OPTIONS, (opts) => createWsServer(opts));

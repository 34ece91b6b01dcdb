import { REFERENCE_LIMIT_OPTIONS } from '../common/limits.ts';
import { COMMON_SERVICE_OPTIONS, serviceMain } from '../common/service-main.ts';
import { createWsServer } from './server.ts';

await serviceMain('ws', { ...COMMON_SERVICE_OPTIONS, ...REFERENCE_LIMIT_OPTIONS }, (opts) => createWsServer(opts));

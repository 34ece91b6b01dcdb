import { serviceMain } from '../common/service-main.ts';
import { locateSoketi } from './load.ts';
import { checkSoketiOptions, createSoketiServer, SOKETI_OPTIONS } from './server.ts';

// Where soketi is not installed (npm run install:soketi), say so and how, before any option or port is touched.
const found = locateSoketi();
if (!found.ok && !process.argv.includes('--help')) {
  process.stderr.write(`soketi: RR_ERR_TARGET_UNAVAILABLE: ${found.reason}\n`);
  process.exit(2);
}
// The uWS package's entry would swap in its slow JavaScript fallback under this variable; the
// binary was checked above, and a benchmark row must not quietly become something else.
delete process.env.UWS_USE_FALLBACK;
// aws-sdk v2 (one of soketi's app-manager drivers, loaded on import) prints an end-of-support notice.
process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = '1';

await serviceMain('soketi', SOKETI_OPTIONS, (opts) => createSoketiServer(found as Extract<typeof found, { ok: true }>, opts), { check: checkSoketiOptions });

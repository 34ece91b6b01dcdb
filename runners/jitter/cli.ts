import { runModuleCli } from '../module-cli.ts';
import { jitterModule } from './module.ts';

/** `npm run bench:jitter -- --target <name> [...]`: flags, --help, progress and output from the module's table. */
runModuleCli(jitterModule);

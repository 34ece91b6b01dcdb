import { runModuleCli } from './module-cli.ts';
import { jitterModule } from '../runners/jitter/module.ts';

/** `npm run bench:jitter -- --target <name> [...]`: flags, --help, progress and output from the module's table. */
runModuleCli(jitterModule);

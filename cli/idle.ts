import { runModuleCli } from './module-cli.ts';
import { idleModule } from '../runners/idle/module.ts';

/** `npm run bench:idle`: flags, --help, progress and output from the module's table. */
runModuleCli(idleModule);

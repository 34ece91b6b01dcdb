import { runModuleCli } from './module-cli.ts';
import { capacityModule } from '../runners/capacity/module.ts';

/** `npm run bench:capacity`: flags, --help, progress and output from the module's table. */
runModuleCli(capacityModule);

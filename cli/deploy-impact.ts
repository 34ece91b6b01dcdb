import { runModuleCli } from './module-cli.ts';
import { deployImpactModule } from '../runners/deploy-impact/module.ts';

/** `npm run bench:deploy-impact`: flags, --help, progress and output from the module's table. */
runModuleCli(deployImpactModule);

import { runModuleCli } from './module-cli.ts';
import { whispersModule } from '../runners/whispers/module.ts';

/** `npm run bench:whispers`: flags, --help, progress and output from the module's table. */
runModuleCli(whispersModule);

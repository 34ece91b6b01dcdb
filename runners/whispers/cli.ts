import { runModuleCli } from '../module-cli.ts';
import { whispersModule } from './module.ts';

/** `npm run bench:whispers`: flags, --help, progress and output from the module's table. */
runModuleCli(whispersModule);

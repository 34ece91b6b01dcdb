import { runCli } from '../../lib/cli.ts';
import { fleetMain } from './cli.ts';

runCli((argv) => fleetMain(argv));

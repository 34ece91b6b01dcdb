import { runCli } from '../../lib/cli.ts';
import { main } from './cli.ts';

runCli((argv) => main(argv));

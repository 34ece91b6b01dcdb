import { runCli } from '../../lib/cli.ts';
import { historyMain, rebaselineMain } from './cli.ts';

// One entry for both commands: `--history` selects the trend table.
runCli((argv) => (argv[0] === 'history' ? historyMain(argv.slice(1)) : rebaselineMain(argv)));

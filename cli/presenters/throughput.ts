import { throughputModule } from '../../runners/throughput/module.ts';
import { presenter } from '../presenter.ts';

export const throughputCli = presenter(throughputModule, { usage: '[options]', json: 'always' });

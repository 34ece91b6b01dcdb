import { latencyModule } from '../../runners/latency/module.ts';
import { presenter } from '../presenter.ts';

export const latencyCli = presenter(latencyModule, { json: 'always' });

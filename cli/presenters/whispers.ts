import type { ProgressSnapshot } from '../../engine/session/present.ts';
import { whispersModule } from '../../runners/whispers/module.ts';
import { presenter } from '../presenter.ts';

export const whispersCli = presenter(whispersModule, {
  usage: '[options]',
  json: 'always',
  logLine: (l) => l,
  progressLine: (p, o) => {
    const x = p as ProgressSnapshot;
    return `[${o.target}] ${x.phase}: connected ${x.connected}, sent ${x.published}, received ${x.received}`;
  },
});

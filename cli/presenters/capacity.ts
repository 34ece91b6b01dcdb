import { resultName } from '../../engine/session/module.ts';
import { capacityModule } from '../../runners/capacity/module.ts';
import { renderText } from '../../runners/capacity/table.ts';
import { presenter } from '../presenter.ts';

export const capacityCli = presenter(capacityModule, {
  usage: '--targets replay,ws,socketio [--scenarios S1,S3] [--json] [options]',
  fileName: (o) => resultName('capacity', o.targets.join('-')),
  command: (o) => ({ values: { ...o.values, targets: o.targets.join(','), scenarios: o.scenarios.join(',') } }),
  present: (r) => renderText(r),
  // Exit 0 once the suite ran: each step's verdict is in the table and the JSON.
  exitCode: () => 0,
  logLine: (l) => l,
  progressLine: (p) => {
    const x = p as Record<string, unknown>;
    return `[${String(x.scenario)} ${String(x.target)}] ${JSON.stringify(x)}`;
  },
});

import { capacityModule } from '../../../runners/capacity/module.ts';
import { CAPACITY_OPTIONS } from '../../../runners/capacity/options.ts';
import { defineAdapter } from './adapter.ts';

/** The suite's table without the targets and the URL: the route names the one target. */
const { targets: _t, url: _u, ...CAPACITY_HTTP_OPTIONS } = CAPACITY_OPTIONS;

export const capacityAdapter = defineAdapter(capacityModule, {
  targets: ['replay', 'ws', 'socketio', 'socketio-csr', 'uws', 'anycable', 'pusher', 'soketi'],
  options: CAPACITY_HTTP_OPTIONS,
  fromQuery: (q, t) => ({ values: { ...q, targets: t.server, url: t.url } }),
  shown: (o) => ({ ...o.values, targets: undefined, scenarios: o.scenarios.join(',') }),
});

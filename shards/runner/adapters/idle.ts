import type { OptionTable } from '../../../lib/options.ts';
import { idleModule } from '../../../runners/idle/module.ts';
import { IDLE_OPTIONS } from '../../../runners/idle/options.ts';
import { defineAdapter } from './adapter.ts';
import { CLIENT_COMPAT_OPTIONS, checkClientCompat } from './compat.ts';

const { target: _t, url: _u, ...IDLE_QUERY } = IDLE_OPTIONS;
export const IDLE_HTTP_OPTIONS = { ...IDLE_QUERY, channel: CLIENT_COMPAT_OPTIONS.channel, acProtocol: CLIENT_COMPAT_OPTIONS.acProtocol } as const satisfies OptionTable;

export const idleAdapter = defineAdapter(idleModule, {
  // The benchmark's idle routes; a Redis variant is measured with bench:idle --target <name>-redis.
  targets: ['replay', 'ws', 'uws', 'socketio', 'socketio-csr', 'anycable'],
  options: IDLE_HTTP_OPTIONS,
  fromQuery(q, t, given) {
    const { channel, acProtocol, ...rest } = q;
    checkClientCompat({ channel, acProtocol }, t.route, given);
    return { values: { ...rest, target: t.server, url: t.url } };
  },
});

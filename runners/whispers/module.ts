import { defineModule } from '../../engine/session/module.ts';
import type { ProgressSnapshot } from '../../engine/session/present.ts';
import { checkWhispersOptions, WHISPERS_OPTIONS } from './options.ts';
import { runWhispers, whispersPlannedMs } from './run.ts';

export const whispersModule = defineModule({
  name: 'whispers',
  doc: 'client-to-client messages through the server (replay, Socket.IO, ws); delivery and latency',
  options: WHISPERS_OPTIONS,
  validate: checkWhispersOptions,
  plannedMs: whispersPlannedMs,
  run: (o, ctx) => runWhispers(o, ctx.url!, { signal: ctx.signal, log: ctx.log, progress: ctx.progress }),
  summary: ['clients', 'whispersSent', 'whispersReceived', 'expectedReceived'],
  multi: { sharedStream: false },
  cli: {
    usage: '[options]',
    json: 'always',
    logLine: (l) => l,
    progressLine: (p, o) => {
      const x = p as ProgressSnapshot;
      return `[${o.target}] ${x.phase}: connected ${x.connected}, sent ${x.published}, received ${x.received}`;
    },
  },
});

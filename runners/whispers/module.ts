import { defineModule } from '../../engine/session/module.ts';
import { whispersReport } from './page.ts';
import { DELIVERY_MERGE } from '../../engine/session/results.ts';
import { checkWhispersOptions, WHISPERS_OPTIONS } from './options.ts';
import { WHISPERS_MERGE } from './result.ts';
import { runWhispers, whispersPlannedMs } from './run.ts';

export const whispersModule = defineModule({
  name: 'whispers',
  doc: 'client-to-client messages through the server (replay, Socket.IO, ws); delivery and latency',
  options: WHISPERS_OPTIONS,
  validate: checkWhispersOptions,
  plannedMs: whispersPlannedMs,
  run: (o, ctx) => runWhispers(o, ctx.url!, { signal: ctx.signal, log: ctx.log, progress: ctx.progress }),
  summary: ['clients', 'whispersSent', 'whispersReceived', 'expectedReceived'],
  page: whispersReport,
  merge: [DELIVERY_MERGE, WHISPERS_MERGE],
  multi: {
    sharedStream: false,
    // Own rooms per shard: no shard's clients hear another shard's whispers.
    ownStream: ({ 'room-prefix': dashed, ...q }, suffix) => ({ ...q, roomPrefix: `${q.roomPrefix ?? dashed ?? WHISPERS_OPTIONS.roomPrefix.default}-${suffix}` }),
  },
});

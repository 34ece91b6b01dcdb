import { runJitter } from './run.ts';
import { assertNever, sendToParent } from '../../engine/measure/child-link.ts';
import { childTargetModules } from '../../engine/targets/user-module.ts';
import type { FromJitterWorker, ToJitterWorker } from './worker-messages.ts';

/** One jitter worker process: runs the jitter engine for its slice and sends the result back. */
const send = (m: FromJitterWorker, then?: () => void) => sendToParent(m, then);

const abort = new AbortController();

// A target file of the user's (TARGET_MODULES, inherited from the parent) is loaded before the first message is handled.
const targets = childTargetModules();
process.on('message', (m: ToJitterWorker) => void targets.then(() => onMessage(m), (err: Error) => send({ type: 'error', message: err.message }, () => process.exit(1))));

function onMessage(m: ToJitterWorker): void {
  switch (m.type) {
    case 'run': {
      const run = runJitter(m.opts, m.url, { ...(m.targetPid ? { targetPid: m.targetPid } : {}), signal: abort.signal });
      run.events.on('phase', (name, detail) => send({ type: 'phase', name, detail }));
      run.events.on('progress', (progress) => send({ type: 'progress', progress }));
      run.result.then(
        // A result is megabytes of JSON: leave only once the channel has taken all of it.
        (result) => send({ type: 'result', result }, () => process.exit(0)),
        (err: unknown) => send({ type: 'error', message: (err as Error).message }, () => process.exit(1)),
      );
      return;
    }
    case 'stop':
      // The engine stops early, closes its clients and still sends its (partial) result.
      abort.abort();
      return;
    default:
      assertNever(m);
  }
}
process.on('disconnect', () => process.exit(0));

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * hdr-histogram-js decoding of a shard's histogram, on a worker thread under a deadline.
 * histogram-envelope.ts bounds what reaches the decoder, but the decoder is a synchronous loop in
 * a library: a defect the pre-scan does not foresee (a hostile input within the limits that is
 * still slow, a later version of the library) would hold the coordinator's event loop, and no
 * timer on that loop could fire. On a worker the coordinator's timer still runs, and terminate()
 * stops the decoder wherever it is.
 */

/** Default time one histogram may take to decode, ms (the largest layout the pre-scan lets through decodes in about 100 ms). */
export const DEFAULT_DECODE_DEADLINE_MS = 2000;
/** Starting the worker (a thread and the library's require) is not the shard's time: bounded apart. */
const STARTUP_MS = 30_000;
/** The decoded histogram is at most a few MB (2^18 Int32 buckets); a decoder that wants far more is stopped by V8. */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 };

/**
 * Plain CommonJS, evaluated by the worker: it loads no TypeScript, so it runs the same under tsx,
 * vitest and the esbuild bundles (which keep packages external). The library is required by the
 * absolute path resolved here, not by name, so the worker's cwd does not matter. The reply is the
 * library's own re-encoding of what it decoded: the merge reads that, never the shard's bytes.
 */
const WORKER_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const hdr = require(workerData.lib);
parentPort.on('message', (b64) => {
  let reply;
  try {
    const h = hdr.decodeFromCompressedBase64(b64);
    reply = { total: h.totalCount, histogram: hdr.encodeIntoCompressedBase64(h) };
  } catch (err) {
    reply = { error: String((err && err.message) || err).slice(0, 200) };
  }
  parentPort.postMessage(reply);
});
parentPort.postMessage('ready');
`;
const LIB = createRequire(import.meta.url).resolve('hdr-histogram-js');

export type Decoded = { histogram: string; total: number } | { problem: string };

/**
 * One worker, one histogram at a time, each under `deadlineMs` from the moment it is posted. A
 * worker that overran, crashed or ran out of memory is dropped and the next histogram gets a fresh
 * one. close() when done (the worker is unref'd, so a forgotten one does not hold the process).
 */
export class HistogramDecoder {
  private worker?: Promise<Worker>;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deadlineMs = DEFAULT_DECODE_DEADLINE_MS) {}

  /** The library's decoding of `b64`, or why there is none. Never throws. */
  decode(b64: string): Promise<Decoded> {
    const next = this.queue.then(() => this.run(b64));
    this.queue = next;
    return next;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.then((x) => x.terminate(), () => undefined);
  }

  private async run(b64: string): Promise<Decoded> {
    let w: Worker;
    try {
      w = await this.start();
    } catch (err) {
      return { problem: `latencyHistogram could not be checked: the decoder did not start: ${(err as Error).message}` };
    }
    return new Promise<Decoded>((resolve) => {
      const finish = (d: Decoded, drop: boolean) => {
        clearTimeout(timer);
        w.off('message', onMessage).off('error', onError).off('exit', onExit);
        // A worker that overran, crashed or ran out of memory is not reused: the next decode starts a fresh one.
        if (drop) {
          this.worker = undefined;
          void w.terminate();
        }
        resolve(d);
      };
      const timer = setTimeout(() => finish({ problem: `latencyHistogram did not decode within its ${this.deadlineMs} ms deadline (decoder stopped)` }, true), this.deadlineMs);
      const onMessage = (m: { total?: unknown; histogram?: unknown; error?: unknown }) => {
        if (typeof m?.total === 'number' && typeof m.histogram === 'string') finish({ total: m.total, histogram: m.histogram }, false);
        else finish({ problem: `latencyHistogram does not decode: ${typeof m?.error === 'string' ? m.error : 'no answer from the decoder'}` }, false);
      };
      const onError = (err: Error) => finish({ problem: `latencyHistogram decoder failed: ${err.message}` }, true);
      const onExit = (code: number) => finish({ problem: `latencyHistogram decoder exited (code ${code})` }, true);
      w.on('message', onMessage).on('error', onError).on('exit', onExit);
      w.postMessage(b64);
    });
  }

  private start(): Promise<Worker> {
    this.worker ??= new Promise<Worker>((resolve, reject) => {
      const w = new Worker(WORKER_CODE, { eval: true, workerData: { lib: LIB }, execArgv: [], resourceLimits: RESOURCE_LIMITS });
      w.unref();
      // A worker's 'error' with no listener would throw in the coordinator: faults are read by whoever waits.
      w.on('error', () => undefined);
      const timer = setTimeout(() => {
        void w.terminate();
        reject(new Error(`no ready within ${STARTUP_MS} ms`));
      }, STARTUP_MS);
      const fail = (why: string) => {
        clearTimeout(timer);
        w.removeAllListeners('message');
        void w.terminate();
        reject(new Error(why));
      };
      w.once('message', (m) => {
        clearTimeout(timer);
        w.off('error', onError).off('exit', onExit);
        if (m === 'ready') resolve(w);
        else fail('unexpected first message');
      });
      const onError = (err: Error) => fail(err.message);
      const onExit = (code: number) => fail(`exited (code ${code})`);
      w.once('error', onError).once('exit', onExit);
    });
    return this.worker;
  }
}

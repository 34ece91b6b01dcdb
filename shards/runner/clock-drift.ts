import { performance } from 'node:perf_hooks';

/** The two clocks of a run: the wall clock that stamps messages (`sentAt`, arrivals) and a monotonic one. */
export interface RunClocks {
  wall: () => number;
  monotonic: () => number;
}
export const SYSTEM_CLOCKS: RunClocks = { wall: () => Date.now(), monotonic: () => performance.now() };

const r3 = (v: number) => Math.round(v * 1000) / 1000;

/**
 * Run `run` and add `clockDrift` to its result: how far the wall clock moved against the monotonic
 * clock during the run (ms). A latency is a difference of two wall-clock stamps: an NTP step
 * between them lands whole in the figure, while the monotonic clock never steps. `maxStepMs` is the
 * largest deviation seen at any sample (a step that was stepped back is caught too); `endStepMs`
 * what remained at the end, signed. Sampling is cheap (two clock reads every `everyMs`) and
 * unref'd, so it never holds the process open.
 */
export async function withClockDrift<T extends Record<string, unknown>>(run: () => Promise<T>, clocks: RunClocks = SYSTEM_CLOCKS, everyMs = 250) {
  const w0 = clocks.wall();
  const m0 = clocks.monotonic();
  let max = 0;
  let samples = 0;
  const sample = () => {
    const dev = clocks.wall() - w0 - (clocks.monotonic() - m0);
    samples++;
    if (Math.abs(dev) > Math.abs(max)) max = dev;
    return dev;
  };
  const timer = setInterval(sample, everyMs);
  timer.unref();
  try {
    const result = await run();
    const end = sample();
    const clockDrift = { wallMs: r3(clocks.wall() - w0), monotonicMs: r3(clocks.monotonic() - m0), endStepMs: r3(end), maxStepMs: r3(Math.abs(max)), samples, sampleEveryMs: everyMs };
    return { ...result, clockDrift };
  } finally {
    clearInterval(timer);
  }
}

/** @deprecated kept one merge cycle for shards/runner/benchmark-requests.test.ts: use strategyDelayMs (runners/targets/reconnect.ts). */
export { strategyDelayMs as backoffMs } from '../targets/reconnect.ts';

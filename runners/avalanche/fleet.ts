// The restart fleet is the engine's (runners/engine/fleet.ts), shared by avalanche and deploy-impact; kept for old import paths.
export { ClientFleet, type ClientTrack } from '../engine/fleet.ts';
/** @deprecated kept one merge cycle for shards/runner/benchmark-requests.test.ts: use strategyDelayMs (runners/targets/reconnect.ts). */
export { strategyDelayMs as backoffMs } from '../targets/reconnect.ts';

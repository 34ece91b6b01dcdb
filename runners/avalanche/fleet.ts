// The restart fleet is the engine's (runners/engine/fleet.ts), shared by avalanche and deploy-impact; kept for old import paths.
export { backoffMs, ClientFleet, type ClientTrack } from '../engine/fleet.ts';

/**
 * Lean clients: the same TargetClient interface as the full adapters, over one bare socket each,
 * for runners that hold many connections and measure little per message (idle, the loader). Each
 * target declares its own (`TargetDefinition.createLeanClient`, its wire next to its full client);
 * this module only re-exports.
 *
 * @deprecated for `leanClientFor` / `LEAN_TARGETS`: import them from './index.ts' (kept here one
 * merge cycle for the option and CLI files that still import them from here).
 */
export { LeanStage } from './lean-client.ts';
export { LEAN_TARGETS, leanClientFor } from './index.ts';

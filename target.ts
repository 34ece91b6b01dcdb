/**
 * Rebound's public target contract, for a target file of your own (`--target-module ./x.ts`):
 * `import { defineTarget, type TargetClient } from '<rebound>/target.ts'`. docs/targets.md
 * describes every field; engine/targets/contract.ts is where the contract lives, so the built-in
 * targets import the same names from inside the engine layer.
 */
export * from './engine/targets/contract.ts';

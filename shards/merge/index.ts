export { mergeShards, connectedOf, type MergeOptions, type MergedRun } from './merge.ts';
export { shiftLatency } from './latency-shift.ts';
export { fleetValidity, CEILING_SHARE, OUTLIER_FACTOR } from './fleet-validity.ts';
export type * from './types.ts';
export { resultProblem, screenOutcomes, type SchemaContext } from './schema.ts';

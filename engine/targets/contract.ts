/**
 * The target contract: everything a target file uses, built-in or a user's (docs/targets.md says
 * it in words; the repository's root `target.ts` re-exports this file for user target files).
 * The built-in targets (ws.ts, socketio.ts, anycable.ts, redis.ts) import what they declare from
 * here and nothing else of the registry, so a user's file can do whatever they do.
 */
export type { ArrivedMessage, ClientCapabilities, ClientEvents, ClientOptions, DisconnectReason, TargetClient, TargetDeclaration, TargetDefinition } from './types.ts';
export { defineTarget, LEAN_CAPABILITIES } from './types.ts';
export type { ResumeProtocol } from '../measure/loss-causes.ts';
export type { FunctionPublish, PublishContext, PublishMessage, PublishRequest, RequestPublish, TargetPublish } from './publish.ts';
export { broadcastEndpoint, broadcastPublish } from './publish.ts';
export { LeanClient, LeanStage, ParsedArrival, type LeanProtocol } from './lean-client.ts';
export { ClientBase } from './client-base.ts';
export { parseJson } from './payload.ts';

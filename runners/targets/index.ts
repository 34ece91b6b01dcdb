import { ReboundError } from '../../lib/errors.ts';
import { anycableTarget, replayTarget } from './anycable.ts';
import { replayRedisTarget, socketIoCsrRedisTarget, socketIoRedisTarget } from './redis.ts';
import { socketIoCsrTarget, socketIoTarget } from './socketio.ts';
import type { TargetDefinition } from './types.ts';
import { uwsTarget, wsTarget } from './ws.ts';

/**
 * The target registry. Runners look targets up here by name; adding a protocol means adding an
 * adapter file and one line below.
 */
const TARGETS: ReadonlyMap<string, TargetDefinition> = new Map(
  [socketIoTarget, socketIoCsrTarget, wsTarget, uwsTarget, replayTarget, anycableTarget, socketIoRedisTarget, socketIoCsrRedisTarget, replayRedisTarget].map((t) => [t.name, t]),
);

export const TARGET_NAMES = [...TARGETS.keys()];

export function getTarget(name: string): TargetDefinition {
  const t = TARGETS.get(name);
  if (!t) throw new ReboundError('RR_ERR_TARGET_UNKNOWN', `unknown target "${name}"; known targets: ${TARGET_NAMES.join(', ')}`, { details: { target: name } });
  return t;
}

/**
 * Targets the runners start themselves on embedded defaults (Redis targets are opt-in; a target
 * that cannot run here, e.g. uws without its binary, is left out: see `unavailableTargets`).
 */
export function localTargets(): TargetDefinition[] {
  return [...TARGETS.values()].filter((t) => t.service && !t.needsRedis && !t.unavailable?.());
}

/** Local targets that cannot run on this machine, each with the reason (reported, never fatal). */
export function unavailableTargets(): Array<{ name: string; reason: string }> {
  return [...TARGETS.values()].flatMap((t) => {
    const reason = t.unavailable?.();
    return reason ? [{ name: t.name, reason }] : [];
  });
}

/** Throws RR_ERR_TARGET_UNAVAILABLE, with the reason, for a target that cannot run here. */
export function assertAvailable(t: TargetDefinition): void {
  const reason = t.unavailable?.();
  if (reason) throw new ReboundError('RR_ERR_TARGET_UNAVAILABLE', `target "${t.name}" is not installed here: ${reason}`, { details: { target: t.name } });
}

export type { TargetDefinition, TargetClient, ClientOptions } from './types.ts';

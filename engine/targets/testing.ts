import { getTarget, withTargets } from './index.ts';
import type { TargetDefinition } from './types.ts';

/**
 * A test target that declares its lean client unsupported: the ws target's service and full
 * client, no lean one. No shipped target lacks a lean client, so the runners that need one (S6, the
 * lean soak) are held to their coded refusal with this. Resolvable by name only inside
 * `withNoLeanTarget`: the shipped registry is never changed.
 */
export function noLeanTarget(): TargetDefinition {
  const { createLeanClient: _lean, ...ws } = getTarget('ws');
  return { ...ws, name: 'ws-no-lean', description: 'test only: the ws target with its lean client declared unsupported', leanUnsupported: 'test target: no lean client' };
}

/** Runs `fn(name)` with the no-lean target resolvable under `name`. */
export function withNoLeanTarget<T>(fn: (name: string) => T): T {
  const t = noLeanTarget();
  return withTargets([t], () => fn(t.name));
}

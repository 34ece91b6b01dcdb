import { findTarget, getTarget, registerTarget } from './index.ts';

/**
 * A test target that declares its lean client unsupported: the ws target's service and full
 * client, no lean one. No shipped target lacks a lean client, so the runners that need one (idle,
 * S1, S6, the lean soak) are held to their coded refusal with this. Registered once per process.
 */
export function noLeanTarget(): string {
  const name = 'ws-no-lean';
  if (!findTarget(name)) {
    const { createLeanClient: _lean, ...ws } = getTarget('ws');
    registerTarget({ ...ws, name, description: 'test only: the ws target with its lean client declared unsupported', leanUnsupported: 'test target: no lean client' });
  }
  return name;
}

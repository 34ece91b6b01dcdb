import type { ServiceHandle } from '../../services/common/spawn.ts';
import { ReboundError } from '../../lib/errors.ts';
import { assertAvailable } from '../targets/index.ts';
import type { TargetDefinition } from '../targets/types.ts';
import { LocalNodes } from './local-nodes.ts';

/**
 * Run `fn` against the target: at `url` when given, otherwise against a fresh local instance of
 * its service (a child process on port 0) that is stopped afterwards. The instance is held as a
 * LocalNodes of one, so a runner can restart it on its port (the weather's deploy) and the
 * instance stopped at the end is whichever runs then.
 */
export async function withTarget<T>(target: TargetDefinition, url: string | undefined, fn: (url: string, service?: ServiceHandle, nodes?: LocalNodes) => Promise<T>, env?: Record<string, string>): Promise<T> {
  if (url) return fn(url.replace(/\/+$/, ''));
  assertAvailable(target);
  if (!target.service) throw new ReboundError('RR_ERR_OPTION_INVALID', `target "${target.name}" has no local service: pass --url`, { details: { option: 'url' } });
  const nodes = await LocalNodes.start(target, 1, env ? { env } : {});
  try {
    return await fn(nodes.urls[0]!, nodes.handles[0]!, nodes);
  } finally {
    await nodes.close(10_000);
  }
}

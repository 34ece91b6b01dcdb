import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { ReboundError } from '../../lib/errors.ts';
import { assertAvailable } from '../targets/index.ts';
import type { TargetDefinition } from '../targets/types.ts';

/**
 * Run `fn` against the target: at `url` when given, otherwise against a fresh local instance of
 * its service (a child process on port 0) that is stopped afterwards.
 */
export async function withTarget<T>(target: TargetDefinition, url: string | undefined, fn: (url: string, service?: ServiceHandle) => Promise<T>, env?: Record<string, string>): Promise<T> {
  if (url) return fn(url.replace(/\/+$/, ''));
  assertAvailable(target);
  if (!target.service) throw new ReboundError('RR_ERR_OPTION_INVALID', `target "${target.name}" has no local service: pass --url`, { details: { option: 'url' } });
  const svc = await startService(target.service.name, { args: target.service.args, ...(env ? { env } : {}) });
  try {
    return await fn(svc.httpUrl, svc);
  } finally {
    await svc.stop();
  }
}

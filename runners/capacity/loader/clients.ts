import { leanClientFor } from '../../targets/lean.ts';
import type { ClientOptions, TargetClient, TargetDefinition } from '../../targets/types.ts';

/**
 * The client a loader holds per connection: the lean per-protocol client where one exists (the
 * official libraries cost the rig several times the CPU per delivery, and on two shared cores the
 * rig would become the limit), else the target's own adapter. A Redis-backed target speaks its
 * in-memory twin's wire, so `replay-redis` gets the replay lean client.
 */
export function clientFactory(target: TargetDefinition): (o: ClientOptions) => TargetClient {
  const lean = leanClientFor(target.name) ?? leanClientFor(target.name.replace(/-redis$/, ''));
  return lean ?? ((o) => target.createClient(o));
}

import { pickClient } from '../../targets/index.ts';
import type { ClientOptions, TargetClient, TargetDefinition } from '../../targets/types.ts';

/**
 * The client a loader holds per connection: the target's lean client where it declares one (the
 * official libraries cost the rig several times the CPU per delivery, and on two shared cores the
 * rig would become the limit), else its full client.
 */
export function clientFactory(target: TargetDefinition): (o: ClientOptions) => TargetClient {
  return pickClient(target, { prefer: 'lean' })!.create;
}

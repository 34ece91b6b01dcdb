import { LeanClient, LeanStage } from './lean-client.ts';
import { leanAnyCable, leanSocketIo, leanWs } from './lean-protocols.ts';
import type { LeanProtocol } from './lean-client.ts';
import type { ClientOptions } from './types.ts';

/**
 * Lean clients by target name: the same TargetClient interface as the full adapters, over one
 * bare socket each, for runners that hold many connections and measure little per message (idle).
 * The CSR variant speaks the same wire (recovery matters only after a reconnect).
 */
const LEAN: Record<string, LeanProtocol> = {
  replay: leanAnyCable,
  anycable: leanAnyCable,
  ws: leanWs,
  // uWS speaks the ws server's wire.
  uws: leanWs,
  socketio: leanSocketIo,
  'socketio-csr': leanSocketIo,
};

export const LEAN_TARGETS = Object.keys(LEAN);

export function leanClientFor(target: string): ((opts: ClientOptions) => LeanClient) | undefined {
  const proto = LEAN[target];
  return proto ? (opts) => new LeanClient(opts, proto) : undefined;
}

export { LeanClient, LeanStage };

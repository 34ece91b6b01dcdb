import { ReboundError } from '../../../lib/errors.ts';
import { loadUws } from '../../uws/load.ts';
import type { TransportName } from '../connection/transport.ts';

export type TransportChoice = TransportName | 'auto';

let noticed = false;

/**
 * Which transport a server runs: `ws`, `uws` (an error where uWebSockets.js's binary does not
 * load here), or `auto` = uws where it loads, else ws with a one-line notice on stderr.
 * `module`: where uWS is loaded from (services/uws/load.ts; UWS_MODULE by default).
 */
export function resolveTransport(choice: TransportChoice, module?: string): TransportName {
  if (choice === 'ws') return 'ws';
  const loaded = loadUws(module);
  if (loaded.ok) return 'uws';
  if (choice === 'uws') throw new ReboundError('RR_ERR_TARGET_UNAVAILABLE', `transport uws: ${loaded.reason}`, { details: { option: 'transport' } });
  if (!noticed) process.stderr.write(`replay: transport ws (uws unavailable: ${loaded.reason})\n`);
  noticed = true;
  return 'ws';
}

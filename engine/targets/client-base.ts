import { Emitter } from '../../lib/emitter.ts';
import type { ClientEvents, ClientOptions, DisconnectReason } from './types.ts';

/** What the full (library) clients share: their events, connection state and attempt count. */
export abstract class ClientBase {
  readonly index: number;
  protected readonly events = new Emitter<ClientEvents>();
  protected state: 'idle' | 'connecting' | 'open' | 'offline' | 'closed' = 'idle';
  protected attempt = 0;

  constructor(protected readonly opts: ClientOptions) {
    this.index = opts.index;
  }

  on<E extends keyof ClientEvents>(event: E, fn: ClientEvents[E]) {
    return this.events.on(event, fn);
  }

  /** The current socket went away: offline, and `disconnected` only if it was open (not once the runner closed the client). */
  protected wentAway(reason: DisconnectReason, detail: string): void {
    if (this.state === 'closed') return;
    const wasOpen = this.state === 'open';
    this.state = 'offline';
    if (wasOpen) this.events.emit('disconnected', { reason, detail });
  }
}

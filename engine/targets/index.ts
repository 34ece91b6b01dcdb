import { AsyncLocalStorage } from 'node:async_hooks';
import { ReboundError } from '../../lib/errors.ts';
import { isAllowedTargetUrl } from '../measure/addresses.ts';
import { anycableTarget, replayTarget } from './anycable.ts';
import { pusherManualTarget, pusherTarget, soketiTarget } from './pusher.ts';
import { replayRedisTarget, socketIoCsrRedisTarget, socketIoRedisTarget } from './redis.ts';
import { socketIoCsrTarget, socketIoTarget } from './socketio.ts';
import type { LeanClient } from './lean-client.ts';
import { LEAN_CAPABILITIES, type ClientCapabilities, type ClientOptions, type TargetClient, type TargetDefinition } from './types.ts';
import { uwsTarget, wsTarget } from './ws.ts';

/**
 * The target registry. Runners look targets up here by name and then choose a client by
 * capability (below); adding a protocol means one file (its definition: service, full client,
 * lean client or why not, capabilities) and one line here.
 */
const TARGETS = new Map<string, TargetDefinition>(
  [socketIoTarget, socketIoCsrTarget, wsTarget, uwsTarget, replayTarget, anycableTarget, socketIoRedisTarget, socketIoCsrRedisTarget, replayRedisTarget, pusherTarget, pusherManualTarget, soketiTarget].map((t) => [t.name, t]),
);

export const TARGET_NAMES: readonly string[] = [...TARGETS.keys()];

/**
 * Extra definitions visible only inside one `withTargets` call (tests: a target that declares lean
 * unsupported, to hold the runners that need one to their refusal; no shipped target lacks one).
 * Scoped by async context, so the registry and the name lists above stay what ships.
 */
const EXTRA = new AsyncLocalStorage<ReadonlyMap<string, TargetDefinition>>();

/** Runs `fn` (and everything it awaits) with `extra` resolvable by name. Throws on a taken name. */
export function withTargets<T>(extra: readonly TargetDefinition[], fn: () => T): T {
  const map = new Map(EXTRA.getStore());
  for (const t of extra) {
    if (TARGETS.has(t.name) || LOADED.has(t.name) || map.has(t.name)) throw new ReboundError('RR_ERR_INTERNAL', `target "${t.name}" is already registered`, { details: { target: t.name } });
    map.set(t.name, t);
  }
  return EXTRA.run(map, fn);
}

/**
 * Targets of target files loaded into this process for its lifetime (engine/targets/user-module.ts:
 * a CLI's --target-module, the runner service's TARGET_MODULES, inherited by their child processes).
 */
const LOADED = new Map<string, TargetDefinition>();

/** Makes `defs` resolvable by name in this process from now on. Throws on a taken name. */
export function registerTargets(defs: readonly TargetDefinition[]): void {
  for (const t of defs) {
    if (TARGETS.has(t.name) || LOADED.has(t.name)) throw new ReboundError('RR_ERR_TARGET_MODULE_INVALID', `target "${t.name}" is already registered: choose another name`, { details: { target: t.name, hook: 'name' } });
  }
  for (const t of defs) LOADED.set(t.name, t);
}

/** Names of the targets loaded from target files into this process (registerTargets), in load order. */
export const loadedTargetNames = (): string[] => [...LOADED.keys()];

/** The definition named `name`, or undefined (for callers that report an unknown name their own way). */
export const findTarget = (name: string): TargetDefinition | undefined => TARGETS.get(name) ?? LOADED.get(name) ?? EXTRA.getStore()?.get(name);

export function getTarget(name: string): TargetDefinition {
  const t = findTarget(name);
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

/**
 * The runners' one check of a URL option (target, broadcast, proxy API): only where
 * `isAllowedTargetUrl` allows it (loopback, TARGET_URL_ALLOW, REBOUND_ALLOW_REMOTE_TARGETS=1).
 * `rule` is the runner's own wording of the refusal; the value is appended to it.
 */
export function checkTargetUrl(option: string, value: string | undefined, rule = `${option} must be a loopback URL unless REBOUND_ALLOW_REMOTE_TARGETS=1`): void {
  if (value !== undefined && !isAllowedTargetUrl(value)) throw new ReboundError('RR_ERR_OPTION_INVALID', `${rule}; got ${JSON.stringify(value)}`, { details: { option } });
}

/** One of a target's two client constructors, with what it can do. */
export interface ClientChoice {
  kind: 'full' | 'lean';
  capabilities: Readonly<ClientCapabilities>;
  create(opts: ClientOptions): TargetClient;
}

/** A target's clients: the full library client, then the lean one when it has one. */
export function clientsOf(t: TargetDefinition): ClientChoice[] {
  const full: ClientChoice = { kind: 'full', capabilities: t.capabilities, create: (o) => t.createClient(o) };
  const lean = t.createLeanClient;
  return lean ? [full, { kind: 'lean', capabilities: LEAN_CAPABILITIES, create: (o) => lean(o) }] : [full];
}

/**
 * The client a runner asks for: `prefer` decides between the two when both fit (the loader and
 * the idle runner prefer lean: the official libraries cost the rig several times the CPU and
 * memory per connection), `needs` lists capabilities it must have. Undefined when none fits.
 */
export function pickClient(t: TargetDefinition, want: { prefer?: 'full' | 'lean'; needs?: Partial<ClientCapabilities> } = {}): ClientChoice | undefined {
  const fits = clientsOf(t).filter((c) => Object.entries(want.needs ?? {}).every(([k, v]) => c.capabilities[k as keyof ClientCapabilities] === v));
  return fits.find((c) => c.kind === (want.prefer ?? 'full')) ?? fits[0];
}

/** The lean client of target `name`, or undefined (unknown target, or one that declares lean unsupported). */
export const leanClientFor = (name: string): ((opts: ClientOptions) => LeanClient) | undefined => findTarget(name)?.createLeanClient;

export const LEAN_TARGETS: readonly string[] = TARGET_NAMES.filter((n) => leanClientFor(n));

/** A client whose target relays client-to-client messages. */
export type WhisperClient = TargetClient & { whisper(data: Record<string, unknown>): void };

/** The whisper-capable client of target `name`, or undefined when its protocol has no client-to-client messages. */
export function whisperClientFor(name: string): ((opts: ClientOptions) => WhisperClient) | undefined {
  const t = findTarget(name);
  const c = t && pickClient(t, { needs: { whispers: true } });
  return c && ((o) => c.create(o) as WhisperClient);
}

export const WHISPER_TARGETS: readonly string[] = TARGET_NAMES.filter((n) => whisperClientFor(n));

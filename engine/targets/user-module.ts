import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Emitter } from '../../lib/emitter.ts';
import { ReboundError } from '../../lib/errors.ts';
import type { OptionTable } from '../../lib/options.ts';
import { findTarget, registerTargets } from './index.ts';
import { LeanProtocolFault } from './lean-client.ts';
import { defineTarget, type ArrivedMessage, type ClientEvents, type ClientOptions, type DisconnectReason, type TargetClient, type TargetDefinition } from './contract.ts';

/**
 * A user's target file (`--target-module ./my-target.ts`, or the runner service's
 * TARGET_MODULES): loaded once, its default export checked against the contract
 * (engine/targets/contract.ts, docs/targets.md) with an error naming the file and the field, then
 * wrapped so that a fault of its hooks at run time (a throw, a connect() that never settles, a
 * garbage arrival) is contained, counted per client and reported as the TARGET_MODULE_FAULT
 * validity flag naming the file: the runner goes on, the run is marked invalid.
 */

/** The one declaration of the option; the CLIs read it from argv/env, the runner service from TARGET_MODULES. */
export const TARGET_MODULE_OPTIONS = {
  targetModule: { type: 'optional-string', default: undefined, env: ['TARGET_MODULE'], doc: 'a target file of your own (TypeScript or JavaScript, default export; docs/targets.md); its target becomes the default --target' },
} as const satisfies OptionTable;

/** A user's hook that does not settle connect() (or reconnect()) in this long has a fault: under the ramp's 20 s connect timeout, so the fault is named before a bare timeout is booked. */
export const HOOK_SETTLE_MS = 15_000;
/** Largest target file read (a target is one small file; anything bigger is not one). */
const MAX_MODULE_BYTES = 1_048_576;
/** Largest arrival `data` taken from a user's client (the run's payloads are at most 64 KiB of padding). */
const MAX_ARRIVAL_CHARS = 4_194_304;
/** An arrival stamped further than this from the runner's clock is not `Date.now()` at receipt. */
const MAX_ARRIVAL_SKEW_MS = 60_000;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const DECLARATION_KEYS = new Set(['name', 'description', 'offlineFloorMs', 'capabilities', 'service', 'unavailable', 'needsRedis', 'noWorkers', 'ownBackoff', 'createClient', 'createLeanClient', 'leanUnsupported', 'publish', 'reconnect', 'replays']);
const CAPABILITY_KEYS = new Set(['reconnect', 'resume', 'offsets', 'epochs', 'whispers', 'library']);
const DISCONNECT_REASONS: ReadonlySet<string> = new Set<DisconnectReason>(['dropped', 'server_closed', 'transport_error', 'closed']);

const invalid = (file: string, field: string, why: string) => new ReboundError('RR_ERR_TARGET_MODULE_INVALID', `target module ${file}: ${field} ${why} (docs/targets.md)`, { details: { file, hook: field } });
const describe = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'string' ? `the string ${JSON.stringify(v.slice(0, 40))}` : typeof v);
const text = (err: unknown): string => (err instanceof Error ? err.message : String(err)).replace(CONTROL, ' ').slice(0, 200);

/** A plain string field: present, bounded, no control characters. */
function str(file: string, field: string, v: unknown, max: number): string {
  if (typeof v !== 'string' || v.length === 0) throw invalid(file, field, `must be a non-empty string (got ${describe(v)})`);
  if (v.length > max) throw invalid(file, field, `must be at most ${max} characters (got ${v.length})`);
  if (CONTROL.test(v)) throw invalid(file, field, 'must not contain control characters');
  return v;
}

function fn(file: string, field: string, v: unknown): void {
  if (typeof v !== 'function') throw invalid(file, field, `must be a function (got ${describe(v)})`);
}

function oneOf<T extends string>(file: string, field: string, v: unknown, values: readonly T[]): T {
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) throw invalid(file, field, `must be one of ${values.map((x) => `'${x}'`).join(', ')} (got ${describe(v)})`);
  return v as T;
}

/**
 * The default export checked against the contract, field by field: an unknown field is refused
 * (a typo such as `createclient` would otherwise leave a hook silently missing).
 */
export function checkTargetShape(x: unknown, file: string): TargetDefinition {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) throw invalid(file, 'the default export', `must be a target object (defineTarget({...})); got ${describe(x)}`);
  const d = x as Record<string, unknown>;
  for (const k of Object.keys(d)) if (!DECLARATION_KEYS.has(k)) throw invalid(file, `field "${k.slice(0, 40)}"`, `is not part of the contract; known: ${[...DECLARATION_KEYS].join(', ')}`);
  const name = str(file, 'name', d.name, 64);
  if (!NAME.test(name)) throw invalid(file, 'name', `must be letters, digits, . _ - (at most 64, starting with a letter or digit); got ${JSON.stringify(name)}`);
  str(file, 'description', d.description, 500);
  if (typeof d.offlineFloorMs !== 'number' || !Number.isInteger(d.offlineFloorMs) || d.offlineFloorMs < 0 || d.offlineFloorMs > 60_000) throw invalid(file, 'offlineFloorMs', `must be an integer of ms in 0..60000 (got ${describe(d.offlineFloorMs)})`);
  const caps = d.capabilities as Record<string, unknown> | null;
  if (typeof caps !== 'object' || caps === null) throw invalid(file, 'capabilities', `must be an object (got ${describe(caps)})`);
  for (const k of Object.keys(caps)) if (!CAPABILITY_KEYS.has(k)) throw invalid(file, `capabilities.${k.slice(0, 40)}`, `is not a capability; known: ${[...CAPABILITY_KEYS].join(', ')}`);
  const reconnect = oneOf(file, 'capabilities.reconnect', caps.reconnect, ['manual', 'library']);
  const resume = oneOf(file, 'capabilities.resume', caps.resume, ['none', 'session', 'history']);
  for (const k of ['offsets', 'epochs', 'whispers'] as const) if (typeof caps[k] !== 'boolean') throw invalid(file, `capabilities.${k}`, `must be true or false (got ${describe(caps[k])})`);
  str(file, 'capabilities.library', caps.library, 64);
  if (d.reconnect !== undefined && d.reconnect !== reconnect) throw invalid(file, 'reconnect', `says ${describe(d.reconnect)} but capabilities.reconnect says '${reconnect}' (defineTarget derives it: leave it out)`);
  if (d.replays !== undefined && d.replays !== (resume !== 'none')) throw invalid(file, 'replays', `must be ${resume !== 'none'} with capabilities.resume '${resume}' (defineTarget derives it: leave it out)`);
  fn(file, 'createClient', d.createClient);
  if (d.createLeanClient !== undefined && d.leanUnsupported !== undefined) throw invalid(file, 'createLeanClient', 'and leanUnsupported exclude each other: declare a lean client or say why there is none');
  if (d.createLeanClient !== undefined) fn(file, 'createLeanClient', d.createLeanClient);
  else str(file, 'leanUnsupported', d.leanUnsupported, 500);
  if (d.publish !== undefined) checkPublish(file, d.publish);
  if (d.service !== undefined) {
    const s = d.service as { name?: unknown; args?: unknown } | null;
    oneOf(file, 'service.name', s?.name, ['ws', 'uws', 'socketio', 'replay', 'soketi']);
    if (!Array.isArray(s?.args) || s.args.length > 16 || !s.args.every((a) => typeof a === 'string' && a.length <= 256 && !CONTROL.test(a))) throw invalid(file, 'service.args', 'must be at most 16 strings');
  }
  if (d.unavailable !== undefined) fn(file, 'unavailable', d.unavailable);
  if (d.needsRedis !== undefined && typeof d.needsRedis !== 'boolean') throw invalid(file, 'needsRedis', `must be true or false (got ${describe(d.needsRedis)})`);
  if (d.noWorkers !== undefined) str(file, 'noWorkers', d.noWorkers, 500);
  if (d.ownBackoff !== undefined) str(file, 'ownBackoff', d.ownBackoff, 500);
  if (findTarget(name)) throw invalid(file, 'name', `"${name}" is already a registered target: choose another name`);
  const { reconnect: _r, replays: _p, ...declaration } = d;
  return defineTarget(declaration as Parameters<typeof defineTarget>[0]);
}

function checkPublish(file: string, p: unknown): void {
  if (typeof p !== 'object' || p === null) throw invalid(file, 'publish', `must be { request(m, ctx) } or { send(m, ctx) } (got ${describe(p)})`);
  const o = p as Record<string, unknown>;
  const has = (k: string) => o[k] !== undefined;
  if (has('request') === has('send')) throw invalid(file, 'publish', 'must have exactly one of request(m, ctx) (an HTTP request) or send(m, ctx) (a function)');
  if (has('request')) {
    fn(file, 'publish.request', o.request);
    if (has('acceptStatus') && (!Array.isArray(o.acceptStatus) || o.acceptStatus.length === 0 || o.acceptStatus.length > 16 || !o.acceptStatus.every((s) => Number.isInteger(s) && s >= 100 && s <= 599))) throw invalid(file, 'publish.acceptStatus', 'must be 1..16 HTTP statuses (100..599)');
    if (has('mayBeStored')) fn(file, 'publish.mayBeStored', o.mayBeStored);
    for (const k of Object.keys(o)) if (!['request', 'acceptStatus', 'mayBeStored'].includes(k)) throw invalid(file, `publish.${k.slice(0, 40)}`, 'is not part of a request publish (request, acceptStatus, mayBeStored)');
  } else {
    fn(file, 'publish.send', o.send);
    for (const k of Object.keys(o)) if (k !== 'send') throw invalid(file, `publish.${k.slice(0, 40)}`, 'is not part of a function publish (send)');
  }
}

/**
 * Loads `path` (resolved against `cwd`) and checks its default export. Bad input, never a crash:
 * a missing or oversized file and an import that throws are RR_ERR_TARGET_MODULE_LOAD, a wrong
 * shape RR_ERR_TARGET_MODULE_INVALID; both name the file.
 */
export async function loadTargetModule(path: string, cwd = process.cwd()): Promise<TargetDefinition> {
  const file = path;
  const full = isAbsolute(path) ? path : resolve(cwd, path);
  const loadError = (why: string) => new ReboundError('RR_ERR_TARGET_MODULE_LOAD', `target module ${file}: ${why}`, { details: { file } });
  if (!/\.(?:[cm]?ts|[cm]?js)$/.test(full)) throw loadError('must be a .ts or .js file');
  const st = await stat(full).catch(() => undefined);
  if (!st?.isFile()) throw loadError('no such file');
  if (st.size > MAX_MODULE_BYTES) throw loadError(`is ${st.size} bytes, more than a target file's ${MAX_MODULE_BYTES}`);
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(full).href)) as { default?: unknown };
  } catch (err) {
    throw loadError(`failed to load: ${text(err)}`);
  }
  if (mod.default === undefined) throw invalid(file, 'the default export', 'is missing: `export default defineTarget({...})`');
  return guardTarget(checkTargetShape(mod.default, file), file);
}

/** The env var naming this process's target files (comma-separated); children inherit it. */
export const TARGET_MODULES_ENV = 'TARGET_MODULES';
/** At most this many target files per process. */
const MAX_MODULES = 16;

/**
 * Loads `paths` and makes their targets resolvable by name in this process (registerTargets),
 * and records their absolute paths in TARGET_MODULES so the runner's child processes (jitter and
 * idle workers, capacity loaders) load the same files (registerEnvTargetModules).
 */
export async function registerTargetModules(paths: readonly string[], env: Record<string, string | undefined> = process.env): Promise<TargetDefinition[]> {
  if (paths.length > MAX_MODULES) throw new ReboundError('RR_ERR_OPTION_INVALID', `at most ${MAX_MODULES} target modules (got ${paths.length})`, { details: { option: TARGET_MODULES_ENV } });
  // Each file in order; a name given twice (two files, one target name) is refused.
  const defs: TargetDefinition[] = [];
  for (const p of paths) {
    const t = await loadTargetModule(p);
    if (defs.some((o) => o.name === t.name)) throw invalid(p, 'name', `"${t.name}" is also the name of an earlier module's target`);
    defs.push(t);
  }
  registerTargets(defs);
  env[TARGET_MODULES_ENV] = paths.map((p) => (isAbsolute(p) ? p : resolve(p))).join(',');
  return defs;
}

/** The files TARGET_MODULES names (the runner service's operator list; a child process's inheritance), registered. */
export function registerEnvTargetModules(env: Record<string, string | undefined> = process.env): Promise<TargetDefinition[]> {
  const list = (env[TARGET_MODULES_ENV] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  return list.length ? registerTargetModules(list, env) : Promise.resolve([]);
}

/**
 * registerEnvTargetModules in a child process (runner workers, capacity loaders, deploy-impact's
 * publisher), started as the process starts: a failure is reported with the parent's message that
 * needs the files (that message's handler awaits this and sends the error), not as an unhandled
 * rejection before that message arrives.
 */
export function childTargetModules(): Promise<TargetDefinition[]> {
  const loaded = registerEnvTargetModules();
  loaded.catch(() => undefined);
  return loaded;
}

/** One fault kind of a user's hook: how often, and the first occurrence's words. */
export interface HookFault {
  hook: string;
  count: number;
  sample: string;
}

/** What a run saw of a user's target file: the file and its hooks' faults (none: the file behaved). */
export interface TargetModuleReport {
  file: string;
  faults: HookFault[];
}

/** At most this many fault kinds are kept per client (each kind is one hook and one rule it broke). */
const MAX_FAULT_KINDS = 16;

class FaultBook {
  /** Made on the first fault: a run holds a book per client, tens of thousands of them for lean clients. */
  private kinds: Map<string, HookFault> | undefined;
  constructor(readonly file: string) {}
  get faults(): ReadonlyMap<string, HookFault> {
    return this.kinds ?? new Map();
  }
  add(hook: string, why: string): void {
    this.kinds ??= new Map();
    const f = this.kinds.get(hook);
    if (f) f.count++;
    else if (this.kinds.size < MAX_FAULT_KINDS) this.kinds.set(hook, { hook, count: 1, sample: why.slice(0, 200) });
  }
}

/** The guarded clients' books, by client: a run reads its own clients' faults, never another run's. */
const BOOKS = new WeakMap<object, FaultBook>();

/** Faults of several books (a run's clients, a fleet's shards) by hook: counts summed, the first sample kept. */
function addFaults(lists: Iterable<Iterable<HookFault>>): HookFault[] {
  const merged = new Map<string, HookFault>();
  for (const list of lists) {
    for (const f of list) {
      const m = merged.get(f.hook);
      if (m) m.count += f.count;
      else merged.set(f.hook, { ...f });
    }
  }
  return [...merged.values()];
}

/**
 * The faults of a run's clients when they are a user module's (undefined for a built-in target):
 * counts summed per hook, the first sample kept.
 */
export function targetModuleReport(clients: readonly object[]): TargetModuleReport | undefined {
  const books = clients.map((c) => BOOKS.get(c)).filter((b): b is FaultBook => b !== undefined);
  return books.length ? { file: books[0]!.file, faults: addFaults(books.map((b) => b.faults.values())) } : undefined;
}

/** `{ targetModule }` when there is a report, else nothing (a built-in target's result has no such field). */
const asField = (targetModule: TargetModuleReport | undefined): { targetModule?: TargetModuleReport } => (targetModule ? { targetModule } : {});

/** `{ targetModule }` for a result when the clients are a user module's, else nothing. */
export const targetModuleField = (clients: readonly object[]): { targetModule?: TargetModuleReport } => asField(targetModuleReport(clients));

/** Longest path a report may name (a shard's answer is bounded field by field before it is merged). */
const MAX_FILE_CHARS = 4096;

/**
 * Why a shard's `targetModule` is not a report this tree writes (the coordinator's schema), or
 * undefined: a file, at most MAX_FAULT_KINDS faults, each a short hook, an integer count >= 0 and
 * its sample of at most 200 characters.
 */
export function targetModuleProblem(v: unknown): string | undefined {
  const r = v as { file?: unknown; faults?: unknown } | null;
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return 'targetModule is not an object';
  if (typeof r.file !== 'string' || !r.file || r.file.length > MAX_FILE_CHARS) return `targetModule.file is not a path of 1..${MAX_FILE_CHARS} characters`;
  if (!Array.isArray(r.faults) || r.faults.length > MAX_FAULT_KINDS) return `targetModule.faults is not a list of at most ${MAX_FAULT_KINDS} faults`;
  for (const f of r.faults as { hook?: unknown; count?: unknown; sample?: unknown }[]) {
    if (typeof f !== 'object' || f === null) return 'targetModule.faults holds a non-object';
    if (typeof f.hook !== 'string' || f.hook.length > 64) return 'targetModule.faults[].hook is not a string of at most 64 characters';
    if (!Number.isSafeInteger(f.count) || (f.count as number) < 0) return `targetModule.faults[].count ${JSON.stringify(f.count)} is not an integer >= 0`;
    if (typeof f.sample !== 'string' || f.sample.length > 200) return 'targetModule.faults[].sample is not a string of at most 200 characters';
  }
  return undefined;
}

/** Several runs' reports (a fleet's shards, each screened by targetModuleProblem) as one: the files named once, faults summed by hook. */
export function mergeTargetModuleReports(reports: readonly TargetModuleReport[]): TargetModuleReport | undefined {
  if (!reports.length) return undefined;
  return { file: [...new Set(reports.map((r) => r.file))].join(', '), faults: addFaults(reports.map((r) => r.faults)) };
}

/** Worker processes' reports (idle workers' tallies, capacity loaders' steps) as one; a value that is not a report this tree writes is left out, as a shard's would be. */
export function mergeChildReports(values: readonly unknown[]): TargetModuleReport | undefined {
  return mergeTargetModuleReports(values.filter((v): v is TargetModuleReport => v !== undefined && targetModuleProblem(v) === undefined));
}

/**
 * A worker process's faults over every client it made: a client whose connect failed is dropped,
 * so its faults are folded in at once; the clients still held are read at the end.
 */
export class ClientFaults {
  private failed: TargetModuleReport | undefined;

  dropped(client: object): void {
    const r = targetModuleReport([client]);
    if (r) this.failed = mergeTargetModuleReports(this.failed ? [this.failed, r] : [r]);
  }

  /** `{ targetModule }` for a message, or nothing for a built-in target's clients. */
  field(held: readonly object[]): { targetModule?: TargetModuleReport } {
    return asField(mergeTargetModuleReports([targetModuleReport(held), this.failed].filter((r): r is TargetModuleReport => r !== undefined)));
  }
}

/**
 * `def` with every hook of its full client contained: a throw, a connect() or reconnect() that
 * does not settle within `settleMs`, an arrival or event that breaks the contract are booked
 * as faults of the client (targetModuleReport) and never reach the runner as anything but a
 * failed connect or a dropped event. Its publish hooks' errors name the file.
 */
export function guardTarget(def: TargetDefinition, file: string, settleMs = HOOK_SETTLE_MS): TargetDefinition {
  const publish = def.publish;
  /** `f()`, or its throw as an error naming the file and the hook. */
  const named = <T>(hook: string, f: () => T): T => {
    try {
      return f();
    } catch (err) {
      throw new Error(`target module ${file}: ${hook} threw: ${text(err)}`);
    }
  };
  const guardedPublish: TargetDefinition['publish'] = !publish
    ? undefined
    : 'request' in publish
      ? { ...publish, request: (m, ctx) => named('publish.request()', () => publish.request(m, ctx)) }
      : { send: (m, ctx) => Promise.resolve().then(() => publish.send(m, ctx)) };
  const lean = def.createLeanClient;
  return {
    ...def,
    createClient: (opts: ClientOptions) => new GuardedClient(def, opts, file, settleMs),
    ...(guardedPublish ? { publish: guardedPublish } : {}),
    ...(lean
      ? {
          createLeanClient: (opts: ClientOptions) => {
            const c = named('createLeanClient()', () => lean(opts));
            // A throwing LeanProtocol function fails its connection (lean-client.ts) and is booked here as the file's fault.
            if (typeof (c as { on?: unknown } | undefined)?.on === 'function') {
              const book = new FaultBook(file);
              BOOKS.set(c, book);
              c.on('error', (e) => LeanProtocolFault.is(e) && book.add(`lean ${e.hook}`, e.message));
            }
            return c;
          },
        }
      : {}),
  } as TargetDefinition;
}

/** A user's full client behind the contract's checks (see guardTarget). */
class GuardedClient implements TargetClient {
  readonly index: number;
  private readonly book: FaultBook;
  private readonly events = new Emitter<ClientEvents>();
  private readonly inner: TargetClient | undefined;
  private readonly caps: TargetDefinition['capabilities'];
  readonly whisper?: (data: Record<string, unknown>) => void;
  /**
   * What the run can see of the file's capability claims, a few counters per client: calls of
   * connect()/reconnect() not yet settled, whether one was made since the last disconnect, whether
   * it reconnected and ever saw a resume's answer, its arrivals and how many carried a position.
   */
  private pending = 0;
  private calledSinceDown = true;
  private reconnected = false;
  private resumeAnswered = false;
  private arrivals = 0;
  private withOffset = 0;
  private withEpoch = 0;
  private judged = false;

  constructor(def: TargetDefinition, opts: ClientOptions, file: string, private readonly settleMs: number) {
    this.index = opts.index;
    this.caps = def.capabilities;
    this.book = new FaultBook(file);
    BOOKS.set(this, this.book);
    let inner: TargetClient | undefined;
    try {
      inner = def.createClient(opts);
      for (const k of ['connect', 'drop', 'reconnect', 'close', 'on'] as const) {
        if (typeof (inner as unknown as Record<string, unknown> | undefined)?.[k] !== 'function') throw new Error(`the client has no ${k}() (got ${describe(inner)})`);
      }
      this.listen(inner!);
    } catch (err) {
      this.book.add('createClient()', text(err));
      inner = undefined;
    }
    this.inner = inner;
    if (def.capabilities.whispers) this.whisper = (data) => void this.call('whisper()', () => this.inner?.whisper?.(data));
  }

  private call<T>(hook: string, f: () => T): T | undefined {
    try {
      return f();
    } catch (err) {
      this.book.add(hook, `threw: ${text(err)}`);
      return undefined;
    }
  }

  /** One subscription per event on the user's client; what breaks the contract is booked and left out. */
  private listen(c: TargetClient): void {
    c.on('message', (m) => {
      const why = arrivalFault(m);
      if (why) return this.book.add('message event', why);
      this.arrivalClaims(m);
      this.events.emit('message', m);
    });
    c.on('connected', (info) => {
      if (typeof info?.resumed !== 'boolean' || !Number.isInteger(info.attempt) || info.attempt < 0) this.book.add('connected event', `expected { resumed: boolean, attempt: integer >= 0 }, got ${describe(info)}`);
      else this.connectedClaims(info);
      this.events.emit('connected', { resumed: info?.resumed === true, attempt: Number.isInteger(info?.attempt) && info.attempt >= 0 ? info.attempt : 0 });
    });
    c.on('disconnected', (info) => {
      const reason = info?.reason;
      this.calledSinceDown = false;
      if (typeof reason !== 'string' || !DISCONNECT_REASONS.has(reason)) this.book.add('disconnected event', `reason must be one of ${[...DISCONNECT_REASONS].join(', ')} (got ${describe(reason)})`);
      const detail = typeof info?.detail === 'string' ? info.detail.replace(CONTROL, ' ').slice(0, 200) : undefined;
      this.events.emit('disconnected', { reason: typeof reason === 'string' && DISCONNECT_REASONS.has(reason) ? (reason as DisconnectReason) : 'transport_error', ...(detail ? { detail } : {}) });
    });
    c.on('history', (info) => {
      if (typeof info?.ok !== 'boolean') return this.book.add('history event', `expected { ok: boolean }, got ${describe(info)}`);
      this.resumeAnswered = true;
      const reason = typeof info.reason === 'string' ? info.reason.replace(CONTROL, ' ').slice(0, 64) : undefined;
      this.events.emit('history', { ok: info.ok, ...(reason ? { reason } : {}) });
    });
    c.on('error', (err) => this.events.emit('error', err instanceof Error ? err : new Error(text(err))));
  }

  /**
   * An arrival against `offsets`/`epochs`: without whispers every arrival is the stream's and must
   * carry what is claimed; a whisper is relayed outside the stream and has no position, so with
   * whispers the claim is judged at close() over the client's arrivals (none positioned: a lie).
   */
  private arrivalClaims(m: ArrivedMessage): void {
    this.arrivals++;
    if (m.offset !== undefined) this.withOffset++;
    if (m.epoch !== undefined) this.withEpoch++;
    if (this.caps.whispers) return;
    if (this.caps.offsets && m.offset === undefined) this.book.add('capabilities.offsets', 'declared true, but an arrival came without an offset');
    if (this.caps.epochs && m.epoch === undefined) this.book.add('capabilities.epochs', 'declared true, but an arrival came without an epoch');
  }

  /**
   * A `connected` against `reconnect` and `resume`. A manual client is brought back only by the
   * runner's connect()/reconnect(): one that is connected again (attempt > 0) with no call in flight
   * and none made since its disconnect reconnected by itself.
   */
  private connectedClaims(info: { resumed: boolean; attempt: number }): void {
    if (info.resumed) this.resumeAnswered = true;
    if (info.attempt === 0) return;
    this.reconnected = true;
    if (this.caps.reconnect === 'manual' && this.pending === 0 && !this.calledSinceDown) this.book.add('capabilities.reconnect', `declared 'manual', but the client reconnected by itself (connected, attempt ${info.attempt}, with no connect() or reconnect() since its disconnect)`);
  }

  /**
   * The claims judged over the client's life, at its close. `resume: 'history'`: a history client
   * asks on every subscribe (AnyCable's since) and the server answers, ok or not; a client that
   * reconnected and never saw an answer nor a restored session does not speak it. Per reconnect it
   * would be ambiguous: the answer follows the replayed arrivals, and a drop may cut it off.
   * `resume: 'session'` is not judged: every `connected` carries its own outcome (resumed: false is
   * an expired session, a server's answer).
   */
  private lifeClaims(): void {
    if (this.judged) return;
    this.judged = true;
    if (this.caps.resume === 'history' && this.reconnected && !this.resumeAnswered) this.book.add('capabilities.resume', "declared 'history', but the client reconnected and saw no history answer and no restored session in its life");
    if (!this.caps.whispers || this.arrivals === 0) return;
    if (this.caps.offsets && this.withOffset === 0) this.book.add('capabilities.offsets', `declared true, but none of the client's ${this.arrivals} arrivals carried an offset`);
    if (this.caps.epochs && this.withEpoch === 0) this.book.add('capabilities.epochs', `declared true, but none of the client's ${this.arrivals} arrivals carried an epoch`);
  }

  on<E extends keyof ClientEvents>(event: E, f: ClientEvents[E]): () => void {
    return this.events.on(event, f);
  }

  connect(): Promise<void> {
    return this.settle('connect()', () => this.inner?.connect());
  }

  reconnect(): Promise<void> {
    return this.settle('reconnect()', () => this.inner?.reconnect());
  }

  /** The user's promise, held to the contract: it must be one, and it must settle within settleMs. */
  private settle(hook: string, start: () => Promise<void> | undefined): Promise<void> {
    if (!this.inner) return Promise.reject(new Error(`target module ${this.book.file}: createClient() failed`));
    let p: unknown;
    this.calledSinceDown = true;
    try {
      p = start();
    } catch (err) {
      this.book.add(hook, `threw: ${text(err)}`);
      return Promise.reject(new Error(`target module ${this.book.file}: ${hook} threw: ${text(err)}`));
    }
    if (typeof (p as { then?: unknown } | undefined)?.then !== 'function') {
      this.book.add(hook, `must return a Promise (got ${describe(p)})`);
      return Promise.reject(new Error(`target module ${this.book.file}: ${hook} did not return a Promise`));
    }
    this.pending++;
    return new Promise<void>((res, rej) => {
      const timer = setTimeout(() => {
        this.book.add(hook, `did not settle within ${this.settleMs} ms (a target times out its own handshake)`);
        rej(new Error(`target module ${this.book.file}: ${hook} did not settle within ${this.settleMs} ms`));
      }, this.settleMs);
      timer.unref();
      (p as Promise<void>).then(
        () => (this.pending--, clearTimeout(timer), res()),
        (err: unknown) => (this.pending--, clearTimeout(timer), rej(err instanceof Error ? err : new Error(text(err)))),
      );
    });
  }

  drop(): boolean {
    return this.call('drop()', () => this.inner?.drop()) === true;
  }

  close(): void {
    this.lifeClaims();
    this.call('close()', () => this.inner?.close());
  }
}

/** Why an arrival breaks the contract (docs/targets.md "Arrivals"), or undefined when it holds. */
function arrivalFault(m: ArrivedMessage | undefined): string | undefined {
  if (typeof m !== 'object' || m === null) return `an arrival must be { data, at, offset?, epoch? } (got ${describe(m)})`;
  let data: unknown;
  try {
    data = m.data;
  } catch (err) {
    return `reading data threw: ${text(err)}`;
  }
  if (typeof data !== 'string') return `data must be the published string (got ${describe(data)})`;
  if (data.length > MAX_ARRIVAL_CHARS) return `data is ${data.length} characters, more than ${MAX_ARRIVAL_CHARS}`;
  if (typeof m.at !== 'number' || !Number.isFinite(m.at) || Math.abs(m.at - Date.now()) > MAX_ARRIVAL_SKEW_MS) return `at must be Date.now() at receipt, in ms (got ${describe(m.at)}${typeof m.at === 'number' ? ` ${m.at}` : ''})`;
  if (m.offset !== undefined && (!Number.isSafeInteger(m.offset) || m.offset < 0)) return `offset must be an integer >= 0 when given (got ${describe(m.offset)})`;
  if (m.epoch !== undefined && (typeof m.epoch !== 'string' || m.epoch.length > 256)) return `epoch must be a string of at most 256 characters when given (got ${describe(m.epoch)})`;
  return undefined;
}

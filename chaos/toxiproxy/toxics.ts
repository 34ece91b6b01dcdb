import { apiErrors } from './errors.ts';
import { TOXIC_TYPES, type Direction, type ToxicJson, type ToxicType } from './types.ts';

/**
 * Toxic registry: attribute names with their zero defaults (what Toxiproxy's Go structs hold when
 * `attributes` is omitted) and the range checks Toxiproxy lacks. Go crashes on a negative
 * bandwidth rate or a slicer average_size of 0; we answer 400 instead, and we also refuse
 * negative durations and toxicity outside 0..1 (docs/chaos-proxy.md lists these deviations).
 */
interface AttributeSpec {
  min: number;
  /** Largest value honoured; more is refused rather than silently misbehaving. */
  max?: number;
  /** Unit, for the error message. */
  unit: string;
}
/**
 * Node clamps a timer above 2^31-1 ms to 1 ms (TimeoutOverflowWarning): a `timeout` of 3e9 ms
 * would fire at once and a `latency` of 3e9 ms would spin a 1 ms timer forever. Durations above
 * it (~24.8 days) are refused, so what is accepted is what happens.
 */
const MAX_TIMER_MS = 2_147_483_647;
const DURATION_MS: AttributeSpec = { min: 0, max: MAX_TIMER_MS, unit: 'ms' };

export const TOXIC_ATTRIBUTES = {
  latency: { latency: DURATION_MS, jitter: DURATION_MS },
  bandwidth: { rate: { min: 0, unit: 'KB/s' } },
  slow_close: { delay: DURATION_MS },
  timeout: { timeout: DURATION_MS },
  reset_peer: { timeout: DURATION_MS },
  // The slicer pays its µs delay in whole ms, so the same timer bound applies after the division.
  slicer: { average_size: { min: 1, unit: 'bytes' }, size_variation: { min: 0, unit: 'bytes' }, delay: { min: 0, max: MAX_TIMER_MS * 1000, unit: 'µs' } },
  limit_data: { bytes: { min: 0, unit: 'bytes' } },
  noop: {},
} as const satisfies Record<ToxicType, Record<string, AttributeSpec>>;

const isToxicType = (t: unknown): t is ToxicType => typeof t === 'string' && (TOXIC_TYPES as readonly string[]).includes(t);

/** A toxic as the collection stores it (its JSON and the stream's direction); live links read `attributes` and `toxicity` on every (re)run. */
export interface ToxicRecord extends ToxicJson {
  direction: Direction;
}

export function toxicJson(t: ToxicRecord): ToxicJson {
  return { attributes: { ...t.attributes }, name: t.name, type: t.type, stream: t.stream, toxicity: t.toxicity };
}

const defaultAttributes = (type: ToxicType): Record<string, number> => Object.fromEntries(Object.keys(TOXIC_ATTRIBUTES[type]).map((k) => [k, 0]));

/** Go's encoding/json matches keys case-insensitively; an exact match wins. */
export function field(obj: Record<string, unknown>, key: string): unknown {
  if (key in obj) return obj[key];
  const lower = key.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lower) return obj[k];
  return undefined;
}

export const goType = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v === 'boolean' ? 'bool' : typeof v);
export const cannotUnmarshal = (what: string, into: string) => apiErrors.badBody(`json: cannot unmarshal ${what} into Go ${into}`);

/** A JSON value Go decodes into a struct (`into` names it): null decodes to nothing (null here), any other non-object is Go's error. */
export function decodeObject(v: unknown, into: string): Record<string, unknown> | null {
  if (v !== null && (typeof v !== 'object' || Array.isArray(v))) throw cannotUnmarshal(goType(v), into);
  return v as Record<string, unknown> | null;
}

/**
 * One key of `obj` Go decodes into a typed struct field (`into`: `Struct.key of type T`): absent or
 * null keeps `current`; a value `ok` refuses is Go's error, showing the value as `shown` does.
 */
export function decodeField<T>(obj: Record<string, unknown>, key: string, current: T, ok: (v: unknown) => v is T, into: string, shown: (v: unknown) => string = goType): T {
  const v = field(obj, key);
  if (v === undefined || v === null) return current;
  if (!ok(v)) throw cannotUnmarshal(shown(v), `struct field ${into}`);
  return v;
}

/**
 * Merge `raw` (the body's `attributes`) into `base`, like Go decoding into the existing struct:
 * unknown keys and nulls are ignored, non-integers are a 400. Returns a new object; validates the
 * merged result so an update cannot sneak a bad value past create-time checks.
 */
function mergeAttributes(type: ToxicType, base: Record<string, number>, raw: unknown): Record<string, number> {
  const out = { ...base };
  const obj = decodeObject(raw ?? null, `struct field .attributes of type toxics.${type}`) ?? {};
  const shown = (v: unknown) => (typeof v === 'number' ? `number ${v}` : goType(v));
  for (const key of Object.keys(TOXIC_ATTRIBUTES[type])) {
    out[key] = decodeField(obj, key, out[key]!, (v): v is number => Number.isSafeInteger(v), `.attributes.${key} of type int64`, shown);
  }
  return validate(type, out);
}

function validate(type: ToxicType, attrs: Record<string, number>): Record<string, number> {
  for (const [key, spec] of Object.entries<AttributeSpec>(TOXIC_ATTRIBUTES[type])) {
    const v = attrs[key] ?? 0;
    if (v < spec.min) throw apiErrors.badBody(`attribute ${key} of ${type} must be >= ${spec.min} ${spec.unit} (got ${v})`);
    if (spec.max !== undefined && v > spec.max) throw apiErrors.badBody(`attribute ${key} of ${type} must be <= ${spec.max} ${spec.unit} (got ${v})`);
  }
  // One latency stage waits latency + jitter at most: the sum must fit one timer too.
  if (type === 'latency' && (attrs.latency ?? 0) + (attrs.jitter ?? 0) > MAX_TIMER_MS) {
    throw apiErrors.badBody(`attributes latency + jitter of latency must be <= ${MAX_TIMER_MS} ms (got ${(attrs.latency ?? 0) + (attrs.jitter ?? 0)})`);
  }
  return attrs;
}

/** Toxicity: a JSON number in 0..1 (Toxiproxy stores any float32; we refuse values that cannot be a probability). */
function parseToxicity(obj: Record<string, unknown>, current: number): number {
  const v = decodeField(obj, 'toxicity', current, (v): v is number => typeof v === 'number' && Number.isFinite(v), '.toxicity of type float32');
  if (v < 0 || v > 1) throw apiErrors.badBody(`toxicity must be between 0 and 1 (got ${v})`);
  return v;
}

export const parseString = (obj: Record<string, unknown>, key: string, fallback: string, goStruct: string) =>
  decodeField(obj, key, fallback, (v): v is string => typeof v === 'string', `${goStruct}.${key} of type string`);

/**
 * `POST /proxies/{p}/toxics` body → record, in Toxiproxy's exact check order (toxic_collection.go
 * AddToxicJson): body, stream, default name, type, duplicate name (via `exists`), attributes.
 */
export function parseToxicCreate(body: unknown, exists: (name: string) => boolean): ToxicRecord {
  const obj = decodeObject(body, 'value of type toxics.ToxicWrapper') ?? {};
  const stream = parseString(obj, 'stream', 'downstream', 'ToxicWrapper');
  const typeRaw = parseString(obj, 'type', '', 'ToxicWrapper');
  let name = parseString(obj, 'name', '', 'ToxicWrapper');
  const toxicity = parseToxicity(obj, 1);
  const lower = stream.toLowerCase();
  if (lower !== 'upstream' && lower !== 'downstream') throw apiErrors.invalidStream();
  if (name === '') name = `${typeRaw}_${stream}`;
  if (!isToxicType(typeRaw)) throw apiErrors.invalidToxicType();
  if (exists(name)) throw apiErrors.toxicExists();
  const attributes = mergeAttributes(typeRaw, defaultAttributes(typeRaw), field(obj, 'attributes'));
  return { name, type: typeRaw, stream, direction: lower, toxicity, attributes };
}

/** `POST|PATCH /proxies/{p}/toxics/{t}`: merge attributes, replace toxicity if present; name/type/stream ignored. */
export function parseToxicUpdate(body: unknown, current: ToxicRecord): Pick<ToxicRecord, 'attributes' | 'toxicity'> {
  const obj = decodeObject(body, 'value of type struct { Attributes interface {} "json:\\"attributes\\""; Toxicity float32 "json:\\"toxicity\\"" }') ?? {};
  return {
    attributes: mergeAttributes(current.type, current.attributes, field(obj, 'attributes')),
    toxicity: parseToxicity(obj, current.toxicity),
  };
}


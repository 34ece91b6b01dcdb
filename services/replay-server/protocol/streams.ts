import { createHmac, timingSafeEqual } from 'node:crypto';
import { PUBSUB_CHANNEL } from './types.ts';

/**
 * `$pubsub` identifier → stream resolution, and Rails `ActiveSupport::MessageVerifier` signed
 * stream names (SHA256, JSON serializer): `base64(JSON(name)) + "--" + hex(HMAC-SHA256(secret, base64part))`.
 */

export function signStreamName(name: string, secret: string): string {
  const encoded = Buffer.from(JSON.stringify(name)).toString('base64');
  return `${encoded}--${createHmac('sha256', secret).update(encoded).digest('hex')}`;
}

/** The stream name inside a signed name, or undefined when the signature or payload is bad. */
export function verifySignedStreamName(signed: string, secret: string): string | undefined {
  if (!secret) return undefined;
  const parts = signed.split('--');
  if (parts.length !== 2) return undefined;
  const [encoded, digest] = parts as [string, string];
  const want = Buffer.from(createHmac('sha256', secret).update(encoded).digest('hex'));
  const given = Buffer.from(digest);
  if (given.length !== want.length || !timingSafeEqual(given, want)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
    return typeof v === 'string' && v.length > 0 ? v : undefined;
  } catch {
    return undefined;
  }
}

export interface StreamPolicy {
  /** Accept unsigned `stream_name`. */
  publicStreams: boolean;
  /** Secret for `signed_stream_name`; empty disables signed streams. */
  streamsSecret: string;
  /** Allow whispers on signed streams. */
  streamsWhisper: boolean;
  /** Allow whispers on public streams (anycable-go always does). @default true */
  publicWhispers?: boolean;
  /** Longest accepted stream name. */
  maxStreamLength: number;
}

export interface ResolvedStream {
  stream: string;
  whisper: boolean;
}

/**
 * Resolve identifiers with a small cache: 10,000 subscribers of one signed stream cost one HMAC,
 * not 10,000. The cache is cleared when it reaches `cacheSize` (cheap, and bounded).
 */
export function createStreamResolver(policy: StreamPolicy, cacheSize = 10_000) {
  const cache = new Map<string, ResolvedStream | null>();
  const resolveUncached = (identifier: string): ResolvedStream | null => {
    let v: unknown;
    try {
      v = JSON.parse(identifier);
    } catch {
      return null;
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
    const o = v as Record<string, unknown>;
    if (o.channel !== PUBSUB_CHANNEL) return null;
    const ok = (s: unknown): s is string => typeof s === 'string' && s.length > 0 && s.length <= policy.maxStreamLength;
    if (o.stream_name !== undefined) {
      return policy.publicStreams && ok(o.stream_name) && o.signed_stream_name === undefined ? { stream: o.stream_name, whisper: policy.publicWhispers ?? true } : null;
    }
    if (typeof o.signed_stream_name === 'string') {
      const name = verifySignedStreamName(o.signed_stream_name, policy.streamsSecret);
      return ok(name) ? { stream: name, whisper: policy.streamsWhisper } : null;
    }
    return null;
  };
  return (identifier: string): ResolvedStream | null => {
    const hit = cache.get(identifier);
    if (hit !== undefined) return hit;
    const r = resolveUncached(identifier);
    if (cache.size >= cacheSize) cache.clear();
    cache.set(identifier, r);
    return r;
  };
}
export type StreamResolver = ReturnType<typeof createStreamResolver>;

import { inflateSync } from 'node:zlib';

/**
 * A shard's `latencyHistogram` read without hdr-histogram-js: the compressed V2 envelope and its
 * header parsed here, the run-length-encoded counts summed, and every figure held to limits
 * before the library sees a byte. The library trusts its input: a 68-character histogram whose
 * payload claims a zero run of 10^12 buckets keeps its decoder in a synchronous loop for that
 * many steps (and a payload length beyond the data reads past the end the same way), which would
 * stop the coordinator with every healthy shard's result. After this check the library's work is
 * bounded by MAX_COUNTS_LENGTH; the decode itself still runs on a worker under a deadline
 * (histogram-decode.ts), for a defect this check does not foresee.
 */

/** V2 cookies as hdr-histogram-js and HdrHistogram (Java) write them (word size nibble 0x10: LEB128 ZigZag). */
const COMPRESSED_COOKIE = 0x1c849314;
const ENCODING_COOKIE = 0x1c849313;
const HEADER_BYTES = 40;
/**
 * Buckets a histogram may declare. The runners' layout (1 µs .. 1 h, 3 digits) has 23,552; 3
 * digits over the whole 2^53 range about 46,000. 2^18 (1 MiB as the library's Int32 counts) is room.
 */
export const MAX_COUNTS_LENGTH = 2 ** 18;
/** A word is at most 9 bytes and each one fills at least one bucket: the most a valid payload inflates to. */
const MAX_INFLATED = HEADER_BYTES + 9 * MAX_COUNTS_LENGTH;
/** The library's counts are Int32 (bitBucketSize 32): a bigger bucket would wrap. */
const MAX_BUCKET_COUNT = 2 ** 31 - 1;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The counts array length hdr-histogram-js allocates for this layout (JsHistogram's constructor, same arithmetic). */
export function countsLength(lowest: number, highest: number, digits: number): number {
  const subBucketCountMagnitude = Math.ceil(Math.log2(2 * 10 ** digits));
  const subBucketCount = 2 ** Math.max(subBucketCountMagnitude, 1);
  let untrackable = subBucketCount * 2 ** Math.floor(Math.log2(lowest));
  let buckets = 1;
  while (untrackable <= highest) {
    if (untrackable > Number.MAX_SAFE_INTEGER / 2) {
      buckets++;
      break;
    }
    untrackable *= 2;
    buckets++;
  }
  return (buckets + 1) * (subBucketCount / 2);
}

/**
 * Why this encoded histogram must not reach the decoder, or undefined when it may: it decodes in
 * at most MAX_COUNTS_LENGTH steps and holds exactly `count` samples. Never throws.
 */
export function histogramEnvelopeProblem(b64: string, count: number): string | undefined {
  const bad = (why: string) => `latencyHistogram does not decode: ${why}`;
  const trimmed = b64.trim();
  if (trimmed.length > Math.ceil(((MAX_INFLATED + 1024) * 4) / 3)) return bad(`${trimmed.length} base64 characters, more than any histogram of at most ${MAX_COUNTS_LENGTH} buckets`);
  if (trimmed.length % 4 !== 0 || !BASE64.test(trimmed)) return bad('not base64');
  const data = Buffer.from(trimmed, 'base64');
  if (data.length < 8) return bad(`${data.length} bytes, shorter than the compressed envelope`);
  const cookie = data.readUInt32BE(0);
  if (cookie !== COMPRESSED_COOKIE) return bad(`cookie 0x${cookie.toString(16)} is not a compressed V2 histogram's (0x${COMPRESSED_COOKIE.toString(16)})`);
  const compressedLength = data.readUInt32BE(4);
  if (compressedLength !== data.length - 8) return bad(`envelope says ${compressedLength} compressed bytes, it carries ${data.length - 8}`);
  let raw: Buffer;
  try {
    raw = inflateSync(data.subarray(8), { maxOutputLength: MAX_INFLATED });
  } catch (err) {
    const e = err as Error & { code?: string };
    return bad(e.code === 'ERR_BUFFER_TOO_LARGE' ? `inflates to more than ${MAX_INFLATED} bytes` : `inflate failed: ${e.message}`);
  }
  if (raw.length < HEADER_BYTES) return bad(`${raw.length} bytes inflated, shorter than the V2 header`);
  const inner = raw.readUInt32BE(0);
  if (inner !== ENCODING_COOKIE) return bad(`header cookie 0x${inner.toString(16)} is not V2's (0x${ENCODING_COOKIE.toString(16)})`);
  const payloadLength = raw.readUInt32BE(4);
  if (payloadLength !== raw.length - HEADER_BYTES) return bad(`header says ${payloadLength} payload bytes, there are ${raw.length - HEADER_BYTES}`);
  // hdr-histogram-js writes 1 here, HdrHistogram (Java) 0; both decoders ignore it.
  const normalizingOffset = raw.readUInt32BE(8);
  if (normalizingOffset > 1) return bad(`normalizing index offset ${normalizingOffset} (0 or 1 expected)`);
  const digits = raw.readUInt32BE(12);
  if (digits > 5) return bad(`${digits} significant digits (0..5)`);
  const lowestBig = raw.readBigUInt64BE(16);
  const highestBig = raw.readBigUInt64BE(24);
  if (lowestBig < 1n || highestBig > BigInt(Number.MAX_SAFE_INTEGER) || highestBig < 2n * lowestBig) return bad(`trackable range ${lowestBig}..${highestBig} (1 <= lowest, 2 x lowest <= highest <= 2^53)`);
  const buckets = countsLength(Number(lowestBig), Number(highestBig), digits);
  if (buckets > MAX_COUNTS_LENGTH) return bad(`its layout (${lowestBig}..${highestBig}, ${digits} digits) has ${buckets} buckets, more than ${MAX_COUNTS_LENGTH}`);

  // The payload: ZigZag LEB128 words (at most 9 bytes), a count >= 0 fills one bucket, a negative one skips that many.
  let at = HEADER_BYTES;
  let index = 0;
  let total = 0;
  while (at < raw.length) {
    let value = 0;
    let scale = 1;
    let byte = 0x80;
    for (let i = 0; i < 9 && byte & 0x80; i++) {
      if (at >= raw.length) return bad('payload ends inside a word');
      byte = raw[at++]!;
      value += (i < 8 ? byte & 0x7f : byte) * scale;
      scale *= 128;
    }
    if (!Number.isSafeInteger(value)) return bad(`payload word at byte ${at - HEADER_BYTES} is beyond 2^53`);
    const word = value % 2 === 0 ? value / 2 : -(value + 1) / 2;
    if (word < 0) index += -word;
    else {
      if (word > MAX_BUCKET_COUNT) return bad(`a bucket holds ${word} samples, more than a bucket can (${MAX_BUCKET_COUNT})`);
      index += 1;
      total += word;
    }
    if (index > buckets) return bad(`payload runs to bucket ${index}, its declared range has ${buckets}`);
    if (total > count) return `latencyHistogram holds more than ${count} samples, its count says ${count}`;
  }
  if (total !== count) return `latencyHistogram holds ${total} samples, its count says ${count}`;
  return undefined;
}

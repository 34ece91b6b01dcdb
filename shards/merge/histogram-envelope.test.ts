import { describe, expect, it } from 'vitest';
import * as hdr from 'hdr-histogram-js';
import { deflateSync } from 'node:zlib';
import { LatencyRecorder, newHistogram } from '../../engine/measure/latency.ts';
import { countsLength, histogramEnvelopeProblem, MAX_COUNTS_LENGTH } from './histogram-envelope.ts';
import { resultProblem } from './schema.ts';
import { shardResult } from './fixtures.ts';

/** A compressed V2 histogram from its parts, each one free to lie. */
function craft(o: { payload: number[]; payloadLength?: number; digits?: number; lowest?: bigint; highest?: bigint; cookie?: number; compressedLength?: number; tail?: Buffer }): string {
  const payload = Buffer.from(o.payload);
  const header = Buffer.alloc(40);
  header.writeUInt32BE(0x1c849313, 0);
  header.writeUInt32BE(o.payloadLength ?? payload.length, 4);
  header.writeUInt32BE(1, 8);
  header.writeUInt32BE(o.digits ?? 3, 12);
  header.writeBigUInt64BE(o.lowest ?? 1n, 16);
  header.writeBigUInt64BE(o.highest ?? 3_600_000_000n, 24);
  header.writeBigUInt64BE(1n, 32);
  const deflated = Buffer.concat([deflateSync(Buffer.concat([header, payload, o.tail ?? Buffer.alloc(0)]))]);
  const envelope = Buffer.alloc(8);
  envelope.writeUInt32BE(o.cookie ?? 0x1c849314, 0);
  envelope.writeUInt32BE(o.compressedLength ?? deflated.length, 4);
  return Buffer.concat([envelope, deflated]).toString('base64');
}

/** ZigZag LEB128 words: a count c >= 0, or a run of r empty buckets (written as -r). */
function word(v: number): number[] {
  let e = v >= 0 ? v * 2 : -v * 2 - 1;
  const out: number[] = [];
  while (e >= 128) {
    out.push(128 | e % 128);
    e = Math.floor(e / 128);
  }
  return [...out, e];
}
const count = (c: number) => word(c);
const zeros = (r: number) => word(-r);

describe('latencyHistogram is bounded before hdr-histogram-js decodes it', () => {
  it('the runners\' own histograms pass (empty, one sample, many), and the layout arithmetic is the library\'s', () => {
    const rec = new LatencyRecorder();
    expect(histogramEnvelopeProblem(rec.encode().histogram, 0)).toBeUndefined();
    for (const ms of [0.001, 5, 6.5, 3_600_000, 12]) rec.recordMs(ms);
    const enc = rec.encode();
    expect(histogramEnvelopeProblem(enc.histogram, 5)).toBeUndefined();
    expect(histogramEnvelopeProblem(enc.histogram, 6)).toBe('latencyHistogram holds 5 samples, its count says 6');
    expect(histogramEnvelopeProblem(enc.histogram, 4)).toBe('latencyHistogram holds more than 4 samples, its count says 4');
    expect(countsLength(1, 3_600_000_000, 3)).toBe((newHistogram() as unknown as { countsArrayLength: number }).countsArrayLength);
    for (const [lowest, highest, digits] of [[1, Number.MAX_SAFE_INTEGER, 3], [1000, 1e7, 2], [1, 2, 1], [5, 100_000, 5]] as const) {
      const h = hdr.build({ lowestDiscernibleValue: lowest, highestTrackableValue: highest, numberOfSignificantValueDigits: digits });
      expect(countsLength(lowest, highest, digits)).toBe((h as unknown as { countsArrayLength: number }).countsArrayLength);
    }
  });

  it.each<[string, string, RegExp]>([
    ['a zero run of 10^12 buckets (the decoder would loop 10^12 times)', craft({ payload: [...zeros(1e12), ...count(1)] }), /payload runs to bucket 1000000000000, its declared range has 23552/],
    ['a zero run one past the declared range', craft({ payload: [...zeros(23552), ...count(1)] }), /payload runs to bucket 23553, its declared range has 23552/],
    ['a payload length beyond the data (the decoder would read zeros past the end 4 billion times)', craft({ payload: count(1), payloadLength: 0xffffffff }), /header says 4294967295 payload bytes, there are 1/],
    ['a layout of 4.8 million buckets (5 digits over 2^53)', craft({ payload: count(1), digits: 5, highest: 2n ** 53n - 1n }), /has 4849664 buckets, more than 262144/],
    ['6 significant digits', craft({ payload: count(1), digits: 6 }), /6 significant digits \(0\.\.5\)/],
    ['a highest trackable value beyond 2^53', craft({ payload: count(1), highest: 2n ** 63n }), /trackable range 1\.\.9223372036854775808/],
    ['lowest 0', craft({ payload: count(1), lowest: 0n }), /trackable range 0\.\./],
    ['an inflate bomb (10 MB of zeros after the header)', craft({ payload: count(1), tail: Buffer.alloc(10_000_000) }), /inflates to more than 2359336 bytes/],
    ['a word cut short', craft({ payload: [...count(1), 0x80] }), /payload ends inside a word/],
    ['an uncompressed cookie in the envelope', craft({ payload: count(1), cookie: 0x1c849313 }), /cookie 0x1c849313 is not a compressed V2 histogram's/],
    ['a compressed length that lies', craft({ payload: count(1), compressedLength: 5 }), /envelope says 5 compressed bytes/],
    ['not base64', '!!!not base64', /not base64/],
  ])('%s: refused', (_name, b64, why) => {
    expect(histogramEnvelopeProblem(b64, 1)).toMatch(why);
  });

  it('the schema refuses the shard\'s result with that reason, without calling the decoder', () => {
    const good = shardResult({ clients: 20, msgs: 10, latenciesMs: [5] });
    // 10^8 (not 10^12): without the check the decoder takes ~0.2 s, accepts it, and this fails instead of hanging.
    const hostile = { ...good, latencyHistogram: { ...good.latencyHistogram!, histogram: craft({ payload: [...zeros(1e8), ...count(1)] }), count: 1 } };
    expect(resultProblem(hostile)).toBe('latencyHistogram does not decode: payload runs to bucket 100000000, its declared range has 23552');
    expect(resultProblem(good)).toBeUndefined();
    expect(MAX_COUNTS_LENGTH).toBeGreaterThan(countsLength(1, Number.MAX_SAFE_INTEGER, 3));
  });
});

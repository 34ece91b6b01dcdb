/**
 * Sets of sequence numbers as compact range strings ("1-57,59,61-120"): how a publishing shard
 * hands its accepted set to the coordinator, so subscribe-only shards on the same stream are
 * judged against exactly the messages the target accepted.
 */
export function encodeRanges(has: (seq: number) => boolean, max: number): string {
  const parts: string[] = [];
  let start = 0;
  // Bounded: one step per seq up to max (+1 to close the last range).
  for (let s = 1; s <= max + 1; s++) {
    const inSet = s <= max && has(s);
    if (inSet && start === 0) start = s;
    if (!inSet && start !== 0) {
      parts.push(start === s - 1 ? String(start) : `${start}-${s - 1}`);
      start = 0;
    }
  }
  return parts.join(',');
}

/** The seqs of a range string, as flags indexed by seq (1..max); undefined when malformed or out of range. */
export function decodeRanges(text: string, max: number): Uint8Array | undefined {
  const flags = new Uint8Array(max + 1);
  if (text === '') return flags;
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return undefined;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (a < 1 || b < a || b > max) return undefined;
    for (let s = a; s <= b; s++) flags[s] = 1;
  }
  return flags;
}

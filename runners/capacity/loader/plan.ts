import type { FleetOptions } from './loaders.ts';
import type { LoaderAssignment } from './messages.ts';

/**
 * How a run's connections are laid out: connection i subscribes to stream i % S and talks to
 * node floor(i / S) % N, so the subscribers of one stream alternate over the nodes (a publish to
 * any node must cross the broker to reach them all); loaders hold contiguous slices.
 */
export function nodeOf(index: number, streams: number, nodes: number): number {
  return Math.floor(index / streams) % nodes;
}

export function slices(connections: number, loaders: number): { first: number; count: number }[] {
  const out: { first: number; count: number }[] = [];
  let first = 0;
  for (let l = 0; l < loaders; l++) {
    const count = Math.floor(connections / loaders) + (l < connections % loaders ? 1 : 0);
    out.push({ first, count });
    first += count;
  }
  return out;
}

export function assignments({ connections, loaders, ...shared }: FleetOptions & Pick<LoaderAssignment, 'connectTimeoutMs'>): LoaderAssignment[] {
  return slices(connections, loaders).map((s, loader) => ({ loader, ...shared, first: s.first, count: s.count }));
}

/** Ranges of consecutive accepted seqs: [[1, 40]] for a publisher that never failed. */
export function toRanges(seqs: Iterable<number>): [number, number][] {
  const sorted = [...seqs].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s === last[1] + 1) last[1] = s;
    else if (!last || s > last[1]) out.push([s, s]);
  }
  return out;
}

import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { resultsDir } from './result-files.ts';

/**
 * The commit a figure was measured on: short hash, `-dirty` when the tree had uncommitted changes;
 * null outside git. Figure files under docs/results/ do not count: docs/results/measure.sh writes
 * them one after another, and a figure's own earlier output is not a change to what it measures.
 */
export function currentCommit(cwd = process.cwd()): string | null {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const hash = git('rev-parse', '--short=12', 'HEAD');
    const dirty = git('status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)docs/results') !== '';
    return dirty ? `${hash}-dirty` : hash;
  } catch {
    return null;
  }
}

/** What a committed figure file holds: how it was produced, and each result without its bulk. */
export interface ResultSummary {
  /** Commit the figures were measured on (see currentCommit). */
  commit: string | null;
  /** The command line that produced them. */
  command: string;
  /** When the run finished, ISO 8601. */
  measuredAt: string;
  results: Record<string, unknown>[];
}

/**
 * A result without what only tooling needs: the compressed histogram (its exact min, max and count
 * stay) and per-event arrays (`chaos.timeline`, replaced by its length). Small enough to commit
 * under docs/results/ next to the figures it backs.
 */
export function stripBulk(result: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...result };
  const hist = out.latencyHistogram as Record<string, unknown> | undefined;
  if (hist && typeof hist === 'object') {
    const { histogram: _h, ...rest } = hist;
    out.latencyHistogram = rest;
  }
  const chaos = out.chaos as Record<string, unknown> | undefined;
  if (chaos && typeof chaos === 'object' && Array.isArray(chaos.timeline)) {
    const { timeline, ...rest } = chaos;
    out.chaos = { ...rest, timelineEvents: timeline.length };
  }
  return out;
}

export function summarize(results: readonly Record<string, unknown>[], command: string, commit = currentCommit()): ResultSummary {
  return { commit, command, measuredAt: new Date().toISOString(), results: results.map(stripBulk) };
}

/** Write `<name>.summary.json` next to the full results (results.ts); returns its path. */
export async function writeSummary(name: string, results: readonly Record<string, unknown>[], command: string): Promise<string> {
  const file = join(resultsDir(), `${name}.summary.json`);
  await writeFile(file, JSON.stringify(summarize(results, command), null, 2) + '\n');
  return file;
}

import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ReboundError } from '../../lib/errors.ts';
import { isAlive } from '../../services/common/process-info.ts';
import { readJson } from './jobs.ts';

interface LockFile {
  pid: number;
  host: string;
  startedAt: string;
}

/**
 * One runner per RESULTS_DIR: a second one would mark the first one's running job as failed on
 * load and both would write the same files. `<dir>/runner.lock` holds the owner's pid; a lock
 * whose pid is gone (SIGKILL, crash) is taken over. A lock written on another host (a shared
 * volume) cannot be checked and is honoured. Returns the release function.
 */
export function acquireResultsLock(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'runner.lock');
  const mine: LockFile = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, JSON.stringify(mine) + '\n', { flag: 'wx' });
      return () => {
        try {
          if (readJson<LockFile | null>(file)?.pid === process.pid) unlinkSync(file);
        } catch {
          // Already gone: nothing to release.
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    // Torn or empty (the owner died mid-write): stale. A lock file is outside input too: `null` or
    // any non-object reads as no owner.
    const owner: Partial<LockFile> = readJson<Partial<LockFile> | null>(file) ?? {};
    const live = typeof owner.pid === 'number' && owner.pid !== process.pid && (owner.host !== mine.host || isAlive(owner.pid));
    if (live) {
      throw new ReboundError('RR_ERR_RUNNER_LOCKED', `RESULTS_DIR ${dir} is in use by runner pid ${owner.pid} on ${owner.host} (since ${owner.startedAt}; ${file}); stop it or give this runner another RESULTS_DIR`, { details: { pid: owner.pid, host: owner.host, lockFile: file } });
    }
    try {
      unlinkSync(file);
    } catch {
      // Another starter removed it first; the next exclusive create decides.
    }
  }
  throw new ReboundError('RR_ERR_RUNNER_LOCKED', `could not take ${file}: another runner keeps taking it`, { details: { lockFile: file } });
}

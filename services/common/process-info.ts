import { readdirSync, readFileSync } from 'node:fs';

/** Whether a process with this pid exists (signal 0 probes without signalling; EPERM: it exists, another user's). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The direct children of a process's main thread, from /proc (none when it is gone). */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The process and its descendants (bounded walk; processes that exited in between are skipped). */
export function processTree(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length && out.length < 256) {
    const p = queue.shift()!;
    out.push(p);
    try {
      for (const t of readdirSync(`/proc/${p}/task`)) {
        const kids = readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim();
        if (kids) queue.push(...kids.split(/\s+/).map(Number));
      }
    } catch {
      // Gone, or no children file on this kernel: count what we have.
    }
  }
  return out;
}

/** SIGKILL these pids, deepest first (a tree as processTree lists it, parent before children); gone ones are skipped. */
export function killPids(tree: readonly number[]): void {
  for (const p of [...tree].reverse()) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** SIGKILL a process and every descendant (a cluster primary and its workers, tsx's esbuild). */
export function killTree(pid: number | undefined): void {
  if (pid) killPids(processTree(pid));
}

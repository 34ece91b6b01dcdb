import type { ChildProcess } from 'node:child_process';

/**
 * Children that must not outlive this process. One `exit` listener for all of them, instead of
 * one per child (which trips Node's listener-leak warning in runs that restart services).
 */
const live = new Set<ChildProcess>();
let installed = false;

export function reapOnExit(child: ChildProcess): void {
  if (!installed) {
    installed = true;
    process.on('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
  live.add(child);
  child.once('exit', () => live.delete(child));
}

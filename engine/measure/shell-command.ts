import { spawn } from 'node:child_process';

/** How an operator's shell command ended. */
export interface ShellCommandResult {
  /** Null when it ended on a signal (a timeout ends it with SIGKILL). */
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  /** The last 500 characters of its stdout and stderr together (its own words on a failure). */
  outputTail: string;
}

/**
 * Run an operator's command with /bin/sh, killed after `timeoutMs`. The command must come from the
 * runner's own environment (AVALANCHE_RESTART_COMMAND, CAPACITY_S6_STOP_COMMAND), never from a
 * request: this runs whatever it is given. `env` adds the target's coordinates so a script can
 * address it. Never rejects: a spawn failure or a timeout lands in the result.
 */
export function runShellCommand(command: string, o: { env: Record<string, string>; timeoutMs: number }): Promise<ShellCommandResult> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], { env: { ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    // Only the tail is kept: a chatty deploy script must not grow the runner's memory.
    const keep = (b: Buffer) => void (out = (out + b.toString()).slice(-2000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => {
      out += `\n(timed out after ${o.timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, o.timeoutMs);
    child.on('error', (err) => (out += `\n${err.message}`));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ exitCode: code, signal, durationMs: Date.now() - t0, outputTail: out.slice(-500) });
    });
  });
}

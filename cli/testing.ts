import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A runner CLI as a user runs it (`node --import tsx <script> ...args`) to its exit, with its own RESULTS_DIR. */
export function runCliToExit(script: string, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { env: { ...process.env, RESULTS_DIR: mkdtempSync(join(tmpdir(), 'rebound-target-')) } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  return new Promise((r) => child.on('exit', (code) => r({ code, stdout, stderr })));
}

/**
 * Start a runner CLI (`node --import tsx <script> ...args`) with a fresh RESULTS_DIR, wait until its
 * progress shows publishing, let it publish `afterMs` more, then SIGTERM it: what a user's Ctrl-C
 * or a platform stop does mid-run. Its exit code, stdout, stderr and the HTML report it wrote into
 * that RESULTS_DIR. Shared by the jitter CLI's and `npm run bench`'s abort tests.
 */
export async function sigtermWhilePublishing(script: string, args: readonly string[], afterMs = 1500) {
  const dir = mkdtempSync(join(tmpdir(), 'rebound-abort-'));
  const child = spawn('node', ['--import', 'tsx', script, ...args], { env: { ...process.env, RESULTS_DIR: dir } });
  let stderr = '';
  let stdout = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  await new Promise<void>((r) => child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString();
    if (stderr.includes('] publish:')) r();
  }));
  await new Promise((r) => setTimeout(r, afterMs));
  child.kill('SIGTERM');
  const code = await exited;
  const report = readdirSync(dir).find((f) => f.endsWith('.html'));
  return { code, stdout, stderr, html: report ? readFileSync(join(dir, report), 'utf8') : '' };
}

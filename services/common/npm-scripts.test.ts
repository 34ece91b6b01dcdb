/**
 * `npm run serve:*` / `chaos:proxy` as a user runs them: SIGTERM to the npm process must stop the
 * server (the scripts exec node, so npm's own signal forwarding reaches it), freeing its port.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { waitUntil } from '../../lib/time.ts';
import { soketiAvailability } from '../soketi/load.ts';
import { childPids, isAlive } from './process-info.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// serve:soketi where soketi is installed (npm run install:soketi; .ci/run does).
describe.each(['serve:ws', 'serve:uws', 'serve:socketio', 'serve:replay', 'chaos:proxy', ...(soketiAvailability().available ? ['serve:soketi'] : [])])('npm run %s', (script) => {
  it('SIGTERM to the npm pid stops the server and npm exits 0', async () => {
    const npm = spawn('npm', ['run', '-s', script, '--', '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) => npm.once('exit', (code, signal) => r({ code, signal })));
    await waitUntil(() => /"type":"listening"|listening on http/.test(out), 20_000, `${script} listening`);
    const line = out.split('\n').find((l) => l.startsWith('{"type":"listening"'));
    const port = line ? (JSON.parse(line) as { port: number }).port : Number(/listening on http:\/\/\S+:(\d+)/.exec(out)?.[1]);
    // Both listening lines name the server's pid; with exec it is npm's own child.
    const serverPids = [line ? (JSON.parse(line) as { pid: number }).pid : Number(/ pid (\d+)/.exec(out)?.[1])];
    expect(childPids(npm.pid!)).toEqual(serverPids);
    expect(serverPids.length).toBeGreaterThan(0);
    npm.kill('SIGTERM');
    const t0 = Date.now();
    await waitUntil(() => serverPids.every((p) => !isAlive(p)) || Date.now() - t0 > 8000, 10_000, 'server exit');
    const stillUp = serverPids.filter(isAlive);
    for (const p of stillUp) process.kill(p, 'SIGKILL');
    expect(stillUp, 'server pids still running after SIGTERM to npm').toEqual([]);
    expect(await exited).toEqual({ code: 0, signal: null });
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  });
});

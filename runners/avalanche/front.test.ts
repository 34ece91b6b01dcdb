import { spawn } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeFront } from './front.ts';

/** Real TCP nodes on port 0 that greet each connection with their name, so a client sees where it landed. */
async function node(name: string): Promise<{ server: Server; url: string; sockets: Set<Socket>; kill(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.write(name);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  // A killed process: the port stops accepting and every open connection is reset.
  const kill = () => new Promise<void>((r) => {
    server.close(() => r());
    for (const s of sockets) s.resetAndDestroy();
  });
  return { server, url, sockets, kill };
}

/** Connect through the front; resolve with the first bytes (the node's name) and the socket. */
function dial(url: string): Promise<{ name: string; socket: Socket }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect({ host: u.hostname, port: Number(u.port) });
    s.once('data', (d) => resolve({ name: d.toString(), socket: s }));
    s.once('error', reject);
    s.once('close', () => reject(new Error('closed before any data')));
  });
}

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c().catch(() => {});
});

describe('NodeFront (the avalanche --front)', () => {
  it('spreads connections round-robin, closes a client whose node dies, and sends its reconnect to a live node', async () => {
    const a = await node('A');
    const b = await node('B');
    closing.push(() => new Promise((r) => a.server.close(() => r())), () => new Promise((r) => b.server.close(() => r())));
    const front = await NodeFront.start([a.url, b.url]);
    closing.push(() => front.close());

    const conns = await Promise.all(Array.from({ length: 6 }, () => dial(front.url)));
    expect(conns.map((c) => c.name).sort().join('')).toBe('AAABBB');
    expect(front.activeCounts()).toEqual([3, 3]);
    front.markRestart();
    expect(front.report.activeAtRestart).toEqual([3, 3]);

    // Kill B: its three clients see their connection end; A's stay open.
    const closed = conns.filter((c) => c.name === 'B').map((c) => new Promise<void>((r) => c.socket.once('close', () => r())));
    for (const c of conns) c.socket.on('error', () => {});
    await b.kill();
    await Promise.all(closed);
    expect(conns.filter((c) => c.name === 'A').every((c) => !c.socket.destroyed)).toBe(true);

    // Reconnects all land on A, B's refusals counted as failovers.
    const again = await Promise.all(Array.from({ length: 4 }, () => dial(front.url)));
    expect(again.map((c) => c.name)).toEqual(['A', 'A', 'A', 'A']);
    expect(front.report.failovers).toBeGreaterThanOrEqual(2);
    expect(front.activeCounts()).toEqual([7, 0]);
    for (const c of [...conns, ...again]) c.socket.destroy();
  });

  it('closes the client when no node accepts (rejected), and data sent early reaches the node', async () => {
    const a = await node('A');
    const echo: string[] = [];
    a.server.on('connection', (s) => s.on('data', (d) => echo.push(d.toString())));
    const front = await NodeFront.start([a.url]);
    closing.push(() => front.close());
    // Written before the front reached the node: it is held, not lost.
    const u = new URL(front.url);
    const s = connect({ host: u.hostname, port: Number(u.port) });
    s.write('hello');
    await new Promise<void>((r) => s.once('data', () => r()));
    for (let i = 0; i < 50 && !echo.length; i++) await new Promise((r) => setTimeout(r, 20));
    expect(echo.join('')).toBe('hello');
    s.destroy();

    await a.kill();
    await expect(dial(front.url)).rejects.toThrow();
    expect(front.report.rejected).toBe(1);
  });

  it('counts its own file-descriptor failures (a runner out of open files) instead of blaming a node or crashing', async () => {
    // The child's front has exactly one descriptor left: accepting our connection takes it, so the
    // connect to the node fails with EMFILE. That is the runner's limit and must be counted as such.
    const script = `
      import { createServer } from 'node:net';
      import { closeSync, openSync } from 'node:fs';
      import { NodeFront } from './runners/avalanche/front.ts';
      const srv = createServer(() => {}); await new Promise((r) => srv.listen(0, '127.0.0.1', r));
      const front = await NodeFront.start(['http://127.0.0.1:' + srv.address().port]);
      const fds = []; try { for (let i = 0; i < 5000; i++) fds.push(openSync('/dev/null', 'r')); } catch {}
      closeSync(fds.pop());
      process.stdout.write(front.url + '\\n');
      setTimeout(() => { process.stdout.write(JSON.stringify(front.report) + '\\n'); process.exit(0); }, 1500);`;
    const child = spawn('sh', ['-c', 'ulimit -n 300 && exec node --import tsx --input-type=module -e "$0"', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
    closing.push(async () => void child.kill('SIGKILL'));
    const lines: string[] = [];
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => lines.push(...d.split('\n').filter(Boolean)));
    for (let i = 0; i < 300 && !lines.length; i++) await new Promise((r) => setTimeout(r, 50));
    const s = connect({ host: '127.0.0.1', port: Number(new URL(lines[0]!).port) });
    s.on('error', () => {});
    const closed = new Promise<void>((r) => s.once('close', () => r()));
    await closed;
    for (let i = 0; i < 100 && lines.length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    const report = JSON.parse(lines[1]!) as { fdErrors: number; rejected: number; failovers: number };
    expect(report.fdErrors, lines[1]).toBe(1);
    // The node never refused: a descriptor shortage is not a failover to another node.
    expect(report.failovers).toBe(0);
    expect(report.rejected).toBe(0);
  });
});

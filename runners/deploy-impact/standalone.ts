import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ReboundError } from '../../lib/errors.ts';
import { reapOnExit } from '../../lib/reaper.ts';
import type { PublisherReport, PublisherStart } from './publisher-process.ts';

const ENTRY = fileURLToPath(new URL('./publisher-process.ts', import.meta.url));

/** A running standalone publisher process. */
export interface StandalonePublisher {
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resolves when this incarnation has published its last message (never, if it is killed first). */
  readonly done: Promise<Extract<PublisherReport, { type: 'done' }>>;
  start(cfg: Omit<PublisherStart, 'type'>): void;
  /** Kill it (SIGKILL: a crash or hard deploy; SIGTERM: the process exits as its runtime decides). Resolves on exit. */
  kill(signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
}

/** Fork a publisher process and wait until it is ready to take its start message. */
export function spawnPublisher(onPublished: (r: Extract<PublisherReport, { type: 'published' | 'sent' }>) => void, startTimeoutMs = 20_000): Promise<StandalonePublisher> {
  const child = fork(ENTRY, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  reapOnExit(child);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let resolveDone!: (r: Extract<PublisherReport, { type: 'done' }>) => void;
  const done = new Promise<Extract<PublisherReport, { type: 'done' }>>((r) => (resolveDone = r));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new ReboundError('RR_ERR_PUBLISHER_PROCESS', `the standalone publisher did not start within ${startTimeoutMs} ms`));
    }, startTimeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new ReboundError('RR_ERR_PUBLISHER_PROCESS', `the standalone publisher exited before it was ready (code ${code}, signal ${signal})`));
    });
    child.on('message', (m: PublisherReport) => {
      if (m.type === 'published' || m.type === 'sent') onPublished(m);
      else if (m.type === 'done') resolveDone(m);
      else if (m.type === 'ready') {
        clearTimeout(timer);
        resolve({
          pid: m.pid,
          child,
          done,
          start: (cfg) => child.send({ type: 'start', ...cfg } satisfies PublisherStart),
          async kill(signal) {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            await exited;
          },
        });
      }
    });
  });
}

import type { Request, Response } from 'express';
import { jobView, type Job, type JobStore } from './jobs.ts';

/**
 * `GET /jobs/:id?follow=1`: progress as it happens, so a user can watch a 10-minute run.
 * Server-sent events when the client accepts them (`Accept: text/event-stream`), otherwise
 * chunked NDJSON; one line per progress update or log line, a heartbeat every 15 s, and the
 * final job object as the last line.
 */
export function follow(req: Request, res: Response, store: JobStore, job: Job, logLines: number): void {
  const sse = (req.headers.accept ?? '').includes('text/event-stream');
  res.status(200);
  res.set({ 'Content-Type': sse ? 'text/event-stream' : 'application/x-ndjson', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
  req.socket.setTimeout(0);
  res.flushHeaders();
  const send = (type: string, data: unknown) => {
    const line = JSON.stringify({ type, ...(data as object) });
    res.write(sse ? `event: ${type}\ndata: ${line}\n\n` : `${line}\n`);
  };
  const { result: _r, ...view } = jobView(store, job, logLines);
  send('job', view);
  if (job.status !== 'running') {
    send('end', { job: jobView(store, job, logLines) });
    return void res.end();
  }
  const ev = store.events(job.id);
  const offs = [
    ev.on('update', (j) => send('progress', { jobId: j.id, status: j.status, progress: j.progress, at: Date.now() })),
    ev.on('log', (line) => send('log', { jobId: job.id, line })),
    ev.on('end', (j) => {
      send('end', { job: jobView(store, j, logLines) });
      stop();
      res.end();
    }),
  ];
  const beat = setInterval(() => send('heartbeat', { jobId: job.id, status: job.status, at: Date.now() }), 15_000);
  const stop = () => {
    clearInterval(beat);
    offs.forEach((off) => off());
  };
  req.on('close', stop);
}

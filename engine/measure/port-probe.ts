import { connect } from 'node:net';
import { sleep } from '../../lib/time.ts';

export interface PortProbeReport {
  intervalMs: number;
  probes: number;
  /** Probes not accepted: refused, or no answer within 10 intervals. */
  refused: number;
  /** Longest time on any node from a refused probe to the next accepted one (or the end of probing). */
  longestRefusedMs: number;
}

/** The host and port a target URL's listener is on (ws/http 80, wss/https 443 when none is named). */
function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) || (u.protocol === 'https:' || u.protocol === 'wss:' ? 443 : 80) };
}

/** One plain TCP connect, closed at once: true when accepted, false when refused or unanswered within `timeoutMs`. */
export function probeOnce(t: { host: string; port: number }, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: t.host, port: t.port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/**
 * Plain TCP connects to every node's port at a fixed interval while the restart and the herd run:
 * whether the port kept accepting (a worker reload must never refuse) and for how long it did not.
 * At most one probe per node is in flight.
 */
export function probePorts(urls: readonly string[], intervalMs = 100): { stop(): PortProbeReport } {
  const targets = urls.map(hostPort);
  const run = targets.map(() => ({ busy: false, refusedSince: 0, longest: 0 }));
  const report: PortProbeReport = { intervalMs, probes: 0, refused: 0, longestRefusedMs: 0 };
  let stopped = false;
  const timer = setInterval(() => {
    targets.forEach((t, n) => {
      const st = run[n]!;
      if (st.busy) return;
      st.busy = true;
      void probeOnce(t, intervalMs * 10).then((ok) => {
        st.busy = false;
        if (stopped) return;
        report.probes++;
        if (ok) {
          if (st.refusedSince) st.longest = Math.max(st.longest, Date.now() - st.refusedSince);
          st.refusedSince = 0;
        } else {
          report.refused++;
          st.refusedSince ||= Date.now();
        }
      });
    });
  }, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      stopped = true;
      const now = Date.now();
      report.longestRefusedMs = Math.max(0, ...run.map((r) => (r.refusedSince ? Math.max(r.longest, now - r.refusedSince) : r.longest)));
      return report;
    },
  };
}

/**
 * Probe `url`'s port every `intervalMs` until it is `want`: `refused` (the listener closed) or
 * `accepting` (a listener is back). The time of that probe's start, or null when it was not so
 * within `timeoutMs`. For `refused`, a probe that gets no answer within `intervalMs` counts as not
 * refused: a stopping server that is only slow is still listening.
 */
export async function untilPort(url: string, want: 'refused' | 'accepting', o: { intervalMs: number; timeoutMs: number; signal?: AbortSignal }): Promise<number | null> {
  const t = hostPort(url);
  const deadline = Date.now() + o.timeoutMs;
  while (Date.now() < deadline && !o.signal?.aborted) {
    const at = Date.now();
    const accepted = await probeOnce(t, o.intervalMs);
    if (want === 'accepting' ? accepted : !accepted && Date.now() - at < o.intervalMs) return at;
    await sleep(Math.max(0, at + o.intervalMs - Date.now()));
  }
  return null;
}

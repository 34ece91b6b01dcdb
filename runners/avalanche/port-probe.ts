import { connect } from 'node:net';

export interface PortProbeReport {
  intervalMs: number;
  probes: number;
  /** Probes not accepted: refused, or no answer within 10 intervals. */
  refused: number;
  /** Longest time on any node from a refused probe to the next accepted one (or the end of probing). */
  longestRefusedMs: number;
}

/**
 * Plain TCP connects to every node's port at a fixed interval while the restart and the herd run:
 * whether the port kept accepting (a worker reload must never refuse) and for how long it did not.
 * Each probe closes at once; at most one probe per node is in flight.
 */
export function probePorts(urls: readonly string[], intervalMs = 100): { stop(): PortProbeReport } {
  const targets = urls.map((u) => new URL(u)).map((u) => ({ host: u.hostname, port: Number(u.port) || 80 }));
  const run = targets.map(() => ({ busy: false, refusedSince: 0, longest: 0 }));
  const report: PortProbeReport = { intervalMs, probes: 0, refused: 0, longestRefusedMs: 0 };
  const timer = setInterval(() => {
    targets.forEach((t, n) => {
      const st = run[n]!;
      if (st.busy) return;
      st.busy = true;
      const s = connect({ host: t.host, port: t.port });
      const done = (ok: boolean) => {
        s.destroy();
        if (!st.busy) return;
        st.busy = false;
        report.probes++;
        if (ok) {
          if (st.refusedSince) st.longest = Math.max(st.longest, Date.now() - st.refusedSince);
          st.refusedSince = 0;
        } else {
          report.refused++;
          st.refusedSince ||= Date.now();
        }
      };
      s.setTimeout(intervalMs * 10, () => done(false));
      s.once('connect', () => done(true));
      s.once('error', () => done(false));
    });
  }, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      const now = Date.now();
      report.longestRefusedMs = Math.max(0, ...run.map((r) => (r.refusedSince ? Math.max(r.longest, now - r.refusedSince) : r.longest)));
      return report;
    },
  };
}

import { connect } from 'node:net';

export interface PortProbeReport {
  intervalMs: number;
  probes: number;
  refused: number;
  /** Longest run of consecutive refused probes on any node, as time (refusals × interval). */
  longestRefusedMs: number;
}

/**
 * Plain TCP connects to every node's port at a fixed interval while the restart and the herd run:
 * whether the port kept accepting (a worker reload must never refuse) and for how long it did not.
 * Each probe closes at once; at most one probe per node is in flight.
 */
export function probePorts(urls: readonly string[], intervalMs = 100): { stop(): PortProbeReport } {
  const targets = urls.map((u) => new URL(u)).map((u) => ({ host: u.hostname, port: Number(u.port) || 80 }));
  const run = targets.map(() => ({ busy: false, streak: 0, longest: 0 }));
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
        if (ok) st.streak = 0;
        else {
          report.refused++;
          st.streak++;
          st.longest = Math.max(st.longest, st.streak);
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
      report.longestRefusedMs = Math.max(0, ...run.map((r) => r.longest)) * intervalMs;
      return report;
    },
  };
}

import { readdirSync, readFileSync } from 'node:fs';

/** One sample of the target: memory, CPU and connections, once a second. */
export interface TargetSample {
  at: number;
  rssBytes: number | null;
  cpuPct: number | null;
  connections: number | null;
}

const readOr = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};

/** The pid and every descendant (a cluster primary's workers count as the target too). */
function processTree(root: number): number[] {
  const out = [root];
  for (let i = 0; i < out.length && out.length < 256; i++) {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${out[i]}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) for (const c of readOr(`/proc/${out[i]}/task/${task}/children`).split(' ')) if (c.trim()) out.push(Number(c));
  }
  return out;
}

function treeUsage(root: number): { rssBytes: number; cpuTicks: number } {
  let rssBytes = 0;
  let cpuTicks = 0;
  for (const pid of processTree(root)) {
    const m = /VmRSS:\s+(\d+) kB/.exec(readOr(`/proc/${pid}/status`));
    if (m) rssBytes += Number(m[1]) * 1024;
    const stat = readOr(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of /proc/<pid>/stat (12 and 13 after the comm).
    cpuTicks += Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
  }
  return { rssBytes, cpuTicks };
}

const TICKS_PER_SEC = 100;

/**
 * Samples the target every `everyMs`: its `/metrics` (connections, and RSS/CPU of the answering
 * process) and, when the target runs on this machine (`pid`), the RSS and CPU of its whole
 * process tree from /proc, which is what a cluster of workers really costs.
 */
export function startTargetSampler(opts: { url: string; pid?: number; everyMs?: number; maxSamples?: number }) {
  const samples: TargetSample[] = [];
  let last: { at: number; cpuTicks: number } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let metricsOk = 0;
  const take = async (): Promise<TargetSample> => {
    const at = Date.now();
    let metrics: { rssBytes?: number; cpuPct?: number; connections?: number } = {};
    try {
      const r = await fetch(`${opts.url.replace(/\/+$/, '')}/metrics`, { signal: AbortSignal.timeout(2000) });
      if (r.ok) {
        metrics = (await r.json()) as typeof metrics;
        metricsOk++;
      }
    } catch {
      // A target too busy to answer is itself a finding: the sample says null.
    }
    const s: TargetSample = { at, rssBytes: typeof metrics.rssBytes === 'number' ? metrics.rssBytes : null, cpuPct: typeof metrics.cpuPct === 'number' ? metrics.cpuPct : null, connections: typeof metrics.connections === 'number' ? metrics.connections : null };
    if (opts.pid) {
      const u = treeUsage(opts.pid);
      if (u.rssBytes > 0) s.rssBytes = u.rssBytes;
      if (last && at > last.at) s.cpuPct = Math.round((((u.cpuTicks - last.cpuTicks) / TICKS_PER_SEC) * 1000 * 1000) / (at - last.at)) / 10;
      last = { at, cpuTicks: u.cpuTicks };
    }
    return s;
  };
  return {
    source: opts.pid ? ('proc-tree' as const) : ('metrics' as const),
    /** Median RSS of a few samples before the load: the baseline of bytes per connection. */
    async baseline(n = 3): Promise<number | null> {
      const v: number[] = [];
      for (let i = 0; i < n; i++) {
        const s = await take();
        if (s.rssBytes !== null) v.push(s.rssBytes);
        await new Promise((r) => setTimeout(r, 300));
      }
      return v.length ? v.sort((a, b) => a - b)[Math.floor(v.length / 2)]! : null;
    },
    start() {
      const tick = async () => {
        const s = await take();
        if (samples.length < (opts.maxSamples ?? 7200)) samples.push(s);
        timer = setTimeout(() => void tick(), Math.max(0, at0(s) + (opts.everyMs ?? 1000) - Date.now()));
      };
      const at0 = (s: TargetSample) => s.at;
      void tick();
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      return { samples, metricsAnswered: metricsOk };
    },
  };
}

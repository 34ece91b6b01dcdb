import { readdirSync, readFileSync } from 'node:fs';

/**
 * Readers of Linux's /proc: the local fleet's memory sampler takes every figure of its cost table
 * from here (process memory from /proc/<pid>/status, the kernel's socket memory from
 * /proc/net/sockstat, slab and free memory from /proc/meminfo), the runners their open files,
 * open-file limits and available memory, and the capacity loader its machine CPU window
 * (machine-cpu.ts). Each reader returns undefined (or skips the process) when the file is gone:
 * processes end between a listing and a read.
 */

const PAGE = 4096;

const kb = (text: string, key: string): number => {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
  return m ? Number(m[1]) * 1024 : 0;
};

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** A reader of one /proc file through its parser: undefined while the file cannot be read. */
export const fromProc = <T,>(path: string, parse: (text: string) => T) => (): T | undefined => {
  const t = read(path);
  return t ? parse(t) : undefined;
};

/** /proc/<pid>/<file>, or undefined once the process is gone (or not ours to read). */
export const procFile = (pid: number, file: string): string | undefined => read(`/proc/${pid}/${file}`);

/**
 * The fields of /proc/<pid>/stat after the command name, which may hold spaces and parens:
 * state(0) ppid(1) ... utime(11) stime(12).
 */
export function statFields(pid: number): string[] | undefined {
  const s = procFile(pid, 'stat');
  return s ? s.slice(s.lastIndexOf(')') + 2).split(' ') : undefined;
}

/**
 * rss: VmRSS, resident bytes, shared file pages (the node binary's text) included; rssAnon: RssAnon,
 * private anonymous bytes (heap, stacks, buffers): what a connection adds; cpuTicks: utime + stime;
 * userTicks: utime alone.
 */
export function procMem(pid: number) {
  const s = read(`/proc/${pid}/status`);
  const f = statFields(pid);
  if (!s || !f) return undefined;
  const user = Number(f[11]);
  return { pid, rss: kb(s, 'VmRSS'), rssAnon: kb(s, 'RssAnon'), cpuTicks: user + Number(f[12]), userTicks: user };
}

/**
 * tcpInuse: TCP sockets in use (both ends of every loopback connection count), listening ones
 * included; tcpMemPages: the kernel's TCP buffer memory, in pages (`mem`), and tcpMemBytes in bytes.
 */
export function parseSockstat(text: string) {
  const m = /^TCP: inuse (\d+) orphan (\d+) tw (\d+) alloc (\d+) mem (\d+)/m.exec(text);
  if (!m) return undefined;
  return { tcpInuse: Number(m[1]), tcpOrphan: Number(m[2]), tcpTw: Number(m[3]), tcpAlloc: Number(m[4]), tcpMemPages: Number(m[5]), tcpMemBytes: Number(m[5]) * PAGE };
}

export const sockstat = fromProc('/proc/net/sockstat', parseSockstat);

export function parseMeminfo(text: string) {
  return { memTotal: kb(text, 'MemTotal'), memAvailable: kb(text, 'MemAvailable'), slab: kb(text, 'Slab'), sUnreclaim: kb(text, 'SUnreclaim'), sReclaimable: kb(text, 'SReclaimable') };
}

export const meminfo = fromProc('/proc/meminfo', parseMeminfo);

/** The machine's CPU ticks, /proc/stat's aggregate `cpu` line (guest time is already inside user). */
export function parseCpuTicks(text: string) {
  const m = /^cpu\s+(\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/m.exec(text);
  if (!m) return undefined;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = m.slice(1, 9).map(Number) as [number, number, number, number, number, number, number, number];
  return { user, nice, system, idle, iowait, irq, softirq, steal };
}

/**
 * Busy ticks as the local fleet counts them: user + nice + system + steal. irq and softirq stay
 * out: loopback traffic is processed there for the fleet's own sockets and no process is charged
 * for it, so it is neither the fleet's nor another job's.
 */
export function parseCpuBusyTicks(text: string): number | undefined {
  const t = parseCpuTicks(text);
  return t && t.user + t.nice + t.system + t.steal;
}

export const cpuBusyTicks = fromProc('/proc/stat', parseCpuBusyTicks);

/** The descriptor numbers a process holds open (a directory listing: ~5 ms at 16,000; sampled sparsely). */
export function fdsOf(pid: number): string[] | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`);
  } catch {
    return undefined;
  }
}

/** Open descriptors of a process. */
export const openFds = (pid: number): number | undefined => fdsOf(pid)?.length;

/** The soft open-file limit of a process (`self`: this one), from /proc/<pid>/limits. */
export function fdLimitOf(pid: number | 'self'): number | undefined {
  const t = read(`/proc/${pid}/limits`);
  const m = t && /^Max open files\s+(\d+)/m.exec(t);
  return m ? Number(m[1]) : undefined;
}

export const loadAverage = (): number[] => (read('/proc/loadavg') ?? '0 0 0').split(' ').slice(0, 3).map(Number);

/** Bytes per slab cache (active objects x object size), from /proc/slabinfo (root only; {} otherwise). */
export function slabCaches(): Record<string, number> {
  const t = read('/proc/slabinfo');
  const out: Record<string, number> = {};
  if (!t) return out;
  for (const line of t.split('\n').slice(2)) {
    const f = line.split(/\s+/);
    if (f.length < 4 || !f[0]) continue;
    out[f[0]] = Number(f[1]) * Number(f[3]);
  }
  return out;
}

/** The caches that grew most between two slabCaches() readings, bytes. */
export function slabGrowth(before: Record<string, number>, after: Record<string, number>, top = 10): { cache: string; bytes: number }[] {
  return Object.keys(after)
    .map((cache) => ({ cache, bytes: (after[cache] ?? 0) - (before[cache] ?? 0) }))
    .filter((x) => x.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top);
}

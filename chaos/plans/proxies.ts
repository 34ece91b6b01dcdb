import { forkListening, stopChild, type ListeningChild } from '../../services/common/spawn.ts';
import { createChaosProxy, type ChaosProxyHandle } from '../toxiproxy/client.ts';

/**
 * Start the embedded proxy as its own process (so its two sockets per client count against its
 * own open-file limit, not the runner's).
 */
export async function startEmbeddedProxy(timeoutMs = 20_000): Promise<ListeningChild & { url: string }> {
  const host = '127.0.0.1';
  const started = await forkListening('chaos proxy', 'chaos/toxiproxy/main.ts', { args: ['--port', '0', '--host', host], startTimeoutMs: timeoutMs });
  return { ...started, url: `http://${host}:${started.port}` };
}

/**
 * One proxy per client group in front of `upstream` (`host:port`), on the given Toxiproxy API or
 * a fresh embedded one. Groups let one seeded plan hit different clients at different times.
 */
export async function openProxyFleet(opts: { apiUrl?: string | undefined; groups: number; upstream: string; namePrefix: string }) {
  const embedded = opts.apiUrl ? undefined : await startEmbeddedProxy();
  const apiUrl = opts.apiUrl ?? embedded!.url;
  const proxies: ChaosProxyHandle[] = [];
  try {
    for (let g = 0; g < opts.groups; g++) proxies.push(await createChaosProxy(apiUrl, { name: `${opts.namePrefix}-g${g}`, upstream: opts.upstream }));
  } catch (err) {
    embedded?.child.kill('SIGKILL');
    throw err;
  }
  return {
    /** Toxiproxy API base URL (embedded child or the user's real Toxiproxy). */
    apiUrl,
    proxies,
    /** Base URL clients of group g connect to. */
    urlFor: (g: number) => `http://${proxies[g]!.host}:${proxies[g]!.port}`,
    async close() {
      if (embedded) {
        await stopChild(embedded, 5000);
      } else {
        // A shared real Toxiproxy: remove only what this run created.
        await Promise.allSettled(proxies.map((p) => p.remove()));
      }
    },
  };
}

export type ProxyFleet = Awaited<ReturnType<typeof openProxyFleet>>;

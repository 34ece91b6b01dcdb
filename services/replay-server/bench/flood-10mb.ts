/** 60 broadcasts of 10 MB, one per stream, on a memory-broker replay server (defaults): RSS and what history holds. `npx tsx services/replay-server/bench/flood-10mb.ts` */
import { startTestServer } from '../testing.ts';
const t = await startTestServer({});
const data = 'x'.repeat(10_000_000);
const rss0 = process.memoryUsage().rss;
let maxRss = 0;
for (let i = 0; i < 60; i++) {
  const r = await t.broadcast({ stream: `flood/${i}`, data });
  if (r.status !== 201) console.log('status', r.status);
  maxRss = Math.max(maxRss, process.memoryUsage().rss);
}
global.gc?.();
const st = await t.srv.broker.stats();
console.log(JSON.stringify({ rss0MB: Math.round(rss0 / 1e6), maxRssMB: Math.round(maxRss / 1e6), endRssMB: Math.round(process.memoryUsage().rss / 1e6), historyBytes: st.historyBytes, historyMessages: st.historyMessages, evicted: st.historyEvictedMessages }));
await t.close();
process.exit(0);

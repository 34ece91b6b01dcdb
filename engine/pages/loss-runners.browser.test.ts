import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOSS_CAUSE_LABELS, LOSS_CAUSES, outcomeLabel, type LossByCause } from '../measure/loss-causes.ts';
import { CHROMIUM, chartProblems, openBrowser, openReport } from './browser-harness.ts';

/**
 * Every runner's page shows "Lost by cause" and "Resume outcomes" when its result carries them:
 * avalanche, deploy-impact and soak as their CLIs write them after small real runs (a real server
 * on port 0 killed and restarted; a real publisher process killed and started again; a short
 * soak), opened in
 * Chromium; the tables on the page say what the JSON says.
 */
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`SKIPPED runner loss report browser tests: ${CHROMIUM} not found`);

interface LossFields {
  lostDeliveries: number;
  lossByCause?: LossByCause;
  resumeOutcomes?: Record<string, number>;
}

function cli(script: string, args: string[]): Promise<{ json: string; html: string; result: LossFields }> {
  const dir = mkdtempSync(join(tmpdir(), 'rebound-loss-runner-'));
  return new Promise((resolve, reject) => {
    execFile('node', ['--import', 'tsx', script, ...args], { env: { ...process.env, RESULTS_DIR: dir }, timeout: 150_000 }, (err, _stdout, stderr) => {
      const json = /^results: (\S+\.json)$/m.exec(stderr)?.[1];
      const html = /^report: (\S+\.html)$/m.exec(stderr)?.[1];
      // Exit 2 = a validity flag fired (a loaded machine's loop lag): the report is still written.
      if (!json || !html || (err && (err as { code?: number }).code !== 2)) return reject(new Error(`${script} failed: ${err?.message}\n${stderr.slice(-2000)}`));
      const parsed = JSON.parse(readFileSync(json, 'utf8')) as LossFields | LossFields[];
      resolve({ json, html, result: Array.isArray(parsed) ? parsed[0]! : parsed });
    });
  });
}

describe.skipIf(!hasChromium)('lost by cause on the avalanche, deploy-impact and soak pages', () => {
  let browser: Awaited<ReturnType<typeof openBrowser>>;
  beforeAll(async () => {
    browser = await openBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  async function tablesOf(html: string): Promise<{ sections: string[]; tables: Record<string, string[][]> }> {
    const page = await browser.context.newPage();
    try {
      await page.goto(pathToFileURL(html).href);
      await page.waitForSelector('body[data-rendered="true"]', { timeout: 20_000 });
      return await page.evaluate(() => {
        const tables: Record<string, string[][]> = {};
        for (const t of document.querySelectorAll<HTMLTableElement>('table[data-table]')) tables[t.dataset.table!] = [...t.rows].map((r) => [...r.cells].map((c) => c.textContent ?? ''));
        return { sections: [...document.querySelectorAll('section.charts h2')].map((h) => h.textContent ?? ''), tables };
      });
    } finally {
      await page.close();
    }
  }

  /** The page's loss and resume tables against the result's own fields. */
  function expectLossTables(r: LossFields, t: Record<string, string[][]>) {
    const by = r.lossByCause!;
    expect(Object.values(by).reduce((a, b) => a + b, 0)).toBe(r.lostDeliveries);
    if (r.lostDeliveries > 0) {
      const rows = t['lost-by-cause']!;
      for (const c of LOSS_CAUSES.filter((x) => by[x])) expect(rows.find((x) => x[0] === LOSS_CAUSE_LABELS[c])![1]!.split(' ')[0]).toBe(by[c]!.toLocaleString('en-US'));
      expect(rows.at(-1)).toEqual(['total lost', r.lostDeliveries.toLocaleString('en-US')]);
    }
    const outcomes = Object.entries(r.resumeOutcomes ?? {});
    if (outcomes.length) for (const [k, v] of outcomes) expect(t['resume-outcomes']).toContainEqual([outcomeLabel(k), v.toLocaleString('en-US')]);
  }

  it('avalanche: ws killed and restarted under 20 clients; the loss while they were away is booked, every reconnect had nothing to resume', { timeout: 200_000 }, async () => {
    const run = await cli('cli/avalanche.ts', ['--target', 'ws', '--clients', '20', '--rate', '10', '--warmup-ms', '1000', '--publish-after-ms', '4000', '--recovery-timeout-ms', '20000', '--settle-ms', '2000', '--seed', '99']);
    const opened = await openReport(browser.context, run.html, 'report-loss-avalanche.png');
    expect(chartProblems(opened, run.html, 200)).toEqual([]);
    const r = run.result;
    expect(r.lossByCause, 'the avalanche result carries lossByCause').toBeDefined();
    expect(r.lostDeliveries).toBeGreaterThan(0);
    const { sections, tables } = await tablesOf(run.html);
    expect(sections).toEqual(expect.arrayContaining(['Lost by cause', 'Resume outcomes']));
    expectLossTables(r, tables);
    // ws is at-most-once: nothing it lost while away could have been made up.
    expect(r.lossByCause!.offline_nothing_to_resume).toBeGreaterThan(0);
    expect(Object.keys(r.resumeOutcomes ?? {})).toEqual(['nothing_to_resume']);
  });

  it('deploy-impact: the publisher killed and started again while replay clients stay connected; the page carries the (empty) books', { timeout: 200_000 }, async () => {
    const run = await cli('cli/deploy-impact.ts', ['--target', 'replay', '--clients', '20', '--rate', '10', '--warmup-ms', '1500', '--publisher-down-ms', '1000', '--publish-after-ms', '5000', '--settle-ms', '2000', '--seed', '11']);
    const opened = await openReport(browser.context, run.html, 'report-loss-deploy-impact.png');
    expect(chartProblems(opened, run.html, 200)).toEqual([]);
    const r = run.result;
    expect(r.lossByCause, 'the deploy-impact result carries lossByCause').toBeDefined();
    const { sections, tables } = await tablesOf(run.html);
    expect(sections).toContain('Lost by cause');
    expectLossTables(r, tables);
  });

  it('soak: a short ws soak; its detail carries the books, and its page shows them', { timeout: 200_000 }, async () => {
    // --p99-slack-ms 100: a loaded box moves an 8 s soak's late p99 past early +50% +10 ms (CI: 7 -> 22 ms),
    // and this test is about the page, not the latency rule (rules.test.ts trips that).
    const run = await cli('cli/soak.ts', ['--target', 'ws', '--duration-sec', '8', '--sample-sec', '2', '--warmup-sec', '2', '--clients', '10', '--rate', '10', '--ramp', '100', '--drain-sec', '1', '--p99-slack-ms', '100']);
    const opened = await openReport(browser.context, run.html, 'report-loss-soak.png');
    expect(opened.pageErrors).toEqual([]);
    const detail = (run.result as unknown as { detail: LossFields }).detail;
    expect(detail.lossByCause, 'the soak detail carries lossByCause').toBeDefined();
    const { sections, tables } = await tablesOf(run.html);
    expect(sections).toContain('Lost by cause');
    expectLossTables({ ...detail, lostDeliveries: Object.values(detail.lossByCause!).reduce((a, b) => a + b, 0) }, tables);
  });
});

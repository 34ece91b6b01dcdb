import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { downsampleChart } from './downsample.ts';
import type { BannerFlag, ReportModel, Section } from './types.ts';

const require = createRequire(import.meta.url);
let assets: { js: string; css: string; browser: string } | undefined;

/** uPlot and the page script, read once and inlined: the page must open from a file with no network. */
function loadAssets() {
  assets ??= {
    js: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
    css: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
    browser: readFileSync(new URL('./browser.js', import.meta.url), 'utf8'),
  };
  return assets;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
/** Inlined code must not contain `</script`: it would end the element early. */
const scriptSafe = (s: string) => s.replace(/<\/(script)/gi, '<\\/$1');

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#222;background:#fafafa}
main{max-width:1400px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:22px;margin:8px 0 2px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ddd;padding-bottom:4px}
.sub{color:#555;margin:0 0 12px}
.banner{border-radius:6px;padding:10px 14px;margin:12px 0;border:1px solid}
.banner.fatal{background:#fdecea;border-color:#c62828}.banner.warning{background:#fff4e5;border-color:#ef6c00}.banner.valid{background:#edf7ed;border-color:#2e7d32}
.banner strong{display:block;margin-bottom:4px}.banner ul{margin:4px 0 0;padding-left:20px}.banner code{font-size:12px;color:#555}
.verdicts{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
.verdict{flex:1 1 220px;border-radius:6px;padding:10px 12px;color:#fff;border-left:10px solid}
.verdict.good{background:#2e7d32}.verdict.late{background:#ef6c00}.verdict.lost{background:#c62828}
.verdict .name{font-weight:700;font-size:16px}.verdict .words{font-size:15px}.verdict .detail{font-size:12px;opacity:.9;margin-top:4px}
.repro{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 12px;margin:12px 0}
.repro code{font:13px ui-monospace,monospace;word-break:break-all}
table{border-collapse:collapse;background:#fff;font-size:13px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px}
figure.chart{margin:0;background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px}
figure.chart h3{font-size:15px;margin:0 0 2px}figure.chart figcaption{font-size:12px;color:#555;margin-bottom:6px}
.omitted{color:#666;font-size:13px}
footer{color:#777;font-size:12px;margin-top:32px}
`;

function banner(model: ReportModel): string {
  if (!model.flags) return '';
  const fatal = model.flags.filter((f) => f.severity === 'fatal');
  const warn = model.flags.filter((f) => f.severity === 'warning');
  const item = (f: BannerFlag) => `<li data-flag="${esc(f.code)}"><b>${esc(f.target)}:</b> ${esc(f.plain)} <code>${esc(f.code)}: ${esc(f.message)}</code></li>`;
  const out: string[] = [];
  if (fatal.length) out.push(`<div class="banner fatal" data-severity="fatal"><strong>Not valid: do not quote these numbers.</strong><ul>${fatal.map(item).join('')}</ul></div>`);
  if (warn.length) out.push(`<div class="banner warning" data-severity="warning"><strong>Valid, with warnings: read these before the numbers.</strong><ul>${warn.map(item).join('')}</ul></div>`);
  if (!out.length) out.push('<div class="banner valid" data-severity="none"><strong>Valid: the runner hit none of its own limits.</strong></div>');
  return `<section id="validity">${out.join('')}</section>`;
}

const verdictColors = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#999999', '#000000'];

function verdictTiles(model: ReportModel): string {
  if (!model.verdicts.length) return '';
  return `<section class="verdicts" id="verdicts">${model.verdicts
    .map((v, i) => `<div class="verdict ${v.level}" data-target="${esc(v.target)}" data-level="${v.level}" style="border-left-color:${verdictColors[i % verdictColors.length]}"><div class="name">${esc(v.target)}</div><div class="words">${esc(v.words)}</div><div class="detail">${esc(v.detail)}</div></div>`)
    .join('')}</section>`;
}

function summaryTable(rows: string[][]): string {
  if (!rows.length) return '';
  const [head, ...body] = rows;
  return `<h2>Numbers</h2><table id="summary"><thead><tr>${head!.map((c) => `<th>${esc(c)}</th>`).join('')}</tr></thead><tbody>${body.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('')}</tbody></table>`;
}

function section(s: Section, si: number): string {
  const figs = s.charts
    .map((c) => `<figure class="chart" id="chart-${c.id}-${si}" data-chart="${c.id}"><h3>${esc(c.title)}</h3><figcaption>${esc(c.note)}</figcaption><div class="plot"></div></figure>`)
    .join('');
  const omitted = s.omitted?.length ? `<ul class="omitted">${s.omitted.map((o) => `<li>${esc(o)}</li>`).join('')}</ul>` : '';
  return `<section class="charts"><h2>${esc(s.title)}</h2>${s.intro ? `<p>${esc(s.intro)}</p>` : ''}<div class="grid">${figs}</div>${omitted}</section>`;
}

/** The one page template: any runner's ReportModel becomes a self-contained HTML document. */
export function renderPage(model: ReportModel): string {
  const a = loadAssets();
  // Draw from a binned copy; the model's own series stay exact.
  const drawn: ReportModel = { ...model, sections: model.sections.map((s) => ({ ...s, charts: s.charts.map((c) => downsampleChart(c)) })) };
  const data = JSON.stringify({ sections: drawn.sections.map((s) => ({ charts: s.charts })) }).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${esc(model.title)}</title>
<style>${a.css}</style><style>${STYLE}</style></head>
<body><main>
<h1>${esc(model.title)}</h1><p class="sub">${esc(model.subtitle)}</p>
${banner(model)}
${verdictTiles(model)}
<div class="repro" id="repro">Reproduce: <code>${esc(model.command)}</code>${model.seed !== null ? ` &nbsp; seed <b id="seed">${model.seed}</b>` : ''}</div>
${drawn.sections.map(section).join('\n')}
${summaryTable(model.summary)}
<footer>Generated ${esc(model.generatedAt)} by Rebound. Self-contained: charts drawn with uPlot, inlined; no network access.</footer>
</main>
<script type="application/json" id="report-data">${data}</script>
<script>${scriptSafe(a.js)}</script>
<script>${scriptSafe(a.browser)}</script>
</body></html>
`;
}

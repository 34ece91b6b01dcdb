import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { colorFor, fmtInt } from './charts/common.ts';
import { downsampleChart } from './downsample.ts';
import type { BannerFlag, ReportModel, Section, StackSpec } from './types.ts';

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
.stackrow{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start;margin:0 0 16px}
figure.stack{margin:0;background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px;flex:1 1 560px;max-width:760px}
figure.stack h3{font-size:15px;margin:0 0 2px}figure.stack figcaption{font-size:12px;color:#555;margin-bottom:6px}
ul.legend{list-style:none;padding:0;margin:6px 0 0;display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px}
ul.legend .swatch{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-2px;border:1px solid #0003}
table.figures{margin:0 0 12px}table.figures caption{text-align:left;font-weight:600;padding:2px 0 4px;font-size:13px}
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

function verdictTiles(model: ReportModel): string {
  if (!model.verdicts.length) return '';
  return `<section class="verdicts" id="verdicts">${model.verdicts
    .map((v, i) => `<div class="verdict ${v.level}" data-target="${esc(v.target)}" data-level="${v.level}" style="border-left-color:${colorFor(i)}"><div class="name">${esc(v.target)}</div><div class="words">${esc(v.words)}</div><div class="detail">${esc(v.detail)}</div></div>`)
    .join('')}</section>`;
}

/** A table's head and body, the first row the header; `scoped` makes each row's first cell its header (the figures tables). */
function tableRows([head, ...body]: string[][], scoped: boolean): string {
  const th = scoped ? ' scope="col"' : '';
  return `<thead><tr>${head!.map((c) => `<th${th}>${esc(c)}</th>`).join('')}</tr></thead><tbody>${body.map((r) => `<tr>${r.map((c, i) => (scoped && i === 0 ? `<th scope="row">${esc(c)}</th>` : `<td>${esc(c)}</td>`)).join('')}</tr>`).join('')}</tbody>`;
}

/**
 * A stacked bar chart as inline SVG: drawn by the browser from markup (no script, nothing to
 * fail at load), one horizontal bar per target on one shared scale, every segment with a
 * tooltip <title>, and a <desc> that says every figure for a screen reader.
 */
function stackSvg(st: StackSpec, si: number): string {
  const id = `stack-${esc(st.id)}-${si}`;
  const LABEL_W = 170;
  const BAR_W = 420;
  const TOTAL_W = 110;
  const ROW_H = 26;
  const TOP = 6;
  const AXIS_H = 22;
  const width = LABEL_W + BAR_W + TOTAL_W;
  const height = TOP + st.bars.length * ROW_H + AXIS_H;
  // The scale ends on a round number (1, 2 or 5 x 10^k) so the middle tick reads whole: 0, 25, 50 rather than 0, 23, 45.
  const top = Math.max(1, ...st.bars.map((b) => b.total));
  const mag = 10 ** Math.floor(Math.log10(top));
  const max = [1, 2, 5, 10].map((m) => m * mag).find((v) => v >= top)!;
  const x = (v: number) => (v / max) * BAR_W;
  const desc = st.bars.map((b) => `${b.label}: ${fmtInt(b.total)} ${st.unit}${b.segments.length ? `, ${b.segments.map((g) => `${g.label} ${fmtInt(g.value)}`).join(', ')}` : ''}.`).join(' ');
  const bars = st.bars
    .map((b, k) => {
      const y = TOP + k * ROW_H;
      let at = LABEL_W;
      const segs = b.segments
        .map((g) => {
          const w = x(g.value);
          const r = `<rect class="seg" x="${at.toFixed(2)}" y="${y + 3}" width="${Math.max(w, 0.5).toFixed(2)}" height="${ROW_H - 8}" fill="${esc(g.color)}" data-target="${esc(b.label)}" data-cause="${esc(g.key)}" data-value="${g.value}"><title>${esc(`${b.label}: ${g.label}, ${fmtInt(g.value)} of ${fmtInt(b.total)}`)}</title></rect>`;
          at += w;
          return r;
        })
        .join('');
      return `<g class="bar" data-target="${esc(b.label)}" data-total="${b.total}"><text x="${LABEL_W - 6}" y="${y + ROW_H / 2 + 2}" text-anchor="end" dominant-baseline="middle" font-size="12">${esc(b.label)}</text>${segs}<text class="total" x="${(at + 5).toFixed(2)}" y="${y + ROW_H / 2 + 2}" dominant-baseline="middle" font-size="12">${esc(fmtInt(b.total))}</text></g>`;
    })
    .join('');
  const axisY = TOP + st.bars.length * ROW_H;
  const ticks = [0, 0.5, 1].map((f) => `<line x1="${LABEL_W + f * BAR_W}" x2="${LABEL_W + f * BAR_W}" y1="${TOP}" y2="${axisY + 3}" stroke="#ccc"/><text x="${LABEL_W + f * BAR_W}" y="${axisY + 14}" text-anchor="middle" font-size="11" fill="#555">${esc(fmtInt(f * max))}</text>`).join('');
  const legend = `<ul class="legend" aria-label="legend">${st.legend.map((l) => `<li data-cause="${esc(l.key)}"><span class="swatch" style="background:${esc(l.color)}"></span>${esc(l.label)}</li>`).join('')}</ul>`;
  return `<figure class="stack" id="${id}" data-stack="${esc(st.id)}"><h3 id="${id}-h">${esc(st.title)}</h3><figcaption>${esc(st.note)}</figcaption><svg role="img" aria-labelledby="${id}-title ${id}-desc" viewBox="0 0 ${width} ${height}" width="100%" style="max-width:${width}px" font-family="system-ui,sans-serif"><title id="${id}-title">${esc(`${st.title} (${st.unit})`)}</title><desc id="${id}-desc">${esc(desc)}</desc>${ticks}${bars}</svg>${legend}</figure>`;
}

function section(s: Section, si: number): string {
  const stacks = s.stacks?.length ? s.stacks.map((st) => stackSvg(st, si)) : [];
  const tables = (s.tables ?? []).map((t) => `<table class="figures" id="table-${esc(t.id)}-${si}" data-table="${esc(t.id)}"><caption>${esc(t.caption)}</caption>${tableRows(t.rows, true)}</table>`);
  // The comparison's stacked bar with its numbers beside it; tables alone otherwise.
  const stackRow = stacks.length ? `<div class="stackrow">${stacks.join('')}<div>${tables.join('')}</div></div>` : tables.length ? `<div class="stackrow"><div>${tables.join('')}</div></div>` : '';
  const figs = s.charts
    .map((c) => `<figure class="chart" id="chart-${c.id}-${si}" data-chart="${c.id}"><h3>${esc(c.title)}</h3><figcaption>${esc(c.note)}</figcaption><div class="plot"></div></figure>`)
    .join('');
  const omitted = s.omitted?.length ? `<ul class="omitted">${s.omitted.map((o) => `<li>${esc(o)}</li>`).join('')}</ul>` : '';
  // Stacks and tables first: with one target, its bar chart follows its table.
  return `<section class="charts"><h2>${esc(s.title)}</h2>${s.intro ? `<p>${esc(s.intro)}</p>` : ''}${stacks.length ? stackRow : ''}<div class="grid">${figs}</div>${stacks.length ? '' : stackRow}${omitted}</section>`;
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
${model.summary.length ? `<h2>Numbers</h2><table id="summary">${tableRows(model.summary, false)}</table>` : ''}
<footer>Generated ${esc(model.generatedAt)} by Rebound. Self-contained: charts drawn with uPlot, inlined; no network access.</footer>
</main>
<script type="application/json" id="report-data">${data}</script>
<script>${scriptSafe(a.js)}</script>
<script>${scriptSafe(a.browser)}</script>
</body></html>
`;
}

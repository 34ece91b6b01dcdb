// Runs inside the report page (inlined at generation time, next to uPlot): draws every ChartSpec
// from the embedded JSON. Plain browser JavaScript on purpose: it is not part of the Node build.
(function () {
  'use strict';
  var t0 = performance.now();
  var model = JSON.parse(document.getElementById('report-data').textContent);

  function drawOverlays(u, spec) {
    var ctx = u.ctx;
    var dpr = window.devicePixelRatio || 1;
    var top = u.bbox.top;
    var bottom = u.bbox.top + u.bbox.height;
    ctx.save();
    ctx.font = Math.round(10 * dpr) + 'px sans-serif';
    ctx.textBaseline = 'top';
    (spec.markers || []).forEach(function (m, i) {
      var x1 = u.valToPos(m.x, 'x', true);
      if (!isFinite(x1)) return;
      if (m.x2 !== undefined) {
        var x2 = u.valToPos(m.x2, 'x', true);
        ctx.fillStyle = m.color + '22';
        ctx.fillRect(x1, top, Math.max(1, x2 - x1), bottom - top);
      }
      ctx.strokeStyle = m.color;
      ctx.lineWidth = dpr;
      ctx.setLineDash([4 * dpr, 3 * dpr]);
      ctx.beginPath();
      ctx.moveTo(x1, top);
      ctx.lineTo(x1, bottom);
      ctx.stroke();
      ctx.fillStyle = m.color;
      // Stagger labels so neighbouring events stay readable.
      ctx.fillText(m.label, x1 + 3 * dpr, top + 2 * dpr + (i % 4) * 12 * dpr);
    });
    (spec.hlines || []).forEach(function (h) {
      var y = u.valToPos(h.y, h.axis === 'y2' ? 'y2' : 'y', true);
      if (!isFinite(y)) return;
      ctx.strokeStyle = h.color;
      ctx.lineWidth = 2 * dpr;
      ctx.setLineDash([8 * dpr, 4 * dpr]);
      ctx.beginPath();
      ctx.moveTo(u.bbox.left, y);
      ctx.lineTo(u.bbox.left + u.bbox.width, y);
      ctx.stroke();
      ctx.fillStyle = h.color;
      ctx.textBaseline = 'bottom';
      ctx.fillText(h.label, u.bbox.left + 4 * dpr, y - 2 * dpr);
    });
    ctx.restore();
  }

  // uPlot lays out axes on its first (deferred) draw: tick labels are known only then.
  function markTicks(u, fig) {
    fig.setAttribute('data-x-ticks', String((u.axes[0]._values || []).length));
    fig.setAttribute('data-y-ticks', String((u.axes[1]._values || []).length));
    fig.setAttribute('data-drawn', 'true');
  }

  function render(spec, fig) {
    var holder = fig.querySelector('.plot');
    var width = Math.max(320, holder.clientWidth || 560);
    var hasY2 = spec.series.some(function (s) { return s.axis === 'y2'; });
    var scales = { x: { time: false } };
    if (spec.xLog) scales.x.distr = 3;
    if (spec.yRange) scales.y = { range: [spec.yRange[0], spec.yRange[1]] };
    if (hasY2) scales.y2 = { range: function (u, min, max) { return [0, Math.max(1, max) * 1.05]; } };
    var axes = [
      { label: spec.xLabel, stroke: '#333', grid: { stroke: '#eee' } },
      { label: spec.yLabel, stroke: '#333', grid: { stroke: '#eee' }, size: 60 },
    ];
    if (spec.xIntegers) axes[0].incrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];
    if (hasY2) axes.push({ scale: 'y2', side: 1, label: spec.y2Label || '', stroke: '#666', grid: { show: false }, size: 60 });
    var series = [{ label: spec.xLabel }].concat(
      spec.series.map(function (s) {
        var o = { label: s.label, stroke: s.color, width: s.width || 1.5, spanGaps: !!s.spanGaps, scale: s.axis === 'y2' ? 'y2' : 'y', points: { show: !!s.points } };
        if (s.dash && s.dash.length) o.dash = s.dash;
        if (s.bars) {
          o.paths = uPlot.paths.bars({ size: [0.8, 40] });
          o.fill = s.color + '88';
          o.width = 0;
        }
        return o;
      })
    );
    var data = [spec.x].concat(spec.series.map(function (s) { return s.values; }));
    var u = new uPlot({ width: width, height: 280, scales: scales, axes: axes, series: series, legend: { live: false }, hooks: { draw: [function (u) { drawOverlays(u, spec); markTicks(u, fig); }] } }, data, holder);
    var points = 0;
    spec.series.forEach(function (s) { s.values.forEach(function (v) { if (v !== null && isFinite(v)) points++; }); });
    // Attributes the browser test (and anyone curious) can read: what was drawn, on which axes.
    fig.setAttribute('data-points', String(points));
    fig.setAttribute('data-series', String(spec.series.length));
    fig.setAttribute('data-x-label', spec.xLabel);
    fig.setAttribute('data-y-label', spec.yLabel);
    fig.setAttribute('data-markers', String((spec.markers || []).length + (spec.hlines || []).length));
    return u;
  }

  var charts = (window.__reportCharts = []);
  model.sections.forEach(function (section, si) {
    section.charts.forEach(function (spec) {
      var fig = document.getElementById('chart-' + spec.id + '-' + si);
      try {
        charts.push(render(spec, fig));
      } catch (e) {
        fig.setAttribute('data-error', String(e && e.message));
        fig.querySelector('.plot').textContent = 'chart failed to render: ' + (e && e.message);
      }
    });
  });
  // uPlot draws in a microtask after construction; a task later, every chart has been drawn.
  setTimeout(function () {
    document.body.setAttribute('data-charts', String(charts.length));
    document.body.setAttribute('data-render-ms', String(Math.round(performance.now() - t0)));
    document.body.setAttribute('data-rendered', 'true');
  }, 0);
})();

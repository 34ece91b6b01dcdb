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
    var left = u.bbox.left;
    var right = u.bbox.left + u.bbox.width;
    var lineH = 12 * dpr;
    var maxLanes = Math.max(1, Math.floor((bottom - top) / lineH) - 1);
    // Right end of the last label in each lane; every label box drawn, in CSS px, for the tests.
    var lanes = [];
    var boxes = [];
    ctx.save();
    ctx.font = Math.round(10 * dpr) + 'px sans-serif';
    ctx.textBaseline = 'top';
    var placed = (spec.markers || [])
      .map(function (m) { return { m: m, x1: u.valToPos(m.x, 'x', true) }; })
      .filter(function (p) { return isFinite(p.x1); })
      .sort(function (a, b) { return a.x1 - b.x1; });
    placed.forEach(function (p) {
      var m = p.m;
      var x1 = p.x1;
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
      // A label that would run past the plot's right edge goes to the left of its line.
      var w = ctx.measureText(m.label).width;
      var tx = x1 + 3 * dpr;
      if (tx + w > right) tx = Math.max(left, x1 - 3 * dpr - w);
      // First lane whose last label ends before this one starts: neighbouring spans never overprint
      // (a fixed i % 4 stagger did once four or more labels crowded together).
      var lane = 0;
      while (lane < lanes.length && lanes[lane] > tx - 4 * dpr) lane++;
      if (lane >= maxLanes) lane = lanes.indexOf(Math.min.apply(null, lanes));
      lanes[lane] = tx + w;
      var ty = top + 2 * dpr + lane * lineH;
      ctx.fillText(m.label, tx, ty);
      boxes.push([tx / dpr, ty / dpr, w / dpr, 10]);
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
    return boxes;
  }

  // uPlot lays out axes on its first (deferred) draw: tick labels are known only then.
  function markTicks(u, fig, boxes) {
    fig.setAttribute('data-x-ticks', String((u.axes[0]._values || []).length));
    fig.setAttribute('data-y-ticks', String((u.axes[1]._values || []).length));
    fig.setAttribute('data-y-tick-labels', JSON.stringify((u.axes[1]._values || []).map(String)));
    fig.setAttribute('data-label-boxes', JSON.stringify(boxes));
    fig.setAttribute('data-plot-width', String(u.ctx.canvas.width / (window.devicePixelRatio || 1)));
    // The y axis' width and the widest tick label it must hold, CSS px: the label fits when size >= need.
    var ya = u.axes[1];
    u.ctx.save();
    u.ctx.font = ya.font[0];
    var need = (ya._values || []).reduce(function (a, v) { return Math.max(a, u.ctx.measureText(String(v)).width / (window.devicePixelRatio || 1)); }, 0);
    u.ctx.restore();
    fig.setAttribute('data-y-axis-fit', JSON.stringify({ size: ya._size, need: Math.ceil(need + ((ya.ticks && ya.ticks.size) || 10) + (ya.gap || 5)) }));
    fig.setAttribute('data-drawn', 'true');
  }

  // Wide enough for the longest tick label (a fixed 60 px cut "1,234,567" and long decimals short).
  function axisSize(u, values, axisIdx, cycleNum) {
    var axis = u.axes[axisIdx];
    if (cycleNum > 1) return axis._size;
    var longest = (values || []).reduce(function (a, v) { return String(v).length > a.length ? String(v) : a; }, '');
    var size = ((axis.ticks && axis.ticks.size) || 10) + (axis.gap || 5) + 8;
    if (longest) {
      u.ctx.font = axis.font[0];
      size += u.ctx.measureText(longest).width / (window.devicePixelRatio || 1);
    }
    return Math.ceil(Math.max(50, size));
  }

  function render(spec, fig) {
    var holder = fig.querySelector('.plot');
    var width = Math.max(320, holder.clientWidth || 560);
    var hasY2 = spec.series.some(function (s) { return s.axis === 'y2'; });
    var scales = { x: { time: false } };
    if (spec.xLog) scales.x.distr = 3;
    if (spec.yRange) scales.y = { range: [spec.yRange[0], spec.yRange[1]] };
    // A (nearly) flat series: uPlot pads by a fraction of the spread, so ticks land closer than
    // their labels' precision and all read the same value (88.167, 88.167, ...). Pad by 5% of the
    // value instead.
    else scales.y = { range: function (u, min, max) {
      if (min == null || max == null) return [0, 1];
      var mag = Math.max(Math.abs(min), Math.abs(max));
      if (max - min <= mag * 1e-3) { var pad = mag > 0 ? mag * 0.05 : 1; return [min - pad, max + pad]; }
      return uPlot.rangeNum(min, max, 0.1, true);
    } };
    if (hasY2) scales.y2 = { range: function (u, min, max) { return [0, Math.max(1, max) * 1.05]; } };
    var axes = [
      { label: spec.xLabel, stroke: '#333', grid: { stroke: '#eee' } },
      { label: spec.yLabel, stroke: '#333', grid: { stroke: '#eee' }, size: axisSize },
    ];
    if (spec.xIntegers) axes[0].incrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];
    if (hasY2) axes.push({ scale: 'y2', side: 1, label: spec.y2Label || '', stroke: '#666', grid: { show: false }, size: axisSize });
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
    var u = new uPlot({ width: width, height: 280, scales: scales, axes: axes, series: series, legend: { live: false }, hooks: { draw: [function (u) { markTicks(u, fig, drawOverlays(u, spec)); }] } }, data, holder);
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

/* graph.js — graph data (`anvil graph`), answer first: per chart the best
 * and the worst point (which way is better: the metric registry's); then
 * one chart of grouped bars per metric, split into small multiples of at
 * most A.MAX_SERIES series; the metric's definition as its caption. */
(function (A) {
  "use strict";
  var el = A.el, plot = A.plot, color = A.color, fmt = A.fmt, root;

  function prec(v) { return Math.abs(v) >= 100 ? 1 : 2; }

  /* Every point of a chart with its series' label. */
  function points(ch) {
    var all = [];
    ch.series.forEach(function (s) {
      s.points.forEach(function (p) { if (p.value != null) all.push({ series: s.label, x: p.x, value: p.value }); });
    });
    return all;
  }

  function answer(g) {
    var box = el("div", "graph-answer", null, root);
    el("div", "title", "Per chart: the best and the worst point", box);
    var t = el("table", "heat", null, box), tr = el("tr", null, null, t);
    ["chart", "metric", "better", "best (series, x)", "value", "worst (series, x)", "value"].forEach(function (h) {
      el("th", h === "value" ? null : "l", h, tr);
    });
    g.charts.forEach(function (ch) {
      var p = points(ch).sort(function (a, b) { return a.value - b.value; });
      var r = el("tr", null, null, t);
      el("td", "l", ch.title, r);
      el("td", "l", ch.y_label, r);
      el("td", "l", ch.better === "neither" ? "n/a" : ch.better, r);
      if (!p.length || ch.better === "neither") {
        var lo = p[0], hi = p[p.length - 1];
        el("td", "l", lo ? "range" : "no points", r);
        el("td", null, lo ? fmt(lo.value, prec(lo.value)) + "–" + fmt(hi.value, prec(hi.value)) : "n/a", r);
        el("td", "l", "", r);
        el("td", null, "", r);
        return;
      }
      var best = ch.better === "lower" ? p[0] : p[p.length - 1], worst = ch.better === "lower" ? p[p.length - 1] : p[0];
      el("td", "l", best.series + ", " + best.x, r);
      el("td", null, fmt(best.value, prec(best.value)), r);
      el("td", "l", worst.series + ", " + worst.x, r);
      el("td", null, fmt(worst.value, prec(worst.value)), r);
    });
  }

  /* ---- grouped bars, at most A.MAX_SERIES series a chart ---- */

  function bars(ch, series0, k, parts) {
    var list = ch.series.slice(k * A.MAX_SERIES, (k + 1) * A.MAX_SERIES), xs = [];
    list.forEach(function (s) { s.points.forEach(function (p) { if (xs.indexOf(p.x) < 0) xs.push(p.x); }); });
    var n = list.length, w = 0.8 / n;
    var aligned = [xs.map(function (_, j) { return j; })], series = [{ label: ch.x_label }];
    list.forEach(function (s, i) {
      var col = xs.map(function () { return null; });
      s.points.forEach(function (p) { col[xs.indexOf(p.x)] = p.value; });
      aligned.push(col);
      series.push({
        label: s.label, stroke: color(i), fill: color(i), width: 1,
        paths: uPlot.paths.bars({ disp: {
          x0: { unit: 1, values: function (u) { return u.data[0].map(function (j) { return j - 0.4 + i * w; }); } },
          size: { unit: 1, values: function (u) { return u.data[0].map(function () { return w * 0.9; }); } } } }),
        points: { show: false }
      });
    });
    var part = parts > 1 ? " — series " + (series0 + 1) + "–" + (series0 + n) + " of " + ch.series.length : "";
    plot(root, ch.title + " (" + ch.y_label + ")" + part, ch.metric + (ch.def ? ": " + ch.def : ""), {
      scales: { x: { time: false, range: [-0.5, xs.length - 0.5] }, y: { range: function (u, lo, hi) { return [0, hi * 1.1]; } } },
      axes: [{ label: ch.x_label, splits: function () { return aligned[0]; }, values: function (u, sp) { return sp.map(function (j) { return xs[j] || ""; }); } },
             { label: ch.y_label, size: 70 }], series: series
    }, aligned);
  }

  function chart(ch) {
    var parts = Math.max(1, Math.ceil(ch.series.length / A.MAX_SERIES));
    for (var k = 0; k < parts; k++) bars(ch, k * A.MAX_SERIES, k, parts);
  }

  A.sections.graphs = function (parent, data) {
    root = parent;
    data.graphs.forEach(function (g) {
      A.section(root, "Graph data: " + g.title);
      if (g.subtitle) A.caption(root, "sub", g.subtitle);
      answer(g);
      g.charts.forEach(chart);
    });
  };
})(window.anvil);

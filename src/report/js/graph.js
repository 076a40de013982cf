/* graph.js — graph data (`anvil graph`): one chart of grouped bars per metric. */
(function (A) {
  "use strict";
  var el = A.el, plot = A.plot, line = A.line, color = A.color, fmt = A.fmt, sorted = A.sorted, root;
  /* ---- graph data: grouped bars ---- */

  function bars(g, ch) {
    var xs = [];
    ch.series.forEach(function (s) { s.points.forEach(function (p) { if (xs.indexOf(p.x) < 0) xs.push(p.x); }); });
    var n = ch.series.length, w = 0.8 / n;
    var aligned = [xs.map(function (_, k) { return k; })], series = [{ label: ch.x_label }];
    ch.series.forEach(function (s, i) {
      var col = xs.map(function () { return null; });
      s.points.forEach(function (p) { col[xs.indexOf(p.x)] = p.value; });
      aligned.push(col);
      series.push({
        label: s.label, stroke: color(i), fill: color(i), width: 1,
        paths: uPlot.paths.bars({ disp: {
          x0: { unit: 1, values: function (u) { return u.data[0].map(function (k) { return k - 0.4 + i * w; }); } },
          size: { unit: 1, values: function (u) { return u.data[0].map(function () { return w * 0.9; }); } } } }),
        points: { show: false }
      });
    });
    plot(root, ch.title + " (" + ch.y_label + ")", ch.metric + (ch.def ? ": " + ch.def : ""), {
      scales: { x: { time: false, range: [-0.5, xs.length - 0.5] }, y: { range: function (u, lo, hi) { return [0, hi * 1.1]; } } },
      axes: [{ label: ch.x_label, splits: function () { return aligned[0]; }, values: function (u, sp) { return sp.map(function (k) { return xs[k] || ""; }); } },
             { label: ch.y_label }], series: series
    }, aligned);
  }


  A.sections.graphs = function (parent, data) {
    root = parent;
    data.graphs.forEach(function (g) {
      A.section(root, "Graph data: " + g.title);
      if (g.subtitle) el("div", "sub", g.subtitle, root);
      g.charts.forEach(function (ch) { bars(g, ch); });
    });
  };
})(window.anvil);

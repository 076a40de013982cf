/* curve.js — load curves: throughput, tail latency against the SLO lines, goodput and its knee, cost, GPU clock and temperature per load point. */
(function (A) {
  "use strict";
  var el = A.el, plot = A.plot, line = A.line, color = A.color, fmt = A.fmt, sorted = A.sorted, root;
  /* ---- load curves ---- */

  function curveChart(c, key, title, unit, slo, def) {
    var sets = [], series = [{ label: "load" }];
    c.targets.forEach(function (t, i) {
      sets.push([t.x, t[key]]);
      series.push(line(t.name, i, { points: { show: true, size: 6 } }));
    });
    var aligned = uPlot.join(sets);
    if (slo != null && isFinite(slo)) {
      aligned.push(aligned[0].map(function () { return slo; }));
      series.push({ label: "SLO " + slo + " " + unit, stroke: "#000000", dash: [6, 4], width: 1, points: { show: false } });
    }
    if (key === "goodput") {
      c.targets.forEach(function (t, i) {
        var best = -1;
        t.goodput.forEach(function (g, k) { if (g != null && (best < 0 || g > t.goodput[best])) best = k; });
        aligned.push(aligned[0].map(function (x) { return best >= 0 && x === t.x[best] ? t.goodput[best] : null; }));
        series.push({ label: "knee: " + t.name, stroke: color(i), fill: color(i), paths: function () { return null; },
                      points: { show: true, size: 12, fill: color(i) } });
      });
    }
    plot(root, c.name + ": " + title + " (" + unit + ")", def, {
      scales: { x: { time: false } }, axes: [{ label: c.load_label }, { label: unit }], series: series
    }, aligned);
  }


  A.sections.curves = function (parent, data) {
    var d = data.definitions;
    root = parent;
    data.curves.forEach(function (c) {
      A.section(root, "Load curve: " + c.name);
      curveChart(c, "tps", "output throughput", "tokens/s", null, d.throughput);
      curveChart(c, "ttft_p99", "TTFT p99, median across repeats", "ms", c.slo_ttft_ms, d.ttft);
      curveChart(c, "tpot_p99", "TPOT p99, median across repeats", "ms", c.slo_tpot_ms, d.tpot);
      curveChart(c, "goodput", "goodput (the knee: most good requests/s)", "requests/s", null, d.goodput);
      if (c.priced) curveChart(c, "cost", "cost per million output tokens", "USD", null, d.cost);
      if (c.targets.some(function (t) { return t.gpu; })) {
        curveChart(c, "sm_mhz", "GPU SM clock, median across repeats", "MHz", null,
                   "the GPUs' SM clock sampled during the point's rounds (a falling clock: power or thermal limits)");
        curveChart(c, "max_temp_c", "GPU temperature, the highest sampled", "°C", null,
                   "the hottest GPU sample during the point's rounds");
      }
    });
  };
})(window.anvil);

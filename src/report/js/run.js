/* run.js — runs: summary cards, latency distributions, per-request timelines, throughput, the server's metrics and GPU telemetry over time on the run's clock. */
(function (A) {
  "use strict";
  var el = A.el, plot = A.plot, line = A.line, color = A.color, fmt = A.fmt, sorted = A.sorted, root;
  /* tail axis ticks: -log10(1 - p) and the percentile's name */
  var TAIL_TICKS = [[1, "p90"], [Math.log10(20), "p95"], [2, "p99"], [Math.log10(200), "p99.5"], [3, "p99.9"]];
  /* ---- runs ---- */

  function cards(runs) {
    var wrap = el("div", "cards", null, root);
    runs.forEach(function (r, i) {
      var c = el("div", "card", null, wrap);
      c.style.borderTop = "4px solid " + color(i);
      el("div", "run", r.label, c);
      r.cards.forEach(function (kv) {
        el("div", "k", kv[0], c);
        el("div", "v", kv[1], c);
      });
    });
  }

  function cdfChart(runs, key, title, def) {
    var sets = [], series = [{ label: "ms" }];
    runs.forEach(function (r, i) {
      var v = sorted(r.req[key]).filter(function (x) { return x > 0; });
      if (!v.length) return;
      sets.push([v, v.map(function (_, k) { return (k + 1) / v.length; })]);
      series.push(line(r.label, i));
    });
    if (!sets.length) return;
    plot(root, title + " — CDF (ms, log scale)", def, {
      scales: { x: { time: false, distr: 3 }, y: { range: [0, 1] } },
      axes: [{ label: "ms" }, { label: "share of requests" }], series: series
    }, uPlot.join(sets));
    var tails = [], tseries = [{ label: "percentile" }];
    runs.forEach(function (r, i) {
      var v = sorted(r.req[key]);
      var xs = [], ys = [];
      v.forEach(function (x, k) {
        var q = (k + 0.5) / v.length;       /* Hazen plotting position */
        var t = -Math.log10(1 - q);
        if (t >= 1) { xs.push(t); ys.push(x); }
      });
      if (!xs.length) { xs.push(1); ys.push(v.length ? v[v.length - 1] : null); }
      tails.push([xs, ys]);
      tseries.push(line(r.label, i, { points: { show: true, size: 5 } }));
    });
    plot(root, title + " — tail p90–p99.9 (ms)", "x: percentile on a log scale of 1 − p (1 = p90, 2 = p99, 3 = p99.9); " + def, {
      scales: { x: { time: false, range: [1, 3] } },
      axes: [{ label: "percentile", splits: function () { return TAIL_TICKS.map(function (t) { return t[0]; }); },
               values: function () { return TAIL_TICKS.map(function (t) { return t[1]; }); } },
             { label: "ms" }], series: tseries
    }, uPlot.join(tails));
  }

  function itlChart(runs, def) {
    var sets = [], series = [{ label: "ms" }];
    runs.forEach(function (r, i) {
      var p = r.itl.filter(function (q) { return q[1] != null && q[1] > 0; });
      if (!p.length) return;
      sets.push([p.map(function (q) { return q[1]; }), p.map(function (q) { return q[0]; })]);
      series.push(line(r.label, i, { points: { show: true, size: 5 } }));
    });
    if (!sets.length) return;
    plot(root, "ITL (per chunk) — CDF from the artifact's percentiles (ms, log scale)", def, {
      scales: { x: { time: false, distr: 3 }, y: { range: [0, 1] } },
      axes: [{ label: "ms" }, { label: "share of gaps" }], series: series
    }, uPlot.join(sets));
  }

  function timeline(r, i, def) {
    var n = r.req.start_s.length;
    if (!n) return;
    var idx = [], send = [], first = [], end = [], late = [];
    for (var k = 0; k < n; k++) {
      idx.push(k);
      send.push(r.req.start_s[k]);
      first.push(r.req.ttft[k] == null ? null : r.req.start_s[k] + r.req.ttft[k] / 1000);
      end.push(r.req.e2e[k] == null ? null : r.req.start_s[k] + r.req.e2e[k] / 1000);
      late.push(r.req.lateness[k]);
    }
    var pts = function (label, c, scale) {
      return { label: label, stroke: color(c), fill: color(c), scale: scale || "s", paths: function () { return null; },
               points: { show: true, size: 5, fill: color(c) } };
    };
    plot(root, "Per-request timeline: " + r.label + " (s since the first send; lateness ms)", def, {
      scales: { x: { time: false }, s: {}, ms: {} },
      axes: [{ label: "request (in order of sending)" }, { scale: "s", label: "s" },
             { scale: "ms", side: 1, label: "send lateness, ms", grid: { show: false } }],
      series: [{ label: "request" }, pts("send", 0), pts("first token", 2), pts("end", 1), pts("send lateness", 4, "ms")]
    }, [idx, send, first, end, late]);
  }

  /* The end of the run's last request, s since its first send (0 when none). */
  function wallOf(r) {
    var wall = 0;
    r.req.start_s.forEach(function (s, k) { if (r.req.e2e[k] != null) wall = Math.max(wall, s + r.req.e2e[k] / 1000); });
    return wall;
  }

  /* The run's output tokens/s in nb bins of bin s from x0: each request's
   * tokens spread evenly over its generation (first token → end). */
  function binned(r, x0, bin, nb) {
    var t = new Array(nb).fill(0);
    r.req.start_s.forEach(function (s, k) {
      var a = s + (r.req.ttft[k] || 0) / 1000 - x0, e = r.req.e2e[k] == null ? null : s + r.req.e2e[k] / 1000 - x0;
      var tok = r.req.tokens[k];
      if (e == null || !tok) return;
      if (e <= a) { t[Math.max(0, Math.min(nb - 1, Math.floor(a / bin)))] += tok; return; }
      for (var b = Math.max(0, Math.floor(a / bin)); b <= Math.floor(e / bin) && b < nb; b++) {
        var lo = Math.max(a, b * bin), hi = Math.min(e, (b + 1) * bin);
        if (hi > lo) t[b] += tok * (hi - lo) / (e - a);
      }
    });
    return t.map(function (x) { return x / bin; });
  }

  function throughput(runs, def) {
    var wall = 0;
    runs.forEach(function (r) { wall = Math.max(wall, wallOf(r)); });
    if (!(wall > 0)) return;
    var bin = Math.max(wall / 60, 0.01), nb = Math.ceil(wall / bin) + 1;
    var xs = [], cols = [], series = [{ label: "s" }];
    for (var b = 0; b < nb; b++) xs.push(b * bin);
    runs.forEach(function (r, i) {
      cols.push(binned(r, 0, bin, nb));
      series.push(line(r.label, i));
    });
    plot(root, "Output throughput over time (tokens/s, " + fmt(bin, 2) + " s bins)",
         "each request's output tokens spread evenly over its generation (first token → end); " + def, {
      scales: { x: { time: false } }, axes: [{ label: "s since the first send" }, { label: "tokens/s" }], series: series
    }, [xs].concat(cols));
  }

  /* ---- server metrics and telemetry over time, on the run's time axis ---- */

  /* The run's time range, s since its first send: its requests and its readings. */
  function span(r) {
    var lo = 0, hi = wallOf(r);
    [r.server, r.gpu].forEach(function (t) {
      if (!t || !t.t_s.length) return;
      lo = Math.min(lo, t.t_s[0]);
      hi = Math.max(hi, t.t_s[t.t_s.length - 1]);
    });
    return [lo, hi > lo ? hi : lo + 1];
  }

  var T_AXIS = "s since the run's first send";

  function timeChart(r, title, def, unit, sets, series, extraScales, extraAxes) {
    var rg = span(r);
    var scales = { x: { time: false, range: function () { return rg; } } };
    for (var k in extraScales) scales[k] = extraScales[k];
    plot(root, r.label + ": " + title, def, {
      scales: scales, axes: [{ label: T_AXIS }, { label: unit }].concat(extraAxes || []), series: [{ label: "s" }].concat(series)
    }, uPlot.join(sets));
  }

  function serverCharts(r, d) {
    var t = r.server;
    if (!t || !t.t_s.length) return;
    var c = t.cols;
    if (c.generation_tokens) {
      var xs = [], ys = [];
      for (var k = 1; k < t.t_s.length; k++) {
        var g0 = c.generation_tokens[k - 1], g1 = c.generation_tokens[k], dt = t.t_s[k] - t.t_s[k - 1];
        if (g0 == null || g1 == null || !(dt > 0)) continue;
        xs.push((t.t_s[k - 1] + t.t_s[k]) / 2);
        ys.push(Math.max(0, g1 - g0) / dt);
      }
      var rg = span(r), bin = Math.max((rg[1] - rg[0]) / 60, 0.01), nb = Math.ceil((rg[1] - rg[0]) / bin) + 1;
      var bx = [];
      for (var b = 0; b < nb; b++) bx.push(rg[0] + b * bin);
      if (xs.length)
        timeChart(r, "output tokens/s, server (Δ generation_tokens) vs client", d.server_tps, "tokens/s",
                  [[xs, ys], [bx, binned(r, rg[0], bin, nb)]],
                  [line("server", 1, { points: { show: true, size: 4 } }), line("client", 0)]);
    }
    var sets = [], series = [];
    [["running_requests", "running", 2], ["waiting_requests", "waiting", 3]].forEach(function (q) {
      if (c[q[0]]) { sets.push([t.t_s, c[q[0]]]); series.push(line(q[1], q[2])); }
    });
    if (c.kv_cache_usage) {
      sets.push([t.t_s, c.kv_cache_usage.map(function (v) { return v == null ? null : 100 * v; })]);
      series.push(line("KV cache usage, %", 4, { scale: "pct" }));
    }
    if (sets.length)
      timeChart(r, "server requests running and waiting (requests), KV cache usage (%)", d.server_load, "requests",
                sets, series, { pct: { range: [0, 100] } },
                c.kv_cache_usage ? [{ scale: "pct", side: 1, label: "KV cache usage, %", grid: { show: false } }] : []);
  }

  function gpuCharts(r, d) {
    var t = r.gpu;
    if (!t || !t.t_s.length) return;
    var charts = [["util_pct", "GPU utilization and host CPU (%)", "%", d.gpu_util],
                  ["power_w", "GPU power (W)", "W", d.gpu_power],
                  ["sm_mhz", "GPU SM clock (MHz)", "MHz", d.gpu_clock],
                  ["temp_c", "GPU temperature (°C)", "°C", d.gpu_temp]];
    charts.forEach(function (ch) {
      var sets = [], series = [];
      t.devices.forEach(function (dev, i) {
        if (!dev.cols[ch[0]]) return;
        sets.push([t.t_s, dev.cols[ch[0]]]);
        series.push(line("GPU " + dev.index, i));
      });
      if (ch[0] === "util_pct" && t.cols.cpu_util_pct) {
        sets.push([t.t_s, t.cols.cpu_util_pct]);
        series.push(line("host CPU", t.devices.length, { dash: [6, 3] }));
      }
      if (sets.length) timeChart(r, ch[1], ch[3], ch[2], sets, series);
    });
  }


  A.sections.runs = function (parent, data) {
    /* a sweep's rounds are drawn by curve.js, folded by load point */
    var runs = data.runs.filter(function (r) { return !(r.sweep && data.curves.length); }), d = data.definitions;
    if (!runs.length) return;
    root = parent;
    A.section(root, "Runs (" + runs.length + ")");
    cards(runs);
    cdfChart(runs, "ttft", "TTFT", d.ttft);
    cdfChart(runs, "tpot", "TPOT", d.tpot);
    itlChart(runs, d.itl);
    cdfChart(runs, "e2e", "E2E latency", d.e2e);
    throughput(runs, d.throughput);
    runs.slice(0, 8).forEach(function (r, i) {
      timeline(r, i, d.lateness);
      serverCharts(r, d);
      gpuCharts(r, d);
    });
  };
})(window.anvil);

/* run.js — runs, answer first: per run its workload in one line, headline
 * cards, its steady state and failures by status; then the latency
 * distributions (small multiples of at most A.MAX_SERIES runs), throughput
 * over time, per run the run over time (its timeseries rows, the steady
 * window shaded, drift named), and per run
 * the timeline of its requests (vLLM's --plot-timeline: one bar per request,
 * TTFT then decode) with the server's metrics and GPU telemetry on its clock. */
(function (A) {
  "use strict";
  var el = A.el, plot = A.plot, line = A.line, color = A.color, fmt = A.fmt, sorted = A.sorted, root;
  /* tail axis ticks: -log10(1 - p) and the percentile's name */
  /* values a run needs for a tail chart: with 10, the largest sits at p95 */
  var TAIL_MIN = 10;
  var TAIL_TICKS = [[1, "p90"], [Math.log10(20), "p95"], [2, "p99"], [Math.log10(200), "p99.5"], [3, "p99.9"]];
  /* ---- runs ---- */

  /* A run's answer: its name, workload line, headline cards, failures by status. */
  function head(r, i) {
    var box = el("div", "run-head", null, root);
    box.style.borderLeft = "4px solid " + color(i);
    el("h3", null, r.label, box);
    var w = el("div", "workload", null, box);
    el("span", "k", "Workload: ", w);
    el("span", null, r.workload, w);
    var wrap = el("div", "cards", null, box);
    r.cards.forEach(function (kv) {
      var c = el("div", "card", null, wrap);
      el("div", "k", kv[0], c);
      el("div", "v", kv[1], c);
    });
    if (r.steady) {
      var st = el("div", "steady " + (r.steady.reached ? "reached" : "not-reached"), r.steady.line, box);
      st.setAttribute("data-reached", r.steady.reached ? "1" : "0");
    }
    if (!r.failures || !r.failures.length) return;
    var total = r.failures.reduce(function (s, g) { return s + g.count; }, 0);
    el("div", "title", "Failures by status: " + total + " request" + (total === 1 ? "" : "s") +
       " (the server's first message of each group)", box);
    var t = el("table", "failures", null, box), tr = el("tr", null, null, t);
    ["requests", "status", "category", "first message"].forEach(function (h) { el("th", null, h, tr); });
    r.failures.forEach(function (g) {
      var row = el("tr", null, null, t);
      el("td", "n", String(g.count), row);
      el("td", "l", g.status, row);
      el("td", "l", g.category, row);
      el("td", "l msg", g.message, row);
    });
  }

  /* runs in groups of at most A.MAX_SERIES (one chart each: small multiples) */
  function groups(runs) {
    var g = [];
    for (var k = 0; k < runs.length; k += A.MAX_SERIES) g.push(runs.slice(k, k + A.MAX_SERIES));
    return g;
  }

  /* " (runs 9–16 of 20)" for a group of several, "" for one */
  function groupName(g, k, total) {
    if (total <= A.MAX_SERIES) return "";
    var lo = k * A.MAX_SERIES + 1;
    return " (runs " + lo + "–" + (lo + g.length - 1) + " of " + total + ")";
  }

  function cdfChart(runs, key, title, def, suffix, noTail) {
    var sets = [], series = [{ label: "ms" }];
    runs.forEach(function (r, i) {
      var v = sorted(r.req[key]).filter(function (x) { return x > 0; });
      if (!v.length) return;
      sets.push([v, v.map(function (_, k) { return (k + 1) / v.length; })]);
      series.push(line(r.label, i));
    });
    if (!sets.length) return;
    plot(root, title + " — CDF (ms, log scale)" + suffix, def, {
      scales: { x: { time: false, distr: 3 }, y: { range: [0, 1] } },
      axes: [{ label: "ms" }, { label: "share of requests" }], series: series
    }, uPlot.join(sets));
    if (noTail) return;
    var tails = [], tseries = [{ label: "percentile" }];
    runs.forEach(function (r, i) {
      var v = sorted(r.req[key]);
      /* a tail needs a value past p90: under TAIL_MIN values there is none to draw */
      if (v.length < TAIL_MIN) return;
      var xs = [], ys = [];
      v.forEach(function (x, k) {
        var q = (k + 0.5) / v.length;       /* Hazen plotting position */
        var t = -Math.log10(1 - q);
        if (t >= 1) { xs.push(t); ys.push(x); }
      });
      tails.push([xs, ys]);
      tseries.push(line(r.label, i, { points: { show: true, size: 5 } }));
    });
    if (!tails.length) return;
    plot(root, title + " — tail p90–p99.9 (ms)" + suffix, "x: percentile on a log scale of 1 − p (1 = p90, 2 = p99, 3 = p99.9); " + def, {
      scales: { x: { time: false, range: [1, 3] } },
      axes: [{ label: "percentile", splits: function () { return TAIL_TICKS.map(function (t) { return t[0]; }); },
               values: function () { return TAIL_TICKS.map(function (t) { return t[1]; }); } },
             { label: "ms" }], series: tseries
    }, uPlot.join(tails));
  }

  function itlChart(runs, def, suffix) {
    var sets = [], series = [{ label: "ms" }];
    runs.forEach(function (r, i) {
      var p = r.itl.filter(function (q) { return q[1] != null && q[1] > 0; });
      if (!p.length) return;
      sets.push([p.map(function (q) { return q[1]; }), p.map(function (q) { return q[0]; })]);
      series.push(line(r.label, i, { points: { show: true, size: 5 } }));
    });
    if (!sets.length) return;
    plot(root, "ITL (per chunk) — CDF from the artifact's percentiles (ms, log scale)" + suffix, def, {
      scales: { x: { time: false, distr: 3 }, y: { range: [0, 1] } },
      axes: [{ label: "ms" }, { label: "share of gaps" }], series: series
    }, uPlot.join(sets));
  }

  /* Bars drawn at most per timeline: beyond, the first MAX_BARS by sending. */
  var MAX_BARS = 2000;
  /* TTFT, TTFT over its threshold, decode, decode over its threshold */
  var BAR = [A.color(0), A.color(1), A.color(2), A.color(3)];

  /* The run's requests as bars in order of sending: [send, first token,
   * end, TTFT over, TPOT over] in s since the first send. */
  function bars(r, m) {
    var b = [], th = r.thresholds || {};
    for (var k = 0; k < m; k++) {
      var s = r.req.start_s[k], t = r.req.ttft[k], e = r.req.e2e[k], p = r.req.tpot[k];
      if (s == null || e == null) continue;
      var f = t == null ? s + e / 1000 : s + t / 1000;
      b.push([k, s, f, s + e / 1000, t != null && th.ttft_ms != null && t > th.ttft_ms,
              p != null && th.tpot_ms != null && p > th.tpot_ms]);
    }
    return b;
  }

  /* vLLM's --plot-timeline: one horizontal bar per request (y: the request
   * in order of sending, x: s since the first send), from send to first
   * token (TTFT) then to its last token (decode), coloured by thresholds;
   * drawn on the chart's canvas (its series are the legend); the chart's
   * box (div.chart) has data-bars (how many were drawn), data-ttft-over and
   * data-tpot-over (how many of them are marked). */
  function timeline(r) {
    var n = r.req.start_s.length;
    if (!n) return;
    var m = Math.min(n, MAX_BARS), b = bars(r, m), th = r.thresholds || {}, wall = 0, drawn = 0;
    b.forEach(function (x) { wall = Math.max(wall, x[3]); });
    if (!b.length || !(wall > 0)) return;
    var draw = function (u) {
      var ctx = u.ctx, bb = u.bbox, h = Math.max(1, Math.floor(bb.height / m * 0.8));
      ctx.save();
      ctx.beginPath();
      ctx.rect(bb.left, bb.top, bb.width, bb.height);
      ctx.clip();
      drawn = 0;
      b.forEach(function (x) {
        var y = Math.round(u.valToPos(x[0], "y", true) - h / 2);
        var x0 = Math.round(u.valToPos(x[1], "x", true)), x1 = Math.round(u.valToPos(x[2], "x", true)),
            x2 = Math.round(u.valToPos(x[3], "x", true));
        ctx.fillStyle = BAR[x[4] ? 1 : 0];
        ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
        ctx.fillStyle = BAR[x[5] ? 3 : 2];
        if (x2 > x1) ctx.fillRect(x1, y, x2 - x1, h);
        drawn++;
      });
      ctx.restore();
      if (u.root.parentNode) mark(u.root.parentNode.parentNode);
    };
    /* what was drawn, for a reader's check: bars, and of them over each threshold */
    var mark = function (box) {
      box.setAttribute("data-bars", String(drawn));
      box.setAttribute("data-ttft-over", String(b.filter(function (x) { return x[4]; }).length));
      box.setAttribute("data-tpot-over", String(b.filter(function (x) { return x[5]; }).length));
    };
    var key = function (label, c) {
      return { label: label, stroke: BAR[c], fill: BAR[c], width: 8, paths: function () { return null; },
               points: { show: false } };
    };
    var ttftRule = th.ttft_ms == null ? "" :
      "red when TTFT is over " + fmt(th.ttft_ms, 1) + " ms (" + th.ttft_rule + ")";
    var tpotRule = th.tpot_ms == null ? "" :
      "orange when TPOT is over " + fmt(th.tpot_ms, 2) + " ms (" + th.tpot_rule + ")";
    var caption = "One bar per completed request in order of sending (" + (m < n ? "first " + m + " of " + n : n) +
      " requests drawn; failed requests are counted above): from its send to its first token (TTFT, blue" +
      (ttftRule ? "; " + ttftRule : "") + "), then from the first token to its last (decode, green" +
      (tpotRule ? "; " + tpotRule : "") + ").";
    var u = plot(root, "Timeline of requests: " + r.label + " (s since the first send)", caption, {
      height: Math.max(300, Math.min(700, 140 + m * 8)), legend: { show: true, live: false },
      scales: { x: { time: false, range: function () { return [0, wall]; } },
                y: { dir: -1, range: function () { return [-0.5, m - 0.5]; } } },
      axes: [{ label: "s since the first send" }, { label: "request # (sending order)" }],
      series: [{ label: "s" }, key("TTFT", 0), key("TTFT over", 1), key("decode", 2), key("decode over", 3)],
      hooks: { draw: [draw] }
    }, [[0, wall], [null, null], [null, null], [null, null], [null, null]]);
    mark(u.root.parentNode.parentNode);
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

  function throughput(runs, def, suffix) {
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
    plot(root, "Output throughput over time (tokens/s, " + fmt(bin, 2) + " s bins)" + suffix,
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


  /* ---- the run over time: the artifact's timeseries rows ---- */

  /* The time unit for a span of s seconds: [seconds per unit, name]. */
  function timeUnit(s) { return s > 36000 ? [3600, "h"] : s > 600 ? [60, "min"] : [1, "s"]; }

  var SHADE = "rgba(44,160,44,0.13)", RAMP = "#7f7f7f";

  /* Draws the steady window (shaded, under the series) and the ramp's end
   * (a dashed grey line) on a time chart whose x is s / div. */
  function windowHooks(r, div) {
    var s = r.steady, ramp = r.ramp;
    var under = function (u) {
      if (!s || !s.reached || s.start_s == null || s.end_s == null) return;
      var bb = u.bbox, x0 = Math.max(bb.left, u.valToPos(s.start_s / div, "x", true)),
          x1 = Math.min(bb.left + bb.width, u.valToPos(s.end_s / div, "x", true));
      if (!(x1 > x0)) return;
      u.ctx.save();
      u.ctx.fillStyle = SHADE;
      u.ctx.fillRect(x0, bb.top, x1 - x0, bb.height);
      u.ctx.restore();
    };
    var over = function (u) {
      if (!ramp || ramp.end_s == null) return;
      var bb = u.bbox, x = Math.round(u.valToPos(ramp.end_s / div, "x", true));
      if (x < bb.left || x > bb.left + bb.width) return;
      u.ctx.save();
      u.ctx.strokeStyle = RAMP;
      u.ctx.lineWidth = 2;
      u.ctx.setLineDash([6, 4]);
      u.ctx.beginPath();
      u.ctx.moveTo(x, bb.top);
      u.ctx.lineTo(x, bb.top + bb.height);
      u.ctx.stroke();
      u.ctx.restore();
    };
    return { drawClear: [under], draw: [over] };
  }

  /* What the shading and the dashed line mean, for a caption. */
  function windowNote(r, div, unit) {
    var parts = [], s = r.steady;
    if (s && s.reached && s.start_s != null)
      parts.push("shaded: the steady state, " + fmt(s.start_s / div, 1) + "–" + fmt(s.end_s / div, 1) + " " + unit);
    if (r.ramp && r.ramp.end_s != null)
      parts.push("dashed grey line: the " + r.ramp.strategy + " ramp's end, " + fmt(r.ramp.end_s / div, 1) + " " + unit);
    return parts.length ? " " + parts.join("; ") + "." : "";
  }

  /* The drift verdicts (report/drift.h, computed by anvil) of the metrics
   * labels, in words: "drifted (first → last quarter, medians): ..." */
  function driftNote(r, labels) {
    var d = r.ts.drift;
    if (!d.judged) return "";
    var hit = d.metrics.filter(function (m) { return m.drifted && labels.indexOf(m.label) >= 0; });
    if (!hit.length) return " No drift: the last quarter's median within noise of the first's.";
    return " Drifted (median of the first → the last quarter of the run): " + hit.map(function (m) {
      return m.label + " " + fmt(m.first, 2) + " → " + fmt(m.last, 2) + " " + m.unit;
    }).join("; ") + ".";
  }

  /* One chart of per-row columns (keys of r.ts.rows) drawn as steps, each
   * row over its own width; the box gets data-rows (rows drawn), data-x-axis
   * (the time axis's label) and data-KEY (the values, comma-separated) of
   * each key in expose. */
  function tsChart(r, tu, title, def, unit, keys, names, colors, driftLabels, expose) {
    var rows = r.ts.rows, n = rows.t_s.length, div = tu[0];
    /* nothing to draw (no request completed in any row): said, not drawn empty */
    if (!keys.some(function (k) { return rows[k].some(function (v) { return v != null; }); })) {
      A.caption(root, "def none", r.label + ": " + title + ": no row has a value (no request completed in any row).");
      return;
    }
    /* each row a segment from its start to its end, so a row between two empty ones is a line too
       (a stepped path draws nothing for a lone value) */
    var xs = [], cols = keys.map(function () { return []; });
    for (var i = 0; i < n; i++) {
      xs.push(rows.t_s[i] / div, (rows.t_s[i] + rows.len_s[i]) / div);
      keys.forEach(function (k, j) { cols[j].push(rows[k][i], rows[k][i]); });
    }
    var series = [{ label: tu[1] }].concat(names.map(function (nm, i) {
      return line(nm, colors[i], { spanGaps: false });
    }));
    var end = xs[xs.length - 1];
    var u = plot(root, r.label + ": " + title, def + driftNote(r, driftLabels) + windowNote(r, div, tu[1]), {
      scales: { x: { time: false, range: function () { return [0, end]; } } },
      axes: [{ label: tu[1] + " since the first send" }, { label: unit }], series: series,
      hooks: windowHooks(r, div)
    }, [xs].concat(cols));
    var box = u.root.parentNode.parentNode;
    box.setAttribute("data-rows", String(n));
    box.setAttribute("data-x-axis", tu[1] + " since the first send");   /* the axis is drawn on the canvas */
    (expose || []).forEach(function (k) { box.setAttribute("data-" + k, rows[k].join(",")); });
  }

  /* The run over time: output tokens/s, requests per row, in flight, TTFT
   * and ITL per row, from the artifact's timeseries. */
  function overTime(r) {
    var ts = r.ts;
    if (!ts || !ts.rows.t_s.length) return;
    var rows = ts.rows, n = rows.t_s.length, tu = timeUnit(rows.t_s[n - 1] + rows.len_s[n - 1]);
    var any = function (k) { return rows[k].some(function (v) { return v != null && v !== 0; }); };
    var rowDef = "one step per `timeseries` row of " + fmt(ts.interval_s, 3) + " s (" + n + " rows" +
      (ts.interval_s > ts.requested_interval_s ? ", merged from " + fmt(ts.requested_interval_s, 3) + " s rows" : "") +
      "), each drawn over its own width; the last row ends at the run's last end.";
    var d = ts.drift, drifted = d.judged ? d.metrics.filter(function (m) { return m.drifted; }) : [];
    A.caption(root, "def drift", d.judged ?
      (drifted.length ? "Drifted over the run (first vs last quarter of " + fmt(d.quarter_s, 1) + " s): " +
        drifted.map(function (m) { return m.label; }).join(", ") + "." :
        "No drift: every metric's last quarter (" + fmt(d.quarter_s, 1) + " s) within noise of its first.") :
      "Drift not judged: it needs " + d.min_rows + " rows or more (" + n + " here).");
    tsChart(r, tu, "output tokens/s per row (tokens/s)",
            "the output tokens of the requests that completed in the row / the row's length; " + rowDef,
            "tokens/s", ["output_tps"], ["output tokens/s"], [0], ["output tokens/s"]);
    var keys = ["completed", "failed", "started"], names = ["completed", "failed", "started"], colors = [2, 1, 0];
    if (any("cut")) { keys.push("cut"); names.push("cut at the window's end"); colors.push(3); }
    tsChart(r, tu, "requests per row: completed, failed, started (requests)",
            "requests that ended in the row, completed or failed, and those sent in it; " + rowDef, "requests",
            keys, names, colors, ["completed requests/s", "failed requests/s"], ["completed", "failed"]);
    keys = ["in_flight"]; names = ["in flight (client)"]; colors = [0];
    if (rows.running.some(function (v) { return v != null; })) { keys.push("running"); names.push("server running"); colors.push(2); }
    if (rows.waiting.some(function (v) { return v != null; })) { keys.push("waiting"); names.push("server waiting"); colors.push(3); }
    tsChart(r, tu, "requests in flight at each row's end (requests)",
            "requests sent by the row's end and not ended by then; the server's gauges are the mean of its readings in the row; " + rowDef,
            "requests", keys, names, colors, ["requests in flight", "server running requests", "server waiting requests"]);
    var merged = ts.exact_from_s > 0 ? " Rows before " + fmt(ts.exact_from_s / tu[0], 1) + " " + tu[1] +
      " were merged: their p50 is the median of the merged rows' p50s, their p99 the largest p99 (an upper bound)." : "";
    tsChart(r, tu, "TTFT per row, p50 and p99 (ms)",
            "TTFT of the requests that completed in the row; a gap: none did; " + rowDef + merged, "ms",
            ["ttft_p50", "ttft_p99"], ["TTFT p50", "TTFT p99"], [0, 1], ["TTFT p50", "TTFT p99"]);
    tsChart(r, tu, "ITL per row, p50 and p99 (ms)",
            "the inter-chunk gaps of the requests that completed in the row; " + rowDef + merged, "ms",
            ["itl_p50", "itl_p99"], ["ITL p50", "ITL p99"], [0, 1], ["ITL p50", "ITL p99"]);
  }

  A.sections.runs = function (parent, data) {
    /* a sweep's rounds are drawn by curve.js, folded by load point; a decode matrix stands for its cells */
    var runs = data.runs.filter(function (r) { return !(r.sweep && data.curves.length) && !r.decode_part; }),
        d = data.definitions;
    if (!runs.length) return;
    root = parent;
    A.section(root, "Runs (" + runs.length + ")").id = "anvil-runs";
    runs.forEach(head);
    var g = groups(runs);
    el("h3", null, "Latency distributions (ms)", root);
    g.forEach(function (rs, k) {
      var sfx = groupName(rs, k, runs.length);
      cdfChart(rs, "ttft", "TTFT", d.ttft, sfx);
      cdfChart(rs, "tpot", "TPOT", d.tpot, sfx);
      itlChart(rs, d.itl, sfx);
      cdfChart(rs, "e2e", "E2E latency", d.e2e, sfx);
      cdfChart(rs, "lateness", "Send lateness", d.lateness, sfx, true);
      throughput(rs, d.throughput, sfx);
    });
    runs.forEach(function (r, i) {
      if (!r.ts) return;
      if (i >= A.MAX_SERIES) root = A.fold(parent, r.label + ": the run over time");
      else el("h3", null, r.label + ": the run over time", root);
      overTime(r);
      root = parent;
    });
    runs.forEach(function (r, i) {
      var box = root;
      if (i >= A.MAX_SERIES) box = A.fold(parent, r.label + ": timeline of requests, server metrics, GPU telemetry");
      else el("h3", null, r.label + ": requests over time", root);
      root = box;
      timeline(r);
      serverCharts(r, d);
      gpuCharts(r, d);
      root = parent;
    });
  };
})(window.anvil);

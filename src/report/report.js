/* report.js — draws `anvil report`'s charts with uPlot from the data the
 * report embeds (<script id="anvil-data">), and checks what it drew: every
 * chart's canvas must hold pixels of its series' colours, and any error
 * (a script error, a blocked network request) is listed in #anvil-status. */
(function () {
  "use strict";
  var errors = [];
  window.addEventListener("error", function (e) { errors.push("error: " + e.message); });
  document.addEventListener("securitypolicyviolation", function (e) {
    errors.push("blocked by the page's policy (no network at open time): " + e.blockedURI);
  });
  var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
  var W = 560, H = 300;
  /* tail axis ticks: -log10(1 - p) and the percentile's name */
  var TAIL_TICKS = [[1, "p90"], [Math.log10(20), "p95"], [2, "p99"], [Math.log10(200), "p99.5"], [3, "p99.9"]];
  var charts = [];
  var data = JSON.parse(document.getElementById("anvil-data").textContent);
  var root = document.getElementById("anvil-report");

  function el(tag, cls, text, parent) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function color(i) { return COLORS[i % COLORS.length]; }
  function fmt(v, p) { return v == null || !isFinite(v) ? "n/a" : Number(v).toFixed(p); }

  /* A chart box: title (with units), the one-line definition, the plot. */
  function plot(parent, title, def, opts, aligned) {
    var box = el("div", "chart", null, parent);
    el("div", "title", title, box);
    if (def) el("div", "def", def, box);
    var holder = el("div", null, null, box);
    holder.setAttribute("data-chart", title);
    opts.width = W;
    opts.height = H;
    opts.legend = { show: true };
    var colors = [];
    opts.series.forEach(function (s, i) { if (i > 0 && s.stroke) colors.push(s.stroke); if (i > 0 && s.fill) colors.push(s.fill); });
    charts.push({ title: title, holder: holder, colors: colors });
    new uPlot(opts, aligned, holder);
  }

  function line(label, i, extra) {
    var s = { label: label, stroke: color(i), width: 2, spanGaps: true, points: { show: false } };
    for (var k in extra) s[k] = extra[k];
    return s;
  }

  function sorted(v) {
    return v.filter(function (x) { return x != null && isFinite(x); }).sort(function (a, b) { return a - b; });
  }

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

  /* ---- heat tables ---- */

  function heat(parent, title, head, rows, numeric, flags) {
    el("div", "title", title, parent);
    var t = el("table", "heat", null, parent);
    var tr = el("tr", null, null, t);
    head.forEach(function (h) { el("th", null, h, tr); });
    var lo = [], hi = [];
    head.forEach(function (_, c) {
      var v = rows.map(function (r) { return r[c]; }).filter(function (x) { return typeof x === "number"; });
      lo[c] = Math.min.apply(null, v);
      hi[c] = Math.max.apply(null, v);
    });
    rows.forEach(function (r, ri) {
      var tr = el("tr", null, null, t);
      r.forEach(function (v, c) {
        var text = typeof v === "number" ? fmt(v, Math.abs(v) >= 100 ? 1 : 2) : (v == null ? "n/a" : v);
        if (flags && flags[ri] && flags[ri][c]) text += " *";
        var td = el("td", typeof v === "number" ? null : "l", text, tr);
        if (typeof v === "number" && numeric[c] && hi[c] > lo[c]) {
          var f = (v - lo[c]) / (hi[c] - lo[c]);
          td.style.background = "rgba(31,119,180," + (0.08 + 0.6 * f).toFixed(3) + ")";
        }
      });
    });
  }

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

  /* ---- the page ---- */

  function check() {
    var drawn = 0, bad = [];
    charts.forEach(function (c) {
      var cv = c.holder.querySelector("canvas");
      var ok = false;
      if (cv) {
        var px = cv.getContext("2d").getImageData(0, 0, cv.width, cv.height).data;
        var want = c.colors.map(function (h) { return [parseInt(h.substr(1, 2), 16), parseInt(h.substr(3, 2), 16), parseInt(h.substr(5, 2), 16)]; });
        var hits = 0;
        for (var p = 0; p < px.length && hits < 20; p += 4) {
          if (px[p + 3] < 200) continue;
          for (var k = 0; k < want.length; k++)
            if (Math.abs(px[p] - want[k][0]) < 24 && Math.abs(px[p + 1] - want[k][1]) < 24 && Math.abs(px[p + 2] - want[k][2]) < 24) { hits++; break; }
        }
        ok = hits >= 20;
      }
      c.holder.setAttribute("data-drawn", ok ? "1" : "0");
      if (ok) drawn++; else bad.push(c.title);
    });
    var st = document.getElementById("anvil-status");
    st.setAttribute("data-charts", String(charts.length));
    st.setAttribute("data-drawn", String(drawn));
    st.setAttribute("data-errors", String(errors.length));
    st.textContent = charts.length + " charts, " + drawn + " drawn" + (bad.length ? "; not drawn: " + bad.join(", ") : "") +
                     (errors.length ? "; errors: " + errors.join("; ") : "; no errors");
    if (bad.length || errors.length) st.className = "bad";
  }

  try {
    var d = data.definitions;
    if (data.runs.length) {
      el("h2", null, "Runs (" + data.runs.length + ")", root);
      cards(data.runs);
      cdfChart(data.runs, "ttft", "TTFT", d.ttft);
      cdfChart(data.runs, "tpot", "TPOT", d.tpot);
      itlChart(data.runs, d.itl);
      cdfChart(data.runs, "e2e", "E2E latency", d.e2e);
      throughput(data.runs, d.throughput);
      data.runs.slice(0, 8).forEach(function (r, i) {
        timeline(r, i, d.lateness);
        serverCharts(r, d);
        gpuCharts(r, d);
      });
    }
    data.curves.forEach(function (c) {
      el("h2", null, "Load curve: " + c.name, root);
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
    data.matrices.forEach(function (m) {
      el("h2", null, "Matrix: " + m.name + " (" + m.status + ")", root);
      heat(root, "median across rounds per engine and case; darker = larger in its column", m.head, m.rows, m.head.map(function (_, c) { return c >= 2; }));
    });
    data.decode.forEach(function (m) {
      el("h2", null, "Decode matrix: " + m.name, root);
      var head = ["context \\ concurrency"].concat(m.concurrency.map(String));
      heat(root, "aggregate output tokens/s of each cell; * = capacity-limited or underfilled", head, m.rows, head.map(function (_, c) { return c > 0; }), m.flags);
      if (m.cost_rows)
        heat(root, "USD per million output tokens of each cell (" + d.cost + ")", head, m.cost_rows, head.map(function (_, c) { return c > 0; }), m.flags);
    });
    data.graphs.forEach(function (g) {
      el("h2", null, "Graph data: " + g.title, root);
      if (g.subtitle) el("div", "sub", g.subtitle, root);
      g.charts.forEach(function (ch) { bars(g, ch); });
    });
  } catch (e) {
    errors.push("error: " + e.message);
  }
  setTimeout(check, 100);
})();

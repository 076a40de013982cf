/* curve.js — load curves (a sweep's, or any load-curve artifact), answer
 * first: per target the largest load meeting the SLOs (or, without SLOs,
 * the knee), computed by html_curve.c; then the curves (throughput, tail
 * latency against the SLO lines, goodput, cost, GPU clock and temperature
 * per load point; a ring marks each target's answer); then, folded per load
 * point, the sweep's rounds: latency by percentile per target, the median
 * across rounds as the line and their min–max as a band. */
(function (A) {
  "use strict";
  var el = A.el, plot = A.plot, line = A.line, color = A.color, fmt = A.fmt, sorted = A.sorted, root;

  /* Splits v into runs of at most k (small multiples: one chart each). */
  function chunks(v, k) {
    var out = [];
    for (var i = 0; i < v.length; i += k) out.push(v.slice(i, i + k));
    return out.length ? out : [[]];
  }

  /* A number for people: 3 significant figures, at most 1 decimal past 100. */
  function num(v) {
    if (v == null || !isFinite(v)) return "n/a";
    var a = Math.abs(v);
    return fmt(v, a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
  }

  function sloText(c) {
    var s = [];
    if (c.slo_ttft_ms != null) s.push("TTFT p99 ≤ " + c.slo_ttft_ms + " ms");
    if (c.slo_tpot_ms != null) s.push("TPOT p99 ≤ " + c.slo_tpot_ms + " ms");
    return s.join(", ");
  }

  /* ---- the answer ---- */

  /* One card per target: its answer load, the figures there, and why. Any
   * source of answers of html_curve.c's shape can be drawn by it. */
  A.answerCards = function (parent, answers, colorOf) {
    var wrap = el("div", "answer", null, parent);
    answers.forEach(function (a, i) {
      var c = el("div", "card answer-card", null, wrap);
      c.style.borderTop = "4px solid " + (colorOf ? colorOf(a, i) : color(i));
      el("div", "run", a.target, c);
      el("div", "k", a.kind === "search" ? "by SLO search: attainment ≥ " + a.slo_attainment
                     : a.kind === "slo" ? "largest load meeting the SLOs" : "the knee (no SLO given)", c);
      el("div", "answer-x" + (a.x == null ? " none" : ""), a.x == null ? "none" : String(a.x), c);
      if (a.x != null && a.kind === "search")
        el("div", "answer-at", "attainment " + fmt(a.attainment, 4) + " (95% interval " + fmt(a.interval[0], 4) + "–" +
           fmt(a.interval[1], 4) + ") · goodput " + num(a.goodput) + " req/s · TTFT p99 " + num(a.ttft_p99) +
           " ms · TPOT p99 " + num(a.tpot_p99) + " ms", c);
      else if (a.x != null)
        el("div", "answer-at", num(a.tps) + " output tokens/s · TTFT p99 " + num(a.ttft_p99) + " ms · TPOT p99 " +
           num(a.tpot_p99) + " ms" + (a.goodput != null ? " · goodput " + num(a.goodput) + " req/s" : "") +
           (a.cost != null ? " · " + fmt(a.cost, 4) + " USD / M out tok" : ""), c);
      el("div", "why", a.why, c);
    });
    return wrap;
  };

  /* The search's answer for curve answer a (of a curve of n targets): the
   * same target, or a search's one unlabelled target on a one-target curve. */
  function searchAnswer(data, a, n) {
    var found = null;
    (data.searches || []).forEach(function (s) {
      s.answers.forEach(function (b) {
        if (!found && (b.target === a.target || (b.target === "" && s.answers.length === 1 && n === 1))) found = b;
      });
    });
    if (!found) return a;
    var out = {};
    for (var k in found) out[k] = found[k];
    out.target = a.target;
    return out;
  }

  function answer(c, data) {
    c.answers = c.answers.map(function (a) { return searchAnswer(data, a, c.answers.length); });
    if (c.answers.some(function (a) { return a.kind === "search"; })) {
      A.section(root, "Largest load meeting the SLO search's target");
      A.caption(root, "sub", c.name + " — " + c.load_label + ". A target searched for its SLO (search.json) " +
        "answers with the largest load whose share of requests meeting every SLO passed the target; the probes are " +
        "below the load curves.");
    } else {
      var slo = sloText(c);
      A.section(root, slo ? "Largest load meeting the SLOs (" + slo + ")" : "The knee of each load curve");
      A.caption(root, "sub", c.name + " — " + c.load_label + ". " + (slo
        ? "A load point meets the SLOs when its p99 (the median across its rounds) is within each bound; " +
          "the answer is the last point before the first that does not."
        : "No SLO was given: the knee is the lowest load whose output throughput reaches 95% of the highest."));
    }
    A.answerCards(root, c.answers);
    /* a sweep's matrix says whether every request completed: the answer holds only if so */
    data.matrices.forEach(function (m) {
      var p = el("div", "sub", null, root);
      A.verdict(p, m.status);
      el("span", null, (m.status === "PASS" ? " every request of every round completed" : " requests") + " (" + m.name + ")" +
                       (m.reasons && m.reasons.length ? ": " + m.reasons[0] : ""), p);
    });
  }

  /* ---- load curves ---- */

  /* A ring around each target's answer point (the draw hook of a chart of
   * targets ts, whose series k + 1 is ts[k]). */
  function rings(ts, c, key) {
    return function (u) {
      var ctx = u.ctx;
      ts.forEach(function (t, k) {
        var a = c.answers.filter(function (a) { return a.target === t.name; })[0];
        if (!a || a.x == null || !u.series[k + 1].show) return;
        var y = t[key][t.x.indexOf(a.x)];
        if (y == null) return;
        var px = u.valToPos(a.x, "x", true), py = u.valToPos(y, u.series[k + 1].scale || "y", true);
        ctx.save();
        ctx.setLineDash([]);    /* an SLO line's dash is not the ring's */
        ctx.strokeStyle = u.series[k + 1].stroke();
        ctx.lineWidth = 2 * devicePixelRatio;
        ctx.beginPath();
        ctx.arc(px, py, 8 * devicePixelRatio, 0, 2 * Math.PI);
        ctx.stroke();
        ctx.restore();
      });
    };
  }

  function curveChart(c, key, title, unit, slo, def) {
    var extra = slo != null && isFinite(slo) ? 1 : 0;
    /* a target without the figure (goodput without an SLO) has no line to draw */
    var have = c.targets.map(function (t, i) { return { t: t, i: i }; })
                        .filter(function (p) { return p.t[key].some(function (v) { return v != null; }); });
    if (!have.length) return;
    var parts = chunks(have, A.MAX_SERIES - extra);
    parts.forEach(function (part, pi) {
      var sets = [], series = [{ label: "load" }], ts = [];
      part.forEach(function (p) {
        sets.push([p.t.x, p.t[key]]);
        series.push(line(p.t.name, p.i, { points: { show: true, size: 6 } }));
        ts.push(p.t);
      });
      var aligned = uPlot.join(sets);
      if (extra) {
        aligned.push(aligned[0].map(function () { return slo; }));
        series.push({ label: "SLO " + slo + " " + unit, stroke: "#000000", dash: [6, 4], width: 1, points: { show: false } });
      }
      var of = parts.length > 1 ? " — targets " + (pi * (A.MAX_SERIES - extra) + 1) + "–" + (pi * (A.MAX_SERIES - extra) + part.length) +
                                  " of " + have.length : "";
      plot(root, title + " (" + unit + ")" + of, String(def).replace(/\.?$/, ". ") + "Ring: the target's answer above.", {
        scales: { x: { time: false } }, axes: [{ label: c.load_label }, { label: unit }], series: series,
        hooks: { draw: [rings(ts, c, key)] }
      }, aligned);
    });
  }

  function curves(c, d) {
    A.section(root, "Load curves: " + c.name + " (medians across rounds per load point)");
    curveChart(c, "tps", "Output throughput", "tokens/s", null, d.throughput);
    curveChart(c, "ttft_p99", "TTFT p99", "ms", c.slo_ttft_ms, d.ttft);
    curveChart(c, "tpot_p99", "TPOT p99", "ms", c.slo_tpot_ms, d.tpot);
    curveChart(c, "goodput", "Goodput", "requests/s", null, d.goodput);
    if (c.priced) curveChart(c, "cost", "Cost per million output tokens", "USD", null, d.cost);
    if (c.targets.some(function (t) { return t.gpu; })) {
      curveChart(c, "sm_mhz", "GPU SM clock, median across rounds", "MHz", null,
                 "The GPUs' SM clock sampled during the point's rounds (a falling clock: power or thermal limits)");
      curveChart(c, "max_temp_c", "GPU temperature, the highest sampled", "°C", null,
                 "The hottest GPU sample during the point's rounds");
    }
  }

  /* ---- per load point: the rounds folded ---- */

  /* three to a row in a 1280 px window */
  A.W_SMALL = 390;
  var GRID = [];
  for (var g = 0; g <= 100; g++) GRID.push(g);

  /* Nearest-rank percentile q (0..100) of sorted v; q = 0 is the minimum. */
  function pct(v, q) {
    if (!v.length) return null;
    return v[Math.max(0, Math.ceil(q / 100 * v.length) - 1)];
  }

  /* Per percentile of GRID: the median across rounds (the line) and the
   * min and max (the band) of each round's percentile. */
  function spread(rounds, key) {
    var per = rounds.map(function (r) { return sorted(r.req[key]); }).filter(function (v) { return v.length; });
    var mid = [], lo = [], hi = [];
    GRID.forEach(function (q) {
      var at = per.map(function (v) { return pct(v, q); }).sort(function (a, b) { return a - b; });
      var n = at.length, m = n ? (n % 2 ? at[(n - 1) / 2] : (at[n / 2 - 1] + at[n / 2]) / 2) : null;
      mid.push(m);
      lo.push(n ? at[0] : null);
      hi.push(n ? at[n - 1] : null);
    });
    return { mid: mid, lo: lo, hi: hi, rounds: per.length };
  }

  /* The band of each series (k + 1 ↔ bands[k]): filled between min and max. */
  function drawBands(bands) {
    return function (u) {
      var ctx = u.ctx;
      ctx.save();
      ctx.beginPath();
      ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
      ctx.clip();
      bands.forEach(function (b, k) {
        if (!u.series[k + 1].show) return;
        ctx.beginPath();
        var started = false;
        GRID.forEach(function (q, j) {
          if (b.hi[j] == null) return;
          var x = u.valToPos(q, "x", true), y = u.valToPos(b.hi[j], "y", true);
          if (started) ctx.lineTo(x, y); else { ctx.moveTo(x, y); started = true; }
        });
        for (var j = GRID.length - 1; j >= 0; j--)
          if (b.lo[j] != null) ctx.lineTo(u.valToPos(GRID[j], "x", true), u.valToPos(b.lo[j], "y", true));
        ctx.closePath();
        ctx.globalAlpha = 0.18;
        ctx.fillStyle = u.series[k + 1].stroke();
        ctx.fill();
      });
      ctx.restore();
    };
  }

  function pointChart(parent, name, targets, key, title, def) {
    var have = targets.filter(function (t) { return t.rounds.some(function (r) { return sorted(r.req[key]).length; }); });
    var parts = chunks(have, A.MAX_SERIES);
    parts.forEach(function (part, pi) {
      if (!part.length) return;
      var aligned = [GRID], series = [{ label: "percentile" }], bands = [];
      part.forEach(function (t) {
        var s = spread(t.rounds, key);
        aligned.push(s.mid);
        bands.push(s);
        series.push(line(t.name + " (" + s.rounds + " round" + (s.rounds === 1 ? "" : "s") + ")", t.i));
      });
      var of = parts.length > 1 ? " — targets " + (pi * A.MAX_SERIES + 1) + "–" + (pi * A.MAX_SERIES + part.length) +
                                  " of " + have.length : "";
      plot(parent, title + " by percentile, load " + name + " (ms)" + of,
           "Line: the median across rounds of each round's percentile; band: their min–max. " + def, {
        width: A.W_SMALL, scales: { x: { time: false, range: [0, 100] } },
        axes: [{ label: "percentile of the round's requests" }, { label: "ms" }], series: series,
        /* under the lines: a band drawn over them tints each line with the other targets' colours */
        hooks: { drawAxes: [drawBands(bands)] }
      }, aligned);
    });
  }

  /* The sweep's rounds by load point (x ascending), each with its targets
   * (in order of first appearance; named by seriesOf) and their rounds. */
  function points(runs, seriesOf, targetOrder) {
    var by = {}, list = [];
    runs.forEach(function (r) {
      var k = r.sweep.case, t = seriesOf(r);
      if (!by[k]) { by[k] = { x: r.sweep.x, name: r.sweep["case"], targets: [], of: {} }; list.push(by[k]); }
      var p = by[k];
      if (!p.of[t]) {
        p.of[t] = { name: t, rounds: [], i: targetOrder(t) };
        p.targets.push(p.of[t]);
      }
      p.of[t].rounds.push(r);
    });
    list.sort(function (a, b) { return a.x - b.x || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0); });
    return list;
  }

  function detail(data) {
    var runs = data.runs.filter(function (r) { return r.sweep; });
    if (!runs.length) return;
    /* rounds of two sweeps never pool: with several, a series is a target of one sweep */
    var dirs = [];
    runs.forEach(function (r) { if (dirs.indexOf(r.sweep.dir) < 0) dirs.push(r.sweep.dir); });
    var seriesOf = function (r) { return dirs.length > 1 ? r.sweep.target + " (" + r.sweep.dir + ")" : r.sweep.target; };
    var names = [];
    runs.forEach(function (r) { if (names.indexOf(seriesOf(r)) < 0) names.push(seriesOf(r)); });
    var pts = points(runs, seriesOf, function (t) { return names.indexOf(t); });
    var d = data.definitions;
    A.section(root, "Per load point: latency across rounds");
    A.caption(root, "sub", "One fold per load point (" + pts.length + "), in order of load; each target's rounds are one " +
              "line (the median across rounds) with a band (their min–max).");
    pts.forEach(function (p) {
      var per = p.targets.map(function (t) { return t.rounds.length; });
      var same = per.every(function (k) { return k === per[0]; });
      var f = A.fold(root, "Load " + p.x + " (" + p.name + "): " + p.targets.length + " target" +
                     (p.targets.length === 1 ? "" : "s") + " × " + (same ? per[0] + " round" + (per[0] === 1 ? "" : "s")
                                                                    : "1–" + Math.max.apply(null, per) + " rounds"));
      f.className = "point";
      pointChart(f, p.x, p.targets, "ttft", "TTFT", d.ttft);
      pointChart(f, p.x, p.targets, "tpot", "TPOT", d.tpot);
      pointChart(f, p.x, p.targets, "e2e", "E2E latency", d.e2e);
    });
  }

  A.sections.curves = function (parent, data) {
    root = parent;
    if (!data.curves.length) return;
    data.curves.forEach(function (c) { answer(c, data); });
    data.curves.forEach(function (c) { curves(c, data.definitions); });
    detail(data);
  };
})(window.anvil);

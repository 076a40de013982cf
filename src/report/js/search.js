/* search.js — SLO searches (a sweep's search.json): per target the probes
 * in the order they ran, as a chart (load on x, SLO attainment on y with
 * its 95% interval, the target attainment as a dashed line, pass and fail
 * by colour, the answer ringed, each point numbered by its turn) and a
 * table. The answer itself is a card: among the load curves' answers
 * (curve.js takes it for its target) or, with no load curve on the page,
 * here. */
(function (A) {
  "use strict";
  var el = A.el, fmt = A.fmt;
  var PASS = "#2ca02c", FAIL = "#d62728";

  /* A series of points only, no line. */
  function dots(label, c) {
    return { label: label, stroke: c, width: 0, paths: function () { return null; },
             points: { show: true, size: 10, stroke: c, fill: c } };
  }

  /* Draws each probe's interval, its turn, and a ring round the answer. */
  function marks(probes, best) {
    return function (u) {
      var ctx = u.ctx, r = devicePixelRatio;
      ctx.save();
      ctx.setLineDash([]);
      ctx.font = (11 * r) + "px sans-serif";
      probes.forEach(function (p, i) {
        if (p.attainment == null) return;
        var x = u.valToPos(p.x, "x", true), c = p.verdict === "pass" ? PASS : FAIL;
        ctx.strokeStyle = c;
        ctx.fillStyle = c;
        ctx.lineWidth = r;
        if (p.interval[0] != null && p.interval[1] != null) {
          ctx.beginPath();
          ctx.moveTo(x, u.valToPos(p.interval[0], "y", true));
          ctx.lineTo(x, u.valToPos(p.interval[1], "y", true));
          ctx.stroke();
        }
        ctx.fillText(String(i + 1), x + 7 * r, u.valToPos(p.attainment, "y", true) - 6 * r);
        if (best != null && p.x === best && p.verdict === "pass") {
          ctx.lineWidth = 2 * r;
          ctx.strokeStyle = "#000000";
          ctx.beginPath();
          ctx.arc(x, u.valToPos(p.attainment, "y", true), 10 * r, 0, 2 * Math.PI);
          ctx.stroke();
        }
      });
      ctx.restore();
    };
  }

  function chart(parent, s, res) {
    var xs = [];
    res.probes.forEach(function (p) { if (xs.indexOf(p.x) < 0) xs.push(p.x); });
    xs.sort(function (a, b) { return a - b; });
    var pass = xs.map(function () { return null; }), fail = pass.slice();
    var goal = xs.map(function () { return s.slo_attainment; });
    var lo = s.slo_attainment;
    res.probes.forEach(function (p) {
      (p.verdict === "pass" ? pass : fail)[xs.indexOf(p.x)] = p.attainment;
      if (p.interval[0] != null) lo = Math.min(lo, p.interval[0]);
      if (p.attainment != null) lo = Math.min(lo, p.attainment);
    });
    lo = Math.max(0, lo - 0.05);
    var who = res.target ? res.target + ": " : "";
    A.plot(parent, who + "SLO attainment per probe (ratio of requests good)",
           "Each probe's attainment (good / measured requests) at its load, numbered in the order the search ran " +
           "them; bar: its 95% Wilson interval; green passed, red failed; dashed: the target " + s.slo_attainment +
           "; ring: the answer.", {
      scales: { x: { time: false }, y: { range: [lo, 1.05] } },
      axes: [{ label: s.load_label }, { label: "SLO attainment" }],
      series: [{ label: s.load_label }, dots("pass", PASS), dots("fail", FAIL),
               { label: "target " + s.slo_attainment, stroke: "#000000", dash: [6, 4], width: 1,
                 points: { show: false } }],
      hooks: { draw: [marks(res.probes, res.best)] }
    }, [xs, pass, fail, goal]);
  }

  function table(parent, s, res) {
    var t = el("table", "heat probes", null, parent);
    var tr = el("tr", null, null, t);
    ["turn", s.load_label, "rounds", "good / n", "attainment", "95% interval", "verdict", "decided by"]
      .forEach(function (h) { el("th", null, h, tr); });
    res.probes.forEach(function (p, i) {
      var r = el("tr", "probe " + p.verdict, null, t);
      r.setAttribute("data-x", String(p.x));
      if (res.best != null && p.x === res.best && p.verdict === "pass") r.className += " best";
      [String(i + 1), String(p.x), String(p.rounds), p.good + " / " + p.n, fmt(p.attainment, 4),
       fmt(p.interval[0], 4) + "–" + fmt(p.interval[1], 4)].forEach(function (v) { el("td", null, v, r); });
      A.verdict(el("td", null, null, r), p.verdict === "pass" ? "PASS" : "FAIL");
      el("td", "l", p.decided_by, r);
    });
  }

  A.sections.search = function (root, data) {
    (data.searches || []).forEach(function (s) {
      A.section(root, "SLO search: the largest " + s.load_label + " with attainment ≥ " + s.slo_attainment +
                " (SLO " + s.slo + ")");
      A.caption(root, "sub", s.name + " — the search probes a load, counts the requests that met every SLO, and " +
                "moves up on a pass and down on a fail until the bracket closes.");
      if (!data.curves.length)
        A.answerCards(root, s.answers.map(function (a) {
          var b = {};
          for (var k in a) b[k] = a[k];
          b.target = a.target || s.load_label + " search";
          return b;
        }));
      s.results.forEach(function (res) {
        chart(root, s, res);
        table(root, s, res);
        el("div", "sub", (res.target ? res.target + ": " : "") + res.probes.length + " probe" +
           (res.probes.length === 1 ? "" : "s") + "; stopped: " + res.stopped, root);
      });
    });
  };
})(window.anvil);

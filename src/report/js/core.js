/* core.js — what every section of `anvil report` draws with: elements,
 * captions, charts (uPlot, at most A.MAX_SERIES series each), heat tables,
 * folds, and the check of what was drawn. The page's script is this file,
 * then one file per section (run.js, curve.js, matrix.js, decode.js,
 * graph.js), then page.js, which lays the sections out: see
 * scripts/embed-report-assets. Every section registers itself as
 * A.sections.NAME(root, data). */
(function () {
  "use strict";
  var A = window.anvil = { sections: {}, charts: [], errors: [] };
  window.addEventListener("error", function (e) { A.errors.push("error: " + e.message); });
  document.addEventListener("securitypolicyviolation", function (e) {
    A.errors.push("blocked by the page's policy (no network at open time): " + e.blockedURI);
  });
  var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
  /* more series than colours cannot be told apart: beyond this, small multiples */
  A.MAX_SERIES = COLORS.length;
  A.W = 560;
  A.H = 300;

  A.el = function (tag, cls, text, parent) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  };
  var el = A.el;
  A.color = function (i) { return COLORS[i % COLORS.length]; };
  A.fmt = function (v, p) { return v == null || !isFinite(v) ? "n/a" : Number(v).toFixed(p); };
  A.sorted = function (v) {
    return v.filter(function (x) { return x != null && isFinite(x); }).sort(function (a, b) { return a - b; });
  };

  /* A caption: text, with `code` spans (the definitions are Markdown's) as <code>. */
  A.caption = function (parent, cls, text) {
    var e = el("div", cls, null, parent);
    String(text).split("`").forEach(function (part, i) {
      if (!part) return;
      if (i % 2) el("code", null, part, e);
      else e.appendChild(document.createTextNode(part));
    });
    return e;
  };

  /* A section's heading. */
  A.section = function (root, title) { return el("h2", null, title, root); };

  /* A fold: <details> whose summary is title; returns the element to fill. */
  A.fold = function (parent, title, open) {
    var d = el("details", null, null, parent);
    if (open) d.open = true;
    el("summary", null, title, d);
    return d;
  };

  /* A chart box: title (with units), the one-line definition, the plot.
   * A chart of more than A.MAX_SERIES series is an error of the section
   * that made it (it must split into small multiples). */
  A.plot = function (parent, title, def, opts, aligned) {
    var box = el("div", "chart", null, parent);
    el("div", "title", title, box);
    if (def) A.caption(box, "def", def);
    var holder = el("div", null, null, box);
    holder.setAttribute("data-chart", title);
    opts.width = opts.width || A.W;
    opts.height = opts.height || A.H;
    opts.legend = opts.legend || { show: true };
    var colors = [];
    opts.series.forEach(function (s, i) { if (i > 0 && s.stroke) colors.push(s.stroke); if (i > 0 && s.fill) colors.push(s.fill); });
    if (opts.series.length - 1 > A.MAX_SERIES)
      A.errors.push("chart \"" + title + "\" has " + (opts.series.length - 1) + " series (at most " + A.MAX_SERIES + ")");
    A.charts.push({ title: title, holder: holder, colors: colors });
    return new uPlot(opts, aligned, holder);
  };

  A.line = function (label, i, extra) {
    var s = { label: label, stroke: A.color(i), width: 2, spanGaps: true, points: { show: false } };
    for (var k in extra) s[k] = extra[k];
    return s;
  };

  /* A heat table: head, rows (numbers are shaded by column where
   * numeric[c]; flags[r][c] marks a cell with " *"). */
  A.heat = heat;
  var fmt = A.fmt;
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


  /* A verdict badge (PASS green, FAIL red, anything else orange) in parent. */
  A.verdict = function (parent, status) {
    var s = String(status);
    return el("span", "verdict " + (s === "PASS" ? "pass" : s === "FAIL" ? "fail" : "other"), s, parent);
  };

  /* Whether each chart's canvas holds pixels of its series' colours; the
   * result goes to #anvil-status's data attributes (data-charts,
   * data-drawn, data-errors), which stays hidden unless something failed. */
  A.check = function () {
    var drawn = 0, bad = [];
    A.charts.forEach(function (c) {
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
    st.setAttribute("data-charts", String(A.charts.length));
    st.setAttribute("data-drawn", String(drawn));
    st.setAttribute("data-errors", String(A.errors.length));
    st.textContent = A.charts.length + " charts, " + drawn + " drawn" + (bad.length ? "; not drawn: " + bad.join(", ") : "") +
                     (A.errors.length ? "; errors: " + A.errors.join("; ") : "; no errors");
    st.className = bad.length || A.errors.length ? "bad" : "ok";
  };
})();

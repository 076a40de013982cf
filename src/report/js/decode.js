/* decode.js — decode matrices (`anvil decode`), answer first: the best
 * sustained aggregate tok/s of a cell that ran in full, and per context the
 * largest concurrency that did; then context × concurrency heat maps of
 * aggregate tok/s, TTFT, ITL and acceptance length with the capacity-limited
 * and underfilled cells marked, bursts, the prefill chart and the event log. */
(function (A) {
  "use strict";
  var el = A.el, fmt = A.fmt;

  /* a cell's marks, in the legend's order */
  var MARKS = [["capacity_limited", "*", "capacity-limited: the server's KV pool cannot hold this many streams of " +
                "this context and their output (capacity_reason)"],
               ["underfilled", "†", "underfilled: the server ran fewer requests than asked (effective concurrency " +
                "in the cell's tooltip)"],
               ["timed_out", "‡", "warm-up timed out: the readiness gate never opened, measured anyway (timeout_reason)"]];

  /* the marks in words: "capacity-limited, underfilled" */
  function why(c) {
    return MARKS.filter(function (m) { return c[m[0]]; }).map(function (m) { return m[2].split(":")[0]; }).join(", ");
  }
  function marks(c) {
    return MARKS.filter(function (m) { return c[m[0]]; }).map(function (m) { return m[1]; }).join("");
  }
  /* A cell that ran as asked: the figure of that concurrency and context. */
  function full(c) { return !c.capacity_limited && !c.underfilled && !c.timed_out; }
  function ms(v) { return v == null ? null : v * 1000; }
  function tokens(n) {
    return n >= 1024 && n % 1024 === 0 ? (n / 1024) + "k (" + n + ")" : String(n);
  }
  function tip(c) {
    var t = ["context " + c.ctx + " tokens, concurrency " + c.conc];
    if (c.eff_conc != null) t.push("effective concurrency " + c.eff_conc + " of " + c.conc);
    if (c.completed != null) t.push(c.completed + " requests completed, " + (c.errors || 0) + " errors");
    if (c.capacity_reason) t.push(c.capacity_reason);
    if (c.timeout_reason) t.push(c.timeout_reason);
    return t.join("\n");
  }

  /* ---- the answer ---- */

  function best(cells) {
    var b = null;
    cells.forEach(function (c) { if (c.tps != null && (!b || c.tps > b.tps)) b = c; });
    return b;
  }

  function headline(box, m) {
    var ok = best(m.cells.filter(full)), any = best(m.cells), c = ok || any;
    var h = el("div", "headline", null, box);
    if (!c) {
      h.textContent = "No cell measured any output tokens.";
      return;
    }
    el("span", null, ok ? "Best sustained decode of a cell that ran in full: " :
       "Every cell was capacity-limited, underfilled or never warmed up; the best measured: ", h);
    el("b", "answer-tps", fmt(c.tps, 1) + " tok/s", h);
    el("span", null, " aggregate at concurrency " + c.conc + ", context " + tokens(c.ctx) + " tokens" +
       (ok ? "" : " " + marks(c)), h);
    var more = [];
    if (c.per_req_tps != null) more.push(fmt(c.per_req_tps, 1) + " tok/s per stream");
    if (c.ttft_p50 != null) more.push("TTFT p50 " + (c.ttft_p50 < 1 ? fmt(ms(c.ttft_p50), 1) + " ms" : fmt(c.ttft_p50, 2) + " s"));
    if (c.itl_p50 != null) more.push("ITL p50 " + fmt(ms(c.itl_p50), 2) + " ms");
    if (c.accept_len != null) more.push("acceptance length " + fmt(c.accept_len, 2));
    if (more.length) el("div", "sub", more.join(" · "), box);
  }

  /* Per context: the largest concurrency that ran in full, and the first one that did not. */
  function fit(box, m) {
    el("div", "title", "Per context: the largest concurrency that ran in full", box);
    var t = el("table", "heat decode-fit", null, box), tr = el("tr", null, null, t);
    ["context (tokens)", "largest full concurrency", "aggregate tok/s", "tok/s per stream", "ITL p50 (ms)",
     "first limited concurrency"].forEach(function (h, i) { el("th", i === 5 ? "l" : null, h, tr); });
    m.contexts.forEach(function (ctx) {
      var row = m.cells.filter(function (c) { return c.ctx === ctx; }).sort(function (a, b) { return a.conc - b.conc; });
      var ok = row.filter(full), top = ok.length ? ok[ok.length - 1] : null;
      var bad = row.filter(function (c) { return !full(c); })[0];
      var r = el("tr", null, null, t);
      r.setAttribute("data-ctx", String(ctx));
      el("td", null, tokens(ctx), r);
      el("td", null, top ? String(top.conc) : "none", r);
      el("td", null, top ? fmt(top.tps, 1) : "n/a", r);
      el("td", null, top ? fmt(top.per_req_tps, 1) : "n/a", r);
      el("td", null, top ? fmt(ms(top.itl_p50), 2) : "n/a", r);
      el("td", "l", bad ? bad.conc + " (" + why(bad) + ")" : "none", r);
    });
  }

  function answer(root, m) {
    var box = el("div", "decode-answer", null, root);
    var facts = [m.engine, m.model, m.server].filter(Boolean).join(" · ");
    var run = [];
    if (m.window_s != null) run.push(fmt(m.window_s, 1) + " s window per cell");
    if (m.max_tokens != null) run.push("max_tokens " + m.max_tokens);
    if (m.kv_tokens != null) run.push("KV budget " + Math.round(m.kv_tokens) + " tokens");
    if (m.cells_planned != null) run.push((m.cells_done != null ? m.cells_done : m.cells.length) + " of " + m.cells_planned + " cells");
    el("div", "sub", facts + (run.length ? " — " + run.join(", ") : ""), box);
    headline(box, m);
    fit(box, m);
    if (m.incomplete) el("div", "warn", "Incomplete: " + m.incomplete, box);
  }

  /* ---- the evidence ---- */

  function legend(root, m) {
    var used = MARKS.filter(function (k) { return m.cells.some(function (c) { return c[k[0]]; }); });
    var box = el("div", "legend", null, root);
    if (!used.length) {
      box.textContent = "Every cell ran in full: none capacity-limited, underfilled or timed out.";
      return;
    }
    used.forEach(function (k) {
      var l = el("div", null, null, box);
      el("b", null, k[1] + " ", l);
      l.appendChild(document.createTextNode(k[2]));
    });
    el("div", null, "Marked cells keep their measured value, hatched; hover a cell for the server's reason.", box);
  }

  /* A context × concurrency heat table of key (value(c) → number), prec(v) decimals. */
  function grid(parent, m, cells, key, title, def, value, prec, unit) {
    var box = el("div", "grid", null, parent);
    el("div", "title", title, box);
    var t = el("table", "heat decode-heat", null, box);
    t.setAttribute("data-metric", key);
    if (unit) t.setAttribute("data-unit", unit);
    var tr = el("tr", null, null, t);
    el("th", null, "context \\ concurrency", tr);
    m.concurrency.forEach(function (c) { el("th", null, String(c), tr); });
    var vals = cells.map(value).filter(function (v) { return v != null && isFinite(v); });
    var lo = Math.min.apply(null, vals), hi = Math.max.apply(null, vals);
    m.contexts.forEach(function (ctx) {
      var r = el("tr", null, null, t);
      el("th", null, tokens(ctx), r);
      m.concurrency.forEach(function (conc) {
        var c = cells.filter(function (x) { return x.ctx === ctx && x.conc === conc; })[0];
        var v = c ? value(c) : null, mk = c ? marks(c) : "";
        var td = el("td", mk ? "limited" : null, c ? (v == null ? "n/a" : fmt(v, prec(v))) + (mk ? " " + mk : "") : "", r);
        td.setAttribute("data-ctx", String(ctx));
        td.setAttribute("data-conc", String(conc));
        if (c) td.title = tip(c);
        if (v != null && hi > lo) {
          var f = (v - lo) / (hi - lo);
          td.style.backgroundColor = "rgba(31,119,180," + (0.08 + 0.6 * f).toFixed(3) + ")";
        }
      });
    });
    /* the registry's "name (unit): definition" without its name and unit: the title has them */
    if (def) A.caption(box, "def grid-def", def.replace(/^[^:(]+\([^)]*\): /, ""));
  }

  function heats(root, m, d) {
    var wrap = el("div", "grids", null, root);
    var two = function () { return 2; }, one = function () { return 1; };
    grid(wrap, m, m.cells, "tps", "Aggregate output tok/s (darker = more)",
         "output tokens that arrived inside the cell's window / the window", function (c) { return c.tps; }, one);
    /* TTFT in ms while every cell's is under a second, else in s (long contexts: tens of seconds) */
    var sec = m.cells.some(function (c) { return c.ttft_p50 != null && c.ttft_p50 >= 1; });
    grid(wrap, m, m.cells, "ttft_p50", "TTFT p50 (" + (sec ? "s" : "ms") + ")", d.ttft,
         function (c) { return sec ? c.ttft_p50 : ms(c.ttft_p50); }, function (v) { return v < 1 ? 3 : v < 100 ? 2 : 1; },
         sec ? "s" : "ms");
    grid(wrap, m, m.cells, "itl_p50", "ITL p50 (ms)", d.itl, function (c) { return ms(c.itl_p50); }, two);
    grid(wrap, m, m.cells, "itl_p99", "ITL p99 (ms)", null, function (c) { return ms(c.itl_p99); }, two);
    if (m.cells.some(function (c) { return c.accept_len != null; }))
      grid(wrap, m, m.cells, "accept_len", "Acceptance length (tokens per draft step)",
           "speculative decoding: 1 + accepted draft tokens / drafts over the window (the server's counters)",
           function (c) { return c.accept_len; }, two);
    else
      el("div", "grid na", "Acceptance length: n/a: no speculative decoding reported", wrap);
    if (m.priced)
      grid(wrap, m, m.cells, "cost", "USD per million output tokens", d.cost, function (c) { return c.cost; },
           function () { return 4; });
    if (m.bursts.length)
      grid(wrap, m, m.bursts, "burst_tps", "Burst: aggregate output tok/s (all requests at once, to the end)",
           null, function (c) { return c.tps; }, one);
  }

  function prefill(root, m) {
    var p = m.prefill.slice().sort(function (a, b) { return a.ctx - b.ctx; });
    if (!p.length) {
      el("div", "sub", "Prefill: none measured (the matrix skipped prefill, or every context is 0).", root);
      return;
    }
    var aligned = [p.map(function (e) { return e.ctx; }), p.map(function (e) { return e.tok_s; })];
    var series = [{ label: "context (tokens)" }, A.line("client: prompt tokens / TTFT", 0, { points: { show: true, size: 10, fill: A.color(0) } })];
    if (p.some(function (e) { return e.server_tok_s != null; })) {
      aligned.push(p.map(function (e) { return e.server_tok_s; }));
      series.push(A.line("server: prompt tokens / its prefill time", 1, { points: { show: true, size: 10, fill: A.color(1) } }));
    }
    A.plot(root, "Prefill: prompt tokens/s against context (tokens)",
           "each prefill entry's prompt tokens / its time to first token (" +
           p.map(function (e) { return tokens(e.ctx) + ": " + (e.method || "n/a") + ", " + (e.samples || 0) + " samples"; }).join("; ") +
           "); the server's from its prefill-time histogram where it validated the entry", {
      /* from 0, past the largest context: one entry alone is a point inside the chart, not on its edge */
      scales: { x: { time: false, range: function (u, lo, hi) { return [0, (hi || 1) * 1.1]; } }, y: { range: function (u, lo, hi) { return [0, (hi || 1) * 1.15]; } } },
      axes: [{ label: "context (tokens)" }, { label: "prompt tokens/s", size: 70 }], series: series
    }, aligned);
  }

  function events(root, m) {
    var f = A.fold(root, "Event log (" + m.events.length + " events)", false);
    var t = el("table", "heat events", null, f), tr = el("tr", null, null, t);
    el("th", null, "time", tr);
    el("th", null, "event", tr);
    m.events.forEach(function (e) {
      /* what went other than planned stands out: timeouts, failures, cells not measured */
      var k = /^(\d\d:\d\d:\d\d) (.*)$/.exec(e), r = el("tr", /timeout|timed out|fail|incomplete|skip|retry|refus|error/i.test(e) ? "warn" : null, null, t);
      el("td", "l", k ? k[1] : "", r);
      el("td", "l", k ? k[2] : e, r);
    });
  }

  A.sections.decode = function (root, data) {
    data.decode.forEach(function (m) {
      A.section(root, "Decode matrix: " + m.name);
      answer(root, m);
      legend(root, m);
      heats(root, m, data.definitions);
      prefill(root, m);
      events(root, m);
    });
  };
})(window.anvil);

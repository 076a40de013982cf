/* matrix.js — matrices (`anvil aggregate`, a sweep's matrix.json), answer
 * first: the status (PASS: every request of every round completed) with
 * its reasons, then per case that several engines ran the leader of each
 * headline figure (html_curve.c), then the heat table of the medians
 * across rounds per engine and case. */
(function (A) {
  "use strict";
  var el = A.el;

  function counts(m) {
    var s = [];
    if (m.rounds != null) s.push(m.rounds + " rounds");
    if (m.requests != null) s.push(m.requests + " requests");
    return s.concat(m.about || []).join(" · ");
  }

  A.sections.matrices = function (root, data) {
    data.matrices.forEach(function (m) {
      A.section(root, "Matrix: " + m.name);
      var v = el("div", "answer matrix-status", null, root);
      A.verdict(v, m.status);
      el("span", null, m.status === "PASS" ? " every request of every round completed" : "", v);
      var c = counts(m);
      if (c) el("span", "why", " — " + c, v);
      (m.reasons || []).forEach(function (r) { el("div", "why", r, root); });
      if (m.leaders && m.leaders.length)
        A.heat(root, "Leaders per case (median across rounds): the engine with the most output tokens/s, the lowest " +
               "TTFT p99 and the lowest TPOT p99 (ms)",
               ["case", "engines", "most out tok/s", "lowest TTFT p99 ms", "lowest TPOT p99 ms"], m.leaders,
               [false, false, false, false, false]);
      A.heat(root, "Median across rounds per engine and case; darker = larger in its column", m.head, m.rows,
             m.head.map(function (_, c) { return c >= 2; }));
    });
  };
})(window.anvil);

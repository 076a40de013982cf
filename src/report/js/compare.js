/* compare.js — the comparison, first on the page when it holds two or more
 * runs or matrices: `anvil compare`'s verdicts of each input (B) against the
 * first (A, the baseline), its summary lines on top, then per pair the
 * verdict table (better, worse, same within noise: coloured). */
(function (A) {
  "use strict";
  var el = A.el;

  /* "better", "worse", "same" or "na": the verdict's word (its text before " (") */
  function word(v) {
    var w = String(v).split(" (")[0];
    return w === "better" || w === "worse" || w === "same" ? w : "na";
  }

  function table(parent, t) {
    el("div", "title", t.title, parent);
    var tb = el("table", "verdicts", null, parent), tr = el("tr", null, null, tb);
    var vc = t.columns.indexOf("verdict (B)");
    t.columns.forEach(function (h) { el("th", null, h, tr); });
    t.rows.forEach(function (r) {
      var row = el("tr", null, null, tb);
      r.forEach(function (v, c) {
        var td = el("td", c === 0 ? "l" : null, v, row);
        if (c === vc) td.className = "verdict " + word(v);
      });
    });
  }

  function pair(parent, p, i) {
    var box = el("div", "pair", null, parent);
    el("h3", null, "B" + (i + 1) + " = " + p.b, box);
    if (p.refused) {
      el("div", "refused", "Not compared: " + p.refused, box);
      return;
    }
    var ul = el("ul", "summary", null, box);
    p.summary.forEach(function (s) { el("li", null, s, ul); });
    var t = p.tally;
    el("div", "tally", t.better + " better, " + t.worse + " worse, " + t.same + " the same" +
       (t.na ? ", " + t.na + " n/a" : "") + " (metrics of B against A)", box);
    p.tables.forEach(function (tb) { table(box, tb); });
    if (p.notes.length) {
      var f = A.fold(box, "How the verdicts were judged");
      p.notes.forEach(function (n) { A.caption(f, "def", n); });
    }
  }

  /* Whether any pair was compared: a comparison of none is no answer, so it
   * goes last (compareNote), not first. */
  function comparedAny(c) {
    return !c.refused && c.pairs.some(function (p) { return !p.refused; });
  }

  function heading(root, c, title) {
    A.section(root, title).id = "anvil-compare";
    A.caption(root, "sub", "A (the baseline) = " + c.baseline + ". Each other input is a B compared with A: " +
              "better or worse only when B's median differs from A's by more than the rounds' noise and by at " +
              "least " + c.min_effect_pct + " % of A (`anvil compare`'s rule); otherwise the same." +
              (c.left_out ? " " + c.left_out + " more inputs were left out." : ""));
  }

  A.sections.compare = function (root, data) {
    var c = data.comparison;
    if (!c || !comparedAny(c)) return;
    heading(root, c, "Comparison: each input against the first");
    c.pairs.forEach(function (p, i) { pair(root, p, i); });
  };

  A.sections.compareNote = function (root, data) {
    var c = data.comparison;
    if (!c || comparedAny(c)) return;
    heading(root, c, "Not compared: no input compares with the first");
    if (c.refused) {
      el("div", "refused", "Not compared: " + c.refused, root);
      return;
    }
    var refused = c.pairs.length;
    el("div", "refused", "None of the " + refused + " other input" + (refused === 1 ? "" : "s") +
       " compares with the baseline (different cases or workloads).", root);
    var f = A.fold(root, "Why each was not compared");
    c.pairs.forEach(function (p, i) { pair(f, p, i); });
  };
})(window.anvil);

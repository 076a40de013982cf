/* page.js — lays the report out, answer first: comparisons, load curves,
 * SLO searches' probes, decode matrices and matrices before the runs they summarize, graph data
 * last; then checks what was drawn. */
(function (A) {
  "use strict";
  /* a comparison of nothing (every pair refused) is said last: compareNote */
  var ORDER = ["compare", "curves", "search", "decode", "matrices", "runs", "graphs", "compareNote"];
  var data = JSON.parse(document.getElementById("anvil-data").textContent);
  var root = document.getElementById("anvil-report");
  ORDER.forEach(function (name) {
    var draw = A.sections[name];
    if (!draw) return;
    try {
      draw(root, data);
    } catch (e) {
      A.errors.push("error in " + name + ": " + e.message);
    }
  });
  setTimeout(A.check, 100);
})(window.anvil);

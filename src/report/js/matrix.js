/* matrix.js — matrices (`anvil aggregate`): one heat table per matrix,
 * the median across rounds per engine and case. */
(function (A) {
  "use strict";
  A.sections.matrices = function (root, data) {
    data.matrices.forEach(function (m) {
      A.section(root, "Matrix: " + m.name + " (" + m.status + ")");
      A.heat(root, "median across rounds per engine and case; darker = larger in its column", m.head, m.rows,
             m.head.map(function (_, c) { return c >= 2; }));
    });
  };
})(window.anvil);

/* decode.js — decode matrices (`anvil decode`): context × concurrency
 * heat tables of each cell's figures. */
(function (A) {
  "use strict";
  A.sections.decode = function (root, data) {
    var d = data.definitions;
    data.decode.forEach(function (m) {
      A.section(root, "Decode matrix: " + m.name);
      var head = ["context \\ concurrency"].concat(m.concurrency.map(String));
      var shade = head.map(function (_, c) { return c > 0; });
      A.heat(root, "aggregate output tokens/s of each cell; * = capacity-limited or underfilled", head, m.rows, shade, m.flags);
      if (m.cost_rows)
        A.heat(root, "USD per million output tokens of each cell (" + d.cost + ")", head, m.cost_rows, shade, m.flags);
    });
  };
})(window.anvil);

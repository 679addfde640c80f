// The sortable tables of sbpbench's pages (sbpbench/outputs/page.py, overview.py), inlined into them.
// A click on a heading of a table of class "sortable" sorts the rows by that column, a
// second click the other way; numbers (a cell's leading number: "12.3 ± 0.4" sorts as 12.3) by
// value, other cells as text, cells without a number (n/a) after the numbers either way.
(function () {
  "use strict";
  const key = (row, i) => {
    const text = row.cells[i].textContent.trim(), v = parseFloat(text);
    return isNaN(v) ? text : v;
  };
  function order(a, b, dir) {
    const an = typeof a === "number", bn = typeof b === "number";
    if (an && bn) return (a - b) * dir;
    if (an !== bn) return an ? -1 : 1;
    return a.localeCompare(b) * dir;
  }
  for (const table of document.querySelectorAll("table.sortable")) {
    const heads = Array.from(table.tHead.rows[0].cells);
    heads.forEach((th, i) => th.addEventListener("click", () => {
      const dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
      for (const h of heads) h.removeAttribute("aria-sort");
      th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
      const body = table.tBodies[0];
      const rows = Array.from(body.rows).sort((a, b) => order(key(a, i), key(b, i), dir));
      for (const row of rows) body.appendChild(row);
    }));
  }
})();

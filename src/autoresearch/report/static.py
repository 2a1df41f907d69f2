"""The report page's inline style and script (no framework, nothing fetched)."""

from __future__ import annotations

STYLE = """
:root { --kept: #1a9641; --disc: #8c8c8c; --err: #d7191c; --base: #2b6cb0; --ink: #1f2328;
  --line: #d0d7de; --soft: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--ink); background: #fff; }
main { max-width: 1280px; margin: 0 auto; padding: 20px 24px 60px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 28px 0 10px; }
code { font: 12px/1.4 ui-monospace, "SFMono-Regular", Menlo, monospace; }
.sub { color: #57606a; margin: 0; }
.status { font-weight: 600; }
.live { background: #fff8c5; border: 1px solid #d4a72c; padding: 6px 10px; border-radius: 6px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(190px, 1fr)); gap: 10px;
  margin-top: 16px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.card h2 { margin: 0; font-size: 12px; text-transform: uppercase; letter-spacing: .04em;
  color: #57606a; }
.card .value { font-size: 20px; font-weight: 600; margin: 4px 0 2px; }
.note, .hint { color: #57606a; font-size: 12px; margin: 0; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 14px 0 0; }
.facts dt { color: #57606a; }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.spend { display: flex; gap: 16px; flex-wrap: wrap; margin-top: 12px; }
.plot img { width: 100%; max-width: 1200px; height: auto; border: 1px solid var(--line);
  border-radius: 8px; margin-top: 18px; }
.missing { background: var(--soft); border: 1px dashed var(--line); padding: 24px;
  border-radius: 8px; margin-top: 18px; }
table { border-collapse: collapse; width: 100%; }
table.small { width: auto; }
caption { text-align: left; font-weight: 600; padding-bottom: 4px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left;
  vertical-align: top; }
th { background: var(--soft); position: sticky; top: 0; }
th button { all: unset; cursor: pointer; font-weight: 600; }
th[aria-sort=ascending] button::after { content: " ▲"; }
th[aria-sort=descending] button::after { content: " ▼"; }
td.n { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.better { color: #116329; font-weight: 600; }
td.worse { color: #82071e; }
td.desc { max-width: 360px; }
td.why { max-width: 320px; color: #57606a; font-size: 12px; }
td.why details summary { cursor: pointer; }
td.why ul { margin: 2px 0; padding-left: 16px; overflow-wrap: anywhere; }
td a { margin-right: 6px; white-space: nowrap; }
tr[data-outcome=kept] { background: #f0faf3; }
tr[data-outcome=error] { background: #fdf0f0; }
.pill { padding: 1px 8px; border-radius: 10px; font-size: 12px; color: #fff;
  background: var(--disc); white-space: nowrap; }
.pill.kept { background: var(--kept); }
.pill.error { background: var(--err); }
.pill.baseline { background: var(--base); }
.pill.other { background: #bbb; color: var(--ink); }
.filters button { border: 1px solid var(--line); background: #fff; border-radius: 6px;
  padding: 2px 10px; cursor: pointer; }
.filters button[aria-pressed=true] { background: var(--ink); color: #fff; }
details.kept { border: 1px solid var(--line); border-radius: 8px; margin: 8px 0; }
details.kept summary { padding: 8px 12px; cursor: pointer; background: var(--soft); }
pre.diff { margin: 0; padding: 10px 12px; overflow-x: auto; font: 12px/1.4 ui-monospace,
  Menlo, monospace; }
pre.diff .add { color: #116329; background: #dafbe1; }
pre.diff .del { color: #82071e; background: #ffebe9; }
pre.diff .hunk { color: #0550ae; }
pre.diff .file { font-weight: 600; }
"""

SCRIPT = """
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const table = document.getElementById("iterations");
  if (!table) return;
  const body = table.tBodies[0];
  const key = (row, col) => {
    const cell = row.cells[col];
    const raw = cell.dataset.sort;
    return raw === undefined ? cell.textContent.trim().toLowerCase() : Number(raw);
  };
  const compare = (x, y, asc) => {
    const xn = typeof x === "number", yn = typeof y === "number";
    if (xn !== yn) return xn ? -1 : 1;  // blanks last, whichever the direction
    const order = xn ? x - y : x.localeCompare(y, undefined, { numeric: true });
    return asc ? order : -order;
  };
  table.querySelectorAll("th button").forEach((button) => {
    button.addEventListener("click", () => {
      const th = button.parentElement;
      const col = Number(button.dataset.col);
      const asc = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach((h) => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      const rows = Array.from(body.rows);
      rows.sort((a, b) => compare(key(a, col), key(b, col), asc));
      rows.forEach((row) => body.appendChild(row));
    });
  });
  document.querySelectorAll("[data-filter]").forEach((button) => {
    button.addEventListener("click", () => {
      const wanted = button.dataset.filter;
      document.querySelectorAll("[data-filter]").forEach((b) =>
        b.setAttribute("aria-pressed", String(b === button)));
      Array.from(body.rows).forEach((row) => {
        const outcome = row.dataset.outcome;
        const shown = wanted === "all" || outcome === wanted ||
          (wanted === "kept" && outcome === "baseline");
        row.hidden = !shown;
      });
    });
  });
});
"""

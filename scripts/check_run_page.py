"""Check a run's page (RUN/index.html), or the overview of several experiments, in a real headless browser.

Usage: python scripts/check_run_page.py PAGE [--chromium PATH] [--timeout S] [--screenshot PNG [--height PX]]
[--save DIR]

A temporary copy of the page gets two scripts: one first in its head that records every
JavaScript error (window.onerror), and one at its end that, once the page has loaded, works the
interactive plot as a reader would: it switches to every x axis and every y axis, hides a solver
by clicking its legend entry and shows it again, zooms by dragging a rectangle and by the wheel,
and resets; then it sorts the summary table by its error column, up and down, and clicks every
download button (the files are kept, not written). After each step
it records the state (drawn lines, legend entries, axis labels, the shown domain) into the DOM.
Chromium runs the copy headless (``--dump-dom``), and the dump is checked against the curves the
page embeds: as many lines as solvers with curves on the axes, the axis labels of the chosen
axes, one line fewer with a solver hidden, a smaller domain after each zoom and the first one
again after a reset, the sorted column ascending then descending, two saved files per chart (the
interactive one and each figure): an SVG document with its style and a legend, and a PDF file
of it (well-formed, its cross-reference offsets true, drawing the chart's texts and curves:
:func:`pdf_failures`), and no JavaScript error. A page without embedded curves is taken for the
overview: only its downloads and errors are checked.

``--screenshot PNG`` also writes a picture of the page as it first shows (1100 pixels wide, the
first ``--height`` pixels high), to look at what no check can judge: overlaps, clutter, colours;
``--save DIR`` writes the downloaded files there, to look at them too.

Exit code 0 when everything holds, 1 with one line per failure otherwise, 2 when the page
cannot be read or Chromium cannot run. Debian: ``apt-get install chromium``.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

SVG = "{http://www.w3.org/2000/svg}"

#: First in the head: record every JavaScript error, the page's own included.
RECORD_ERRORS = """<script>window.__pageErrors = [];
window.onerror = function (message, source, line) { window.__pageErrors.push(message + " (line " + line + ")"); };
</script>"""

#: At the end of the body: work the plot once the page has loaded and write what happened into <pre id=page-check>.
EXERCISE = """<script>
window.addEventListener("load", function () {
  const out = { steps: [], errors: window.__pageErrors, downloads: [] };
  const saved = [];  // the files the download buttons make: their names and contents
  URL.createObjectURL = (blob) => { saved.push(blob); return "about:blank"; };
  HTMLAnchorElement.prototype.click = function () { out.downloads.push(this.download); };
  if (document.getElementById("sbpbench-data")) {  // a run's page; the overview has no interactive plot
    try { exercise(out); } catch (e) { out.errors.push("while exercising: " + e); }
  }
  try {
    for (const b of document.querySelectorAll("button.download")) b.click();
  } catch (e) { out.errors.push("downloading: " + e); }
  const base64 = (buffer) => {  // a file's bytes as base64 (a PDF is binary)
    const bytes = new Uint8Array(buffer);
    let text = "";
    for (let i = 0; i < bytes.length; i += 4096) text += String.fromCharCode(...bytes.subarray(i, i + 4096));
    return btoa(text);
  };
  Promise.all(saved.map((b) => b.arrayBuffer())).then((buffers) => {
    out.files = buffers.map(base64);
    const pre = document.createElement("pre");
    pre.id = "page-check";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  });
});
function exercise(out) {
  const data = JSON.parse(document.getElementById("sbpbench-data").textContent);
  const chart = document.getElementById("chart");
  const text = (id) => { const node = document.getElementById(id); return node ? node.textContent : null; };
  const numbers = (name) => (chart.getAttribute(name) || "").split(" ").map(Number);
  const state = (step) => ({
    step: step, x: document.getElementById("x-axis").value, y: document.getElementById("y-axis").value,
    shown: !document.getElementById("explorer").hidden,
    lines: chart.querySelectorAll("path.line:not(.dashed)").length,
    legend: document.querySelectorAll("#legend .entry").length,
    off: document.querySelectorAll("#legend .entry.off").length,
    xLabel: text("x-label"), yLabel: text("y-label"),
    xDomain: numbers("data-x-domain"), yDomain: numbers("data-y-domain"),
  });
  const step = (name, action) => {
    try { action(); out.steps.push(state(name)); } catch (e) { out.errors.push(name + ": " + e); }
  };
  const choose = (id, value) => {
    const select = document.getElementById(id);
    select.value = value;
    select.dispatchEvent(new Event("change", { bubbles: true }));
  };
  step("initial", () => {});
  for (const x of Object.keys(data.x)) step("x " + x, () => choose("x-axis", x));
  for (const y of Object.keys(data.y)) step("y " + y, () => choose("y-axis", y));
  step("axes", () => { choose("x-axis", data.initial[0]); choose("y-axis", data.initial[1]); });
  const click = (selector) => { const node = document.querySelector(selector); if (node) node.click(); };
  step("hide", () => click("#legend .entry"));
  step("show", () => click("#legend .entry.off"));
  const box = chart.querySelector(".plot-area").getBoundingClientRect();
  const at = (fx, fy, extra) => Object.assign({ bubbles: true, cancelable: true, button: 0,
    clientX: box.left + fx * box.width, clientY: box.top + fy * box.height }, extra || {});
  step("drag", () => {
    chart.querySelector(".plot-area").dispatchEvent(new MouseEvent("mousedown", at(0.25, 0.25)));
    window.dispatchEvent(new MouseEvent("mousemove", at(0.75, 0.75)));
    window.dispatchEvent(new MouseEvent("mouseup", at(0.75, 0.75)));
  });
  step("reset", () => document.getElementById("reset").click());
  step("wheel", () => chart.querySelector(".plot-area")
    .dispatchEvent(new WheelEvent("wheel", at(0.5, 0.5, { deltaY: -100 }))));
  step("reset again", () => document.getElementById("reset").click());
  // sort the first sortable table (the summary) by its error column, both ways
  const table = document.querySelector("table.sortable");
  const column = () => Array.from(table.tBodies[0].rows).map((r) => parseFloat(r.cells[2].textContent));
  out.sorted = [];
  for (let k = 0; k < 2; k++) {
    table.tHead.rows[0].cells[2].click();
    out.sorted.push(column());
  }
}
</script>"""


def instrumented(page: str) -> str:
    """The page with :data:`RECORD_ERRORS` first in its head and :data:`EXERCISE` at the end of its body."""
    head = page.index("<head>") + len("<head>") if "<head>" in page else 0
    page = page[:head] + RECORD_ERRORS + page[head:]
    end = page.rindex("</body>") if "</body>" in page else len(page)
    return page[:end] + EXERCISE + page[end:]


def embedded_data(page: str) -> dict[str, Any]:
    """The curves the page embeds (its ``#sbpbench-data`` element)."""
    match = re.search(r"<script type='application/json' id='sbpbench-data'>(.*?)</script>", page, re.S)
    if match is None:
        raise ValueError("no embedded curves (script#sbpbench-data) found")
    return json.loads(match[1])


def browse(page: Path, chromium: str, timeout: float, screenshot: Path | None = None,
           height: int = 900) -> tuple[str, str]:
    """Load ``page`` in headless Chromium; its DOM after the scripts ran (or, with ``screenshot``, a
    PNG of its first ``height`` pixels written there, and no DOM), and Chromium's messages."""
    with tempfile.TemporaryDirectory(prefix="sbpbench-page-check-") as tmp:
        shoot = [f"--screenshot={screenshot.resolve()}"] if screenshot else ["--dump-dom"]
        command = [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                   f"--user-data-dir={tmp}/profile", f"--window-size=1100,{height}", "--virtual-time-budget=10000",
                   *shoot, page.resolve().as_uri()]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        return done.stdout, done.stderr


def saved_files(record: dict[str, Any], charts: int, keep: Path | None = None) -> list[str]:
    """The failures of the download buttons: two files per chart (the interactive one and each
    figure), an SVG document with the charts' style in it and a legend, and a PDF file of the same
    drawing (:func:`pdf_failures`); with ``keep``, the files are written into that folder."""
    names, files = record.get("downloads") or [], [base64.b64decode(f) for f in record.get("files") or []]
    if len(names) != 2 * charts or len(files) != len(names):
        return [f"the download buttons saved {len(names)} files ({len(files)} read), expected {2 * charts}"]
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        for name, data in zip(names, files):
            (keep / Path(name).name).write_bytes(data)
    failures = []
    for (name, data), (pdf_name, pdf) in zip(zip(names[::2], files[::2]), zip(names[1::2], files[1::2])):
        try:
            root = ET.fromstring(data)
        except ET.ParseError as exc:
            failures.append(f"downloaded {name}: not well-formed SVG ({exc})")
            continue
        has = {element.tag.removeprefix(SVG) for element in root.iter()}
        if root.tag != SVG + "svg" or not name.endswith(".svg") or not {"style", "g", "path"} <= has:
            failures.append(f"downloaded {name}: not a chart with its style ({sorted(has)})")
        elif root.find(f"{SVG}g[@class='legend']") is None:
            failures.append(f"downloaded {name}: no legend")
        if pdf_name != name.removesuffix(".svg") + ".pdf":
            failures.append(f"downloaded {pdf_name} beside {name}, expected {name.removesuffix('.svg')}.pdf")
        failures += [f"downloaded {pdf_name}: {failure}" for failure in pdf_failures(pdf, root)]
    return failures


def win_ansi(char: str) -> str:
    """A character as the chart's PDF writes it in Helvetica's WinAnsiEncoding (Windows-1252): "?"
    for one it lacks (a control character too)."""
    try:
        code = char.encode("cp1252")[0]
    except UnicodeEncodeError:
        return "?"
    return char if 32 <= code < 127 or code >= 128 else "?"


#: A string of a PDF content stream, its escapes included.
PDF_STRING = re.compile(rb"\((?:\\.|[^\\)])*\)")


def pdf_failures(pdf: bytes, svg: ET.Element) -> list[str]:
    """What is wrong with ``pdf``, the PDF file saved of the chart ``svg``: it must be a PDF 1.4
    file whose cross-reference table gives each object's true offset, with one page whose content
    stream (its ``/Length`` true) draws every text of the chart (the axis labels, ticks and legend)
    and at least a line segment (``l``) for each segment of its curves, and strokes each curve."""
    failures = []
    if not pdf.startswith(b"%PDF-1.4\n") or not pdf.endswith(b"%%EOF\n"):
        return [f"not a PDF 1.4 file (it starts {pdf[:9]!r} and ends {pdf[-6:]!r})"]
    end = re.search(rb"trailer\n<< /Size (\d+) /Root 1 0 R >>\nstartxref\n(\d+)\n%%EOF\n$", pdf)
    if end is None:
        return ["no trailer and startxref at its end"]
    size, xref = int(end[1]), int(end[2])
    table = re.match(rb"xref\n0 (\d+)\n((?:\d{10} \d{5} [fn] \n)+)", pdf[xref:])
    if table is None or int(table[1]) != size:
        return [f"no cross-reference table of {size} entries at startxref {xref}"]
    entries = [table[2][k:k + 20] for k in range(0, len(table[2]), 20)]
    if len(entries) != size or entries[0] != b"0000000000 65535 f \n":
        return [f"the cross-reference table has {len(entries)} entries, expected {size}, the first free"]
    for k, entry in enumerate(entries[1:], start=1):
        if not pdf[int(entry[:10]):].startswith(b"%d 0 obj\n" % k):
            failures.append(f"the cross-reference table puts object {k} at {int(entry[:10])}, where it is not")
    stream = re.search(rb"<< /Length (\d+) >>\nstream\n", pdf)
    if stream is None or pdf[stream.end() + int(stream[1]):][:10] != b"\nendstream":
        return [*failures, "no content stream of its stated /Length"]
    content = pdf[stream.end():stream.end() + int(stream[1])]
    texts = {re.sub(rb"\\(.)", rb"\1", t[1:-1]).decode("cp1252") for t in PDF_STRING.findall(content)}
    ops = PDF_STRING.sub(b"", content).split()
    shown = {"".join(map(win_ansi, element.text or "")) for element in svg.iter(SVG + "text")}
    if missing := shown - texts:
        failures.append(f"texts of the chart not drawn: {sorted(missing)[:5]}")
    curves = [e.get("d", "") for e in svg.iter(SVG + "path") if "line" in (e.get("class") or "").split()]
    segments = sum(d.count("L") for d in curves)
    if ops.count(b"l") < max(1, segments) or ops.count(b"S") < len(curves):
        failures.append(f"too few curves drawn: {ops.count(b'l')} line segments and {ops.count(b'S')} strokes, "
                        f"expected at least {segments} segments and {len(curves)} strokes (the curves)")
    return failures


def check(data: dict[str, Any] | None, dom: str, page: str,
          keep: Path | None = None) -> tuple[list[str], list[dict[str, Any]]]:
    """Compare what the browser recorded with what the page (its text ``page``) embeds, ``data``
    (None for the overview: its downloads only); the failures and the recorded steps. With
    ``keep``, the downloaded files are written into that folder."""
    match = re.search(r'<pre id="page-check">(.*?)</pre>', dom, re.S)
    if match is None:
        return ["the exercising script recorded nothing (did the page load? is JavaScript broken?)"], []
    record = json.loads(html.unescape(match[1]))
    failures = [f"JavaScript error: {e}" for e in record["errors"]]
    figures = len(re.findall(r"<figure data-name=", page))
    if data is None:
        return failures + saved_files(record, figures, keep), record["steps"]
    steps = {s["step"]: s for s in record["steps"]}

    def drawable(x: str, y: str) -> int:
        return sum(f"{x}|{y}" in s["curves"] for s in data["solvers"])

    for name, s in steps.items():
        if not s["shown"]:
            failures.append(f"{name}: the interactive plot is still hidden")
        if s["x"] not in data["x"] or s["y"] not in data["y"]:
            failures.append(f"{name}: no axes chosen (x {s['x']!r}, y {s['y']!r})")
            continue
        want = drawable(s["x"], s["y"]) - s["off"]
        if s["lines"] != want:
            failures.append(f"{name}: {s['lines']} lines drawn, expected {want} (solvers with {s['x']} and {s['y']})")
        if s["legend"] != drawable(s["x"], s["y"]):
            failures.append(f"{name}: {s['legend']} legend entries, expected {drawable(s['x'], s['y'])}")
        for axis, label in (("x", s["xLabel"]), ("y", s["yLabel"])):
            if label != data[axis][s[axis]]["label"]:
                failures.append(f"{name}: {axis} axis labelled {label!r}, expected {data[axis][s[axis]]['label']!r}")
    for x in data["x"]:
        if steps.get(f"x {x}", {}).get("x") != x:
            failures.append(f"switching the x axis to {x} did not take")
    for y in data["y"]:
        if steps.get(f"y {y}", {}).get("y") != y:
            failures.append(f"switching the y axis to {y} did not take")
    failures += saved_files(record, 1 + figures, keep)
    sorted_ = record.get("sorted") or [[], []]
    if sorted_[0] != sorted(sorted_[0]) or sorted_[1] != sorted(sorted_[0], reverse=True) or not sorted_[0]:
        failures.append(f"clicking the summary's error heading did not sort it up, then down ({sorted_})")
    base = steps.get("axes")
    if base is None or base["lines"] == 0:
        failures.append("nothing is drawn on the first axes, so hiding and zooming cannot be checked")
        return failures, record["steps"]
    if steps.get("hide", {}).get("lines") != base["lines"] - 1 or steps["hide"]["off"] != 1:
        failures.append("clicking a legend entry did not hide its solver (one line fewer)")
    if steps.get("show", {}).get("lines") != base["lines"]:
        failures.append("clicking the hidden solver's entry again did not show it")
    for zoom, reset in (("drag", "reset"), ("wheel", "reset again")):
        z, r = steps.get(zoom), steps.get(reset)
        for axis in ("xDomain", "yDomain"):
            if z is None or not (base[axis][0] < z[axis][0] < z[axis][1] < base[axis][1]):
                failures.append(f"zooming by {zoom} did not narrow the {axis[0]} axis "
                                f"({base[axis]} -> {z[axis] if z else None})")
            if r is None or r[axis] != base[axis]:
                failures.append(f"reset after {zoom} did not restore the {axis[0]} axis "
                                f"({base[axis]} -> {r[axis] if r else None})")
    return failures, record["steps"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", type=Path, help="the page, e.g. results/quickstart/<run-id>/index.html")
    parser.add_argument("--chromium", default="chromium", help="the browser to run (default: chromium on PATH)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds Chromium may take (default 120)")
    parser.add_argument("--screenshot", type=Path, help="also write a PNG of the page (unexercised) here")
    parser.add_argument("--height", type=int, default=4000, help="the screenshot's height in pixels (default 4000)")
    parser.add_argument("--save", type=Path, help="also write the files the download buttons made into this folder")
    args = parser.parse_args(argv)
    chromium = shutil.which(args.chromium)
    if chromium is None:
        print(f"check_run_page: {args.chromium}: not found (Debian: apt-get install chromium)", file=sys.stderr)
        return 2
    try:
        page = args.page.read_text(encoding="utf-8")
        data = embedded_data(page) if "id='sbpbench-data'" in page else None  # None: the overview
    except (OSError, ValueError) as exc:
        print(f"check_run_page: {args.page}: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sbpbench-page-") as tmp:
        copy = Path(tmp) / "index.html"
        copy.write_text(instrumented(page), encoding="utf-8")
        try:
            dom, messages = browse(copy, chromium, args.timeout)
            if args.screenshot:
                browse(args.page, chromium, args.timeout, args.screenshot, args.height)
        except (OSError, subprocess.TimeoutExpired) as exc:
            print(f"check_run_page: {chromium}: {exc}", file=sys.stderr)
            return 2
    failures, steps = check(data, dom, page, args.save)
    if failures:
        for failure in failures:
            print(f"check_run_page: {args.page}: {failure}", file=sys.stderr)
        if not steps and data is not None:
            print("Chromium said:\n" + "\n".join(messages.splitlines()[-20:]), file=sys.stderr)
        return 1
    if data is None:
        print(f"{args.page}: ok (the overview: every chart saved as SVG and as PDF; no JavaScript error)")
        return 0
    print(f"{args.page}: ok ({len(steps)} steps: every x and y axis, hide and show a solver, zoom by drag and "
          f"wheel, reset; the summary sorted both ways; "
          f"every chart saved as SVG and as PDF; no JavaScript error)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""page.js's first drawing of a chart, run in node, beside svg_chart.py's static chart of the same data.

The script runs in a minimal stand-in for the few DOM calls it makes; :func:`assert_drawn_as_the_script_draws`
compares, element by element, what its ``draw()`` makes with :func:`~sbpbench.outputs.svg_chart.chart_svg`.
:data:`CHECK` works a whole page in headless Chromium (scripts/check_run_page.py), where there is one.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sbpbench.outputs import page, svg_chart

PAGE_JS = Path(page.__file__).with_name("page.js")
#: The script page.js needs before it (in the page, inlined with it).
CHART_FILES_JS = PAGE_JS.with_name("chart_files.js")
SVG = "{http://www.w3.org/2000/svg}"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
#: The browser check of a page (a run's or the overview), and the mark of the tests that run it.
CHECK = [sys.executable, str(Path(__file__).resolve().parents[1] / "scripts" / "check_run_page.py")]
needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None,
                                    reason="chromium is not on PATH (Debian: apt-get install chromium)")
#: A number in an attribute: a coordinate (page.js writes all its digits, svg_chart one decimal).
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")

#: A stand-in for the few DOM calls page.js makes; then draw() on each pair of axes asked for,
#: writing the chart's elements as JSON.
DOM = """
class Node {
  constructor(name) { this.name = name; this.attrs = {}; this.children = []; this.on = {}; this.style = {}; }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  getAttribute(k) { return this.attrs[k]; }
  appendChild(c) { this.children.push(c); return c; }
  removeChild(c) { this.children.splice(this.children.indexOf(c), 1); }
  get firstChild() { return this.children[0] || null; }
  addEventListener(type, f) { this.on[type] = f; }
  getBoundingClientRect() { return { left: 0, top: 0, width: 760, height: 440 }; }
}
const nodes = {};
for (const id of ["chart", "x-axis", "y-axis", "legend", "notes", "reset", "downloads", "explorer"]) {
  nodes[id] = new Node(id);
}
nodes["sbpbench-data"] = { textContent: DATA };
globalThis.document = { getElementById: (id) => nodes[id], createElementNS: (ns, name) => new Node(name),
                        querySelectorAll: () => [],
                        createElement: (name) => new Node(name), createTextNode: (text) => ({ text }) };
globalThis.window = { addEventListener() {} };
"""
DRAW = """
const tree = (n) => ({ name: n.name, attrs: n.attrs, text: n.textContent === undefined ? null : n.textContent,
                       children: n.children.map(tree) });
const out = [];
for (const [x, y] of PAIRS) {
  nodes["x-axis"].value = x; nodes["y-axis"].value = y; nodes["x-axis"].on.change();
  out.push(nodes.chart.children.map(tree));
}
console.log(JSON.stringify(out));
"""


def _script_charts(data: dict[str, Any], pairs: list[tuple[str, str]]) -> list[list[dict[str, Any]]]:
    """The elements page.js's draw() makes of ``data`` on each pair of axes, run in node."""
    program = (f"const DATA = {json.dumps(json.dumps(data))};\nconst PAIRS = {json.dumps(pairs)};\n"
               + DOM + CHART_FILES_JS.read_text() + PAGE_JS.read_text() + DRAW)
    done = subprocess.run(["node", "-e", program], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def _flat(elements: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, str], str | None]]:
    """(tag, attributes, text) of every element, depth first."""
    for e in elements:
        yield e["name"], e["attrs"], e["text"]
        yield from _flat(e["children"])


def _flat_xml(element: ET.Element) -> Iterator[tuple[str, dict[str, str], str | None]]:
    """The same of an element's descendants."""
    for child in element:
        yield child.tag.removeprefix(SVG), dict(child.attrib), child.text
        yield from _flat_xml(child)


def _same(script: dict[str, str], ours: dict[str, str], where: tuple[str, ...]) -> None:
    """The same attributes, the same text around the numbers in them, and the numbers within the one decimal
    ours are written with; ids and the clip path's reference aside (each static chart names its own)."""
    assert script.keys() - {"id"} == ours.keys() - {"id"}, where
    for k, v in script.items():
        if k not in ("id", "clip-path"):
            assert NUMBER.sub("#", v) == NUMBER.sub("#", ours[k]), (where, k)
            expected = [float(n) for n in NUMBER.findall(v)]
            assert [float(n) for n in NUMBER.findall(ours[k])] == pytest.approx(expected, abs=0.1001), (where, k)


def assert_drawn_as_the_script_draws(data: dict[str, Any], pairs: list[tuple[str, str]]) -> None:
    """The static chart of each pair of axes (its legend aside) has the elements page.js's ``draw()`` first
    makes of ``data``: the same tags, classes and texts, in the same order, coordinates within 0.1."""
    for (x, y), script in zip(pairs, _script_charts(data, pairs)):
        ours = ET.fromstring(svg_chart.chart_svg(data, x, y, "clip") or "<none/>")
        ours.remove(ours.find(f"{SVG}g[@class='legend']"))
        drawn, mine = list(_flat(script)), list(_flat_xml(ours))
        assert [(tag, a.get("class")) for tag, a, _ in drawn] == [(tag, a.get("class")) for tag, a, _ in mine], (x, y)
        for (tag, attrs, text), (_, our_attrs, our_text) in zip(drawn, mine):
            _same(attrs, our_attrs, (x, y, tag))
            assert (text or None) == (our_text or None), (x, y, tag)

"""The pieces of chart_files.js's PDF writer that need no browser, run in node: SVG path data to PDF's
path operators, circular arcs to Bezier curves, and text to Helvetica's WinAnsiEncoding. The whole
writer (computed style, clipping, the file and its cross-reference table) runs in headless Chromium:
tests/test_plot_pages.py and tests/test_overview.py, with scripts/check_run_page.py."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.page_script import CHART_FILES_JS, needs_node

#: The writer's pieces these tests run, in the order they need each other.
PIECES = ("f", "WIDTHS", "WIDE", "WIN_ANSI", "code", "textWidth", "pdfString", "arc", "pathOps")


def _evaluate(expressions: list[str]) -> list:
    """Each expression's value, evaluated in node after the writer's :data:`PIECES`."""
    source = CHART_FILES_JS.read_text()
    pieces = [re.search(rf"^  (?:const {name} = .*?;|function {name}\(.*?\n  }})\n", source, re.S | re.M)
              for name in PIECES]
    assert all(pieces), [name for name, piece in zip(PIECES, pieces) if piece is None]
    program = "".join(p.group(0) for p in pieces) + f"console.log(JSON.stringify([{', '.join(expressions)}]));"
    done = subprocess.run(["node", "-e", program], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


@needs_node
def test_path_data_becomes_pdf_path_operators():
    absolute, implicit, closed = _evaluate(['pathOps("M0,0L10,2l3,4H5v6Z")', 'pathOps("M1e1,2 3,4 5e-1,6")',
                                            'pathOps("m1,1h6v6h-6Zm10,0l1,1")'])
    assert absolute == "0 0 m 10 2 l 13 6 l 5 6 l 5 12 l h"
    assert implicit == "10 2 m 3 4 l 0.5 6 l"  # an exponent is a number's, pairs after M are lines
    assert closed == "1 1 m 7 1 l 7 7 l 1 7 l h 11 1 m 12 2 l"  # Z goes back to the start: m is relative to it


@needs_node
def test_a_circular_arc_becomes_quarter_circle_bezier_curves():
    below, above = _evaluate(['pathOps("M0,0a5,5 0 1,0 10,0")', 'pathOps("M0,0A5,5 0 1,1 10,0")'])
    # a half circle around (5, 0): through (5, 5) with sweep 0 (y points down), (5, -5) with sweep 1
    ends = [[float(v) for v in segment.split()[-2:]] for segment in below.removeprefix("0 0 m ").split(" c")[:-1]]
    assert ends == [[5, 5], [10, 0]]
    ends = [[float(v) for v in segment.split()[-2:]] for segment in above.removeprefix("0 0 m ").split(" c")[:-1]]
    assert ends == [[5, -5], [10, 0]]
    first = [float(v) for v in below.removeprefix("0 0 m ").split()[:4]]  # the control points of a quarter circle
    assert first == pytest.approx([0, 2.76, 2.24, 5], abs=0.01)


@needs_node
def test_text_is_written_in_win_ansi_with_helvetica_widths():
    string, width = _evaluate(['pdfString("a(b)\\\\ \\u20ac\\u03c3\\u00fc")', 'textWidth("Hi")'])
    assert string == "(a\\(b\\)\\\\ \x80?\xfc)"  # parentheses and backslash escaped, € at 128, σ lacking: ?
    assert width == pytest.approx(0.944)  # H 722 and i 222 thousandths of the font size

"""The static figures of a run's page (svg_chart.py): drawn in Python as page.js draws its chart.

Hand-computed coordinates of a small chart, its bands, dashed part, ticks and labels, escaping,
and, where node is installed, the whole chart compared element by element with what page.js's
draw() makes of the same data (in a minimal stand-in for the browser's DOM).
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from sbpbench.outputs import page, svg_chart
from sbpbench.outputs.notation import tick_labels
from tests.page_script import PAGE_JS, SVG, assert_drawn_as_the_script_draws, needs_node

HOSTILE = "</text><b>&amp;\"'<!--"


def _curve(x, mean, se=None, runs=2, dashed_from=None, fits=False):
    return {"x": x, "mean": mean, "se": se or [None] * len(x), "runs": runs, "fits": fits, "dashed_from": dashed_from}


def _data(*solvers, notes=None):
    """Page data (as page.page_data gives it) of ``(label, {key: curve})`` pairs."""
    return {"x": {"kernel_evals": {"label": "kernel evaluations", "log": True},
                  "epochs": {"label": "epochs", "log": False}},
            "y": {"test_error": {"label": "test error (%)", "log": False},
                  "gap": {"label": "duality gap (primal - dual)", "log": True}},
            "solvers": [{"label": label, "curves": curves, "style": style}
                        for (label, curves), style in zip(solvers, svg_chart.styles([label for label, _ in solvers]))],
            "notes": notes or {}, "initial": ["kernel_evals", "test_error"]}


def _svg(data, x="kernel_evals", y="test_error", clip="c"):
    text = svg_chart.chart_svg(data, x, y, clip)
    assert text is not None
    return ET.fromstring(text)


def _paths(root, cls):
    return [p.get("d") for p in root.iter(f"{SVG}path") if p.get("class") == cls]


def test_a_small_chart_has_the_coordinates_of_the_layout():
    """x 10, 100, 1000 on a log axis: units 1..3, padded by 4% of 2 to [0.92, 3.08], so x = 72 + (u - 0.92)
    / 2.16 * 672: 96.9, 408, 719.1; y 50, 30, 20 padded by 4% of 30 to [18.8, 51.2], y = 394 - (v - 18.8)
    / 32.4 * 380: 28.1, 262.6, 379.9."""
    root = _svg(_data(("sbp", {"kernel_evals|test_error": _curve([10, 100, 1000], [50, 30, 20])})))
    assert _paths(root, "line") == ["M96.9,28.1L408,262.6L719.1,379.9"]
    assert _paths(root, "band") == [] and _paths(root, "line dashed") == [] and not list(root.iter(f"{SVG}circle"))
    ticks = [(t.get("x"), t.get("y"), t.text) for t in root.iter(f"{SVG}text") if t.get("class") == "tick"]
    # x: the powers of ten; y: about six steps of 1, 2 or 5 times a power of ten (32.4 / 6 = 5.4: 10)
    assert ticks == [("96.9", "410", "10"), ("408", "410", "100"), ("719.1", "410", "1000"),
                     ("66", "383.9", "20"), ("66", "266.6", "30"), ("66", "149.4", "40"), ("66", "32.1", "50")]
    clip = root.find(f"{SVG}defs/{SVG}clipPath")
    assert clip.get("id") == "c" and root.find(f"{SVG}g").get("clip-path") == "url(#c)"
    legend = [t.text for t in root.find(f"{SVG}g[@class='legend']").iter(f"{SVG}text")]
    assert legend == ["sbp (2 runs)"]


def test_a_solver_whose_checkpoints_are_fits_has_a_point_at_each():
    root = _svg(_data(("libsvm", {"kernel_evals|test_error": _curve([10, 100, 1000], [50, 30, 20], fits=True)})))
    assert _paths(root, "line") == ["M96.9,28.1L408,262.6L719.1,379.9"]
    assert [(c.get("cx"), c.get("cy")) for c in root.iter(f"{SVG}circle")] == [("96.9", "28.1"), ("408", "262.6"),
                                                                              ("719.1", "379.9")]


def test_a_band_only_where_two_runs_cover_the_points_and_a_dashed_part_after_the_first_epoch():
    se = [None, 1.0, 1.0, None, 2.0]
    perceptron = _curve([10, 100, 1000, 3000, 10000], [50, 30, 20, 18, 17], se, dashed_from=2000)
    root = _svg(_data(("perceptron", {"kernel_evals|test_error": perceptron})))
    (band,) = _paths(root, "band")  # the stretch of points 1 and 2; point 4 alone has none
    assert band.count("L") == 3 and band.endswith("Z")
    (solid,) = _paths(root, "line")
    (dashed,) = _paths(root, "line dashed")
    # 10, 100, 1000; then 1000 (the last point before 2000), 3000, 10000
    assert solid.count("L") == 2 and dashed.count("L") == 2
    assert solid.split("L")[-1] == dashed.removeprefix("M").split("L")[0]  # joined at the first epoch's end


def test_a_narrow_log_axis_has_ticks_at_1_2_and_5_and_exponents_outside_the_plain_range():
    ticks = svg_chart.ticks((3.9, 5.1), True)  # only 4 and 5 are powers of ten in there
    assert ticks == pytest.approx([4, 4.30103, 4.69897, 5])
    assert tick_labels([10**t for t in ticks]) == ["1e4", "2e4", "5e4", "1e5"]
    assert svg_chart.ticks((0.25, 0.75), True) == pytest.approx([0.3, 0.4, 0.5, 0.6, 0.7])  # 2 and 5 only: even
    assert tick_labels([0.0, 0.5, 1.0, 1.5]) == ["0.0", "0.5", "1.0", "1.5"]
    assert tick_labels([0.0, 2e5, 4e5]) == ["0", "2e5", "4e5"] and tick_labels([1e-4, 2.5e-4]) == ["1e-4", "2.5e-4"]


def test_labels_are_escaped_and_every_figure_of_a_page_is_well_formed_with_its_own_ids(monkeypatch):
    curves = {"kernel_evals|test_error": _curve([10, 100], [50, 30]), "epochs|gap": _curve([0.5, 1.0], [1.0, 0.1])}
    data = _data((HOSTILE, curves), ("dcd", {"epochs|gap": _curve([0.5, 1.0], [2.0, 0.2], runs=1)}),
                 notes={"kernel_evals|test_error": ["dcd in <x>: no kernel evaluations"]})
    root = _svg(data)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert f"{HOSTILE} (2 runs)" in texts
    gap = _svg(data, "epochs", "gap")
    colours = [p.get("stroke") for p in gap.iter(f"{SVG}path")]
    assert colours == list(svg_chart.COLORS[:2])  # the cycle's order, over the solvers on these axes
    assert svg_chart.chart_svg(data, "epochs", "test_error", "c") is None
    assert svg_chart.not_drawn(data, "kernel_evals|test_error") == "Not drawn: dcd in <x>: no kernel evaluations."

    monkeypatch.setattr(page, "FIGURES", (("kernel_evals", "test_error"), ("epochs", "gap"), ("epochs", "test_error")))
    figures = page._figures(data)
    svgs = re.findall(r"<svg.*?</svg>", figures, re.S)
    assert len(svgs) == figures.count("<figure ") == 2
    ids = [element.get("id") for text in svgs for element in ET.fromstring(text).iter() if element.get("id")]
    assert len(ids) == len(set(ids)) == 2 and "plot-clip" not in ids
    assert "Not drawn: dcd in &lt;x&gt;: no kernel evaluations.</figcaption>" in figures
    assert page._figures(_data()) == "<p>Nothing to draw.</p>"


def test_the_page_draws_its_figures_without_matplotlib():
    code = "import sys, sbpbench.outputs.page; print('matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_the_layout_is_the_scripts():
    source = PAGE_JS.read_text()
    layout = re.search(r"const W = (\d+), H = (\d+), LEFT = (\d+), RIGHT = (\d+), TOP = (\d+), BOTTOM = (\d+);", source)
    assert tuple(map(int, layout.groups())) == (svg_chart.W, svg_chart.H, svg_chart.LEFT, svg_chart.RIGHT,
                                                 svg_chart.TOP, svg_chart.BOTTOM)
    s = svg_chart
    assert (f"const MARKS_PER_LINE = {s.MARKS_PER_LINE}, SAMPLE = {s.SAMPLE}, LEGEND_ROW = {s.LEGEND_ROW}, "
            f"COLUMN_MIN = {s.COLUMN_MIN}, LEGEND_COLUMNS = {s.LEGEND_COLUMNS}, CHAR_WIDTH = {s.CHAR_WIDTH};") in source
    assert "0.04 * d" in source and svg_chart.PAD == 0.04


@needs_node
def test_the_static_figures_are_what_the_script_draws_first():
    se = [None, 0.5, 0.8, None, 2.0, 1.0, 1.0]
    data = _data(
        (HOSTILE, {"kernel_evals|test_error": _curve([10, 30, 100, 1000, 3000, 1e4, 2e4], [50, 40, 30, 25, 20, 19, 18],
                                                     se, dashed_from=1000),
                   "epochs|gap": _curve([0.5, 1.0, 2.0], [1.0, 0.3, 0.01], [0.6, 0.5, 0.02])}),
        ("dcd", {"epochs|gap": _curve([0.5, 1.0, 2.0, 3.0], [2e-3, 1e-3, 5e-4, None], [None, 5e-4, 1e-4, None])}),
        ("libsvm", {"kernel_evals|test_error": _curve([1e5, 2e5], [21, 20.5], [0.1, 0.2], runs=3, fits=True),
                 "kernel_evals|gap": _curve([1e5, 2e5, 4e5], [0.5, 0.4, 0.35])}),
        notes={"epochs|test_error": ["all: no epochs"]})
    assert_drawn_as_the_script_draws(data, [("kernel_evals", "test_error"), ("epochs", "gap"), ("kernel_evals", "gap")])


def test_every_entry_of_a_large_sweep_has_a_look_of_its_own():
    sweep = [name for name in ("sbp", "smo", "sdca") for _ in range(6)]  # 18 entries, 3 solvers
    looks = [tuple(s.values()) for s in svg_chart.styles(sweep)]
    assert len(set(looks)) == 18
    assert {s["color"] for s in svg_chart.styles(sweep)[:6]} == {svg_chart.COLORS[0]}  # a colour per solver
    assert looks[0] == (svg_chart.COLORS[0], "", "") and looks[1][1] != ""  # the first solid, then dashed
    many = [f"s{i}" for i in range(25)]  # more solvers than colours, one entry each
    assert len({tuple(s.values()) for s in svg_chart.styles(many)}) == 25
    big = [f"s{i % 30}" for i in range(200)]  # more solvers than colours, several entries each
    assert len({tuple(s.values()) for s in svg_chart.styles(big)}) == 200
    # beyond the dashes, markers too: a solver of 12 entries
    assert [s["marker"] for s in svg_chart.styles(["a"] * 12)] == [""] * 4 + ["circle"] * 4 + ["square"] * 4


def test_a_large_sweep_has_its_legend_in_columns_under_the_plot():
    curve = _curve([10, 100, 1000], [50, 30, 20])
    data = _data(*((f"smo[C={c}]", {"kernel_evals|test_error": curve}) for c in range(18)))
    for s in data["solvers"]:
        s["style"] = svg_chart.styles(["smo"] * 18)[data["solvers"].index(s)]
    root = _svg(data)
    legend = root.find(f"{SVG}g[@class='legend']")
    ys = {float(t.get("y")) for t in legend.iter(f"{SVG}text")}
    assert len(ys) == 6 and min(ys) > svg_chart.H  # 3 columns of 6 rows, all below the plot area
    assert int(root.get("height")) == svg_chart.H + 6 * svg_chart.LEGEND_ROW + 6
    samples = [(ln.get("stroke-dasharray") or "") for ln in legend.iter(f"{SVG}line")]
    assert len(samples) == 18 and len(set(samples)) == len(svg_chart.DASHES)
    assert len(list(legend.iter(f"{SVG}path"))) == 18 - len(svg_chart.DASHES)  # the markers of the rest


@needs_node
def test_dashes_and_markers_are_drawn_as_the_script_draws_them():
    points = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 1e4, 2e4, 5e4]
    data = _data(*((f"{name}[C={c}]", {"kernel_evals|test_error": _curve(points, [50 - c - j for j in range(12)])})
                   for name in ("sbp", "smo") for c in range(9)))
    for s, style in zip(data["solvers"], svg_chart.styles([s["label"][:3] for s in data["solvers"]])):
        s["style"] = style
    plot = _svg(data).find(f"{SVG}g")  # the plot area's clipped group
    marks = _paths(plot, "marker")  # entries 4 to 7 of each solver carry circles, entry 8 squares
    assert len(marks) == 2 * 5 and sum("a3.5" in d for d in marks) == 2 * 4
    assert all(d.count("Z") == 6 for d in marks)  # every 2nd of 12 points
    assert_drawn_as_the_script_draws(data, [("kernel_evals", "test_error")])

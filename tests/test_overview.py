"""The overview page of several experiments (sbpbench/outputs/overview.py): every experiment listed
and linked, each solver's best test error, and the performance profile across them with the numbers
of ``performance_profile``."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sbpbench.errors import UserError
from sbpbench.outputs import overview, svg_chart
from sbpbench.outputs.overview import Listed, best_errors, render_overview, write_pages
from sbpbench.outputs.page import profile_data
from sbpbench.outputs.profiles import PROFILE_COSTS, performance_profile
from tests.page_script import CHECK, needs_chromium
from tests.test_profiles import hand_curves


def two_experiments() -> list[Listed]:
    """The hand-computed curves of tests/test_profiles.py as experiment ``e`` (a sweep over sigma2)
    and, with twice the errors, ``f <b>`` (a name to escape), on two data sets."""
    one = hand_curves()
    other = one.assign(experiment="f <b>", dataset="d2", test_error=2 * one["test_error"])
    return [Listed("e", "e.html", "d", one), Listed("f <b>", "f.html", "d2", other)]


def embedded(page: str) -> dict:
    """The profiles' numbers the overview embeds."""
    match = re.search(r"<script type='application/json' id='sbpbench-profiles'>(.*?)</script>", page, re.S)
    assert match is not None
    return json.loads(match.group(1))


def test_the_overview_lists_and_links_every_experiment_with_its_best_errors():
    listed = two_experiments()
    page = render_overview(listed)
    assert "<a href='e.html'>e</a>" in page and "<a href='f.html'>f &lt;b&gt;</a>" in page
    assert "<b>" not in page.split("<body>", 1)[1]  # the name is escaped everywhere
    assert best_errors(listed[0].curves) == pytest.approx({"a": 0.1, "b": 0.1, "c": 0.25})  # over sigma2
    row = re.search(r"<tr><td><a href='e.html'>e</a></td>(.*?)</tr>", page).group(1)
    assert re.findall(r"<td[^>]*>([^<]*)</td>", row) == ["d", "a, b, c", "10.00", "10.00", "25.00"]
    assert row.count("class='best num'") == 2  # a and b tie for the lowest
    assert "<table class='sortable'>" in page and "table.sortable" in page  # sorted by tables.js, inlined
    assert "sbpbench-data" not in page and "src=" not in page  # no chart script, nothing outside the file


def test_the_overview_profile_has_the_numbers_of_performance_profile():
    listed = two_experiments()
    curves = pd.concat([entry.curves for entry in listed], ignore_index=True)
    page = render_overview(listed)
    numbers = embedded(page)
    assert list(numbers) == list(PROFILE_COSTS)
    for cost in PROFILE_COSTS:
        profile = performance_profile(curves, cost)
        got = numbers[cost]
        assert got["problems"] == list(profile.problems) and got["solvers"] == list(profile.solvers)
        assert got["targets"] == profile.targets.tolist()
        assert [[math.inf if c is None else c for c in row] for row in got["costs"]] == profile.costs.tolist()
        assert [[math.inf if c is None else c for c in row] for row in got["ratios"]] == profile.ratios.tolist()
        # drawn as a run's page draws its profiles: the very chart of these numbers
        assert svg_chart.chart_svg(profile_data(profile), "tau", "fraction", f"profile-{cost}-clip") in page
    assert "Performance profile over 4 problems" in page and "at most 1.05 times" in page
    assert "<th>problem</th><th>target test error (%)</th><th>a</th><th>b</th><th>c</th>" in page
    assert "<td>f &lt;b&gt;: sigma2=1</td><td class='num'>21.00</td>" in page and "not reached" in page


def test_every_chart_of_the_overview_gets_its_download_buttons_from_one_inlined_script():
    page = render_overview(two_experiments())
    source = Path(overview.__file__).with_name("chart_files.js").read_text()
    assert page.count(source) == 1 and page.count("const chartFiles =") == 1
    figures = re.findall(r"<figure data-name='([^']+)'>(.*?)</figure>", page, re.S)
    assert [name for name, _ in figures] == [f"performance-profile-{cost}" for cost in PROFILE_COSTS]
    assert all("<figcaption>" in figure for _, figure in figures)  # where chart_files.js puts the buttons


@needs_chromium
def test_the_overview_saves_each_chart_as_svg_and_pdf_in_a_headless_browser(tmp_path):
    listed = two_experiments()  # a solver named with characters Helvetica has (€, “, ü) and lacks (σ): "?"
    for entry in listed:
        for column in ("solver", "solver_name"):
            entry.curves[column] = entry.curves[column].str.replace("c", "c (ü € “σ²” \\)", regex=False)
    (tmp_path / "index.html").write_text(render_overview(listed))
    done = subprocess.run([*CHECK, str(tmp_path / "index.html"), "--save", str(tmp_path / "saved")],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok (the overview: every chart saved as SVG and as PDF" in done.stdout
    saved = sorted(p.name for p in (tmp_path / "saved").iterdir())
    assert saved == sorted(f"performance-profile-{cost}.{kind}" for cost in PROFILE_COSTS for kind in ("svg", "pdf"))
    assert (tmp_path / "saved" / f"performance-profile-{PROFILE_COSTS[0]}.pdf").read_bytes().startswith(b"%PDF-1.4")


def test_an_overview_of_one_problem_says_there_is_no_profile():
    one = hand_curves()
    page = render_overview([Listed("e", "e.html", "d", one[one["params"] == "sigma2=1"])])
    assert "No performance profile" in page and "sbpbench-profiles" not in page


def _tree(root, names):
    """A results tree of one run folder per experiment named, each with the hand curves; the run folders."""
    runs = []
    for name in names:
        run = root / name / "20240101T000000Z"
        run.mkdir(parents=True)
        (run / "meta.json").write_text(json.dumps({"experiment": name}))
        curves = hand_curves().assign(experiment=name, seed=0, epoch=0, kernel_evals_computed=0, eval_kernel_evals=0,
                                      objective=0.0, primal_objective=0.0, n_support=0)
        curves.to_csv(run / "curves.csv", index=False)
        runs.append(run)
    return runs


def test_an_experiment_named_index_cannot_take_the_overview_file(tmp_path):
    _tree(tmp_path / "tree", ("index", "other"))
    with pytest.raises(UserError, match="named 'index' would overwrite the overview"):
        write_pages(tmp_path / "tree", tmp_path / "pages")


def test_pages_of_a_tree_of_several_experiments_come_with_their_overview(tmp_path):
    tree = tmp_path / "tree"
    runs = _tree(tree, ("first", "second"))
    written = write_pages(tree)  # in place: each run folder's index.html, the overview TREE/index.html
    assert written == [run / "index.html" for run in runs] + [tree / "index.html"]
    overview = (tree / "index.html").read_text()
    assert "href='first/20240101T000000Z/index.html'" in overview and "2 experiments" in overview
    out = write_pages(tree, tmp_path / "pages")  # the same overview, linking the pages written there
    assert out == [tmp_path / "pages" / name for name in ("first.html", "second.html", "index.html")]
    assert "href='second.html'" in out[-1].read_text()
    assert write_pages(runs[0]) == [runs[0] / "index.html"]  # one experiment: no overview


def test_an_overview_that_cannot_be_written_is_one_line_and_exit_2_with_nothing_half_written(tmp_path):
    """``page TREE`` whose overview path is taken by a folder: one line naming it, exit 2, no temporary file left."""
    tree = tmp_path / "tree"
    _tree(tree, ("first", "second"))
    (tree / "index.html").mkdir()
    done = subprocess.run([sys.executable, "-m", "sbpbench", "page", str(tree)], capture_output=True, text=True)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "index.html" in lines[0] and "Traceback" not in done.stderr
    assert sorted(p.name for p in tree.iterdir()) == ["first", "index.html", "second"]  # no temporary file

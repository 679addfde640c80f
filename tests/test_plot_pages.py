"""`sbpbench plot --x/--y` and the run's page (index.html): content, escaping, the browser check.

One small real run serves every test: kernel and linear solvers on a linear-kernel Adult
subsample, so that some solvers have kernel evaluations and some not, some a duality gap and
some not, with a description and solver labels that would break a page if they were not escaped.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import matplotlib
import numpy as np
import pytest

from sbpbench import cli
from sbpbench.errors import UserError
from sbpbench.outputs import page, plotting, svg_chart
from sbpbench.results.curves import covering_mean
from sbpbench.results.store import curves_frame, read_curves, read_meta
from tests.cli_runner import one_error_line, sbpbench
from tests.experiments import adult_config, write_config
from tests.page_script import CHECK, assert_drawn_as_the_script_draws, needs_chromium, needs_node

ROOT = Path(__file__).resolve().parents[1]

HOSTILE = "</script><b>&amp;\"'<!--"
MIXED = adult_config("mixed", n_train=300, n_test=300, description="SBP & co. " + HOSTILE, kernel={"name": "linear"},
                     solvers=[{"name": "sbp", "label": "sbp " + HOSTILE}, "dcd", {"name": "smo", "label": "smo <1>"}])


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """The run folder of MIXED, made by `sbpbench run`, and what it printed."""
    tmp = tmp_path_factory.mktemp("pages")
    write_config(tmp / "mixed.yaml", MIXED)
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert sbpbench(monkeypatch, "run", tmp / "mixed.yaml", "--results", tmp / "res", "-q") == 0
    (folder,) = (tmp / "res" / "mixed").iterdir()
    return folder


def _only(run_dir: Path, tmp_path: Path, solvers: set[str]) -> Path:
    """A copy of the run folder with only the rows of ``solvers`` (a run of those solvers alone)."""
    copy = tmp_path / "mixed" / run_dir.name
    copy.mkdir(parents=True)
    curves = read_curves(run_dir)
    curves[curves["solver"].isin(solvers)].to_csv(copy / "curves.csv", index=False)
    shutil.copy(run_dir / "meta.json", copy / "meta.json")
    return copy


def test_the_cli_offers_exactly_the_drawable_axes():
    assert cli.X_CHOICES == tuple(plotting.X_AXES) and cli.Y_CHOICES == tuple(plotting.Y_AXES)


def test_plot_draws_any_axes_and_notes_the_solvers_left_out(monkeypatch, capsys, run_dir, tmp_path):
    assert sbpbench(monkeypatch, "plot", run_dir, "--out", tmp_path) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["left out: dcd in mixed: no kernel evaluations",
                   str(tmp_path / "figure2.png"), str(tmp_path / "figure2.svg")]

    assert sbpbench(monkeypatch, "plot", run_dir, "--out", tmp_path, "--x", "seconds") == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [str(tmp_path / f"test_error-vs-seconds{s}") for s in (".png", ".svg")]

    assert sbpbench(monkeypatch, "plot", run_dir, "--out", tmp_path, "--x", "epochs", "--y", "gap") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("left out: ") and f"sbp {HOSTILE}" in out[0] and "mixed" in out[0]  # no gap
    assert out[1:] == [str(tmp_path / f"gap-vs-epochs{s}") for s in (".png", ".svg")]
    assert all((tmp_path / f"gap-vs-epochs{s}").stat().st_size > 0 for s in (".png", ".svg"))


def test_a_figure_draws_one_line_per_solver_that_has_both_columns(run_dir):
    curves = read_curves(run_dir)
    for (x, y), solvers in {("kernel_evals", "test_error"): 2, ("iterations", "gap"): 2, ("seconds", "objective"): 3,
                            ("kernel_evals", "gap"): 1}.items():
        fig = plotting.curves_figure(curves, plotting.X_AXES[x], plotting.Y_AXES[y])
        (ax,) = fig.axes
        assert len(ax.get_legend().get_texts()) == solvers, (x, y)
        assert ax.get_xscale() == ("linear" if x == "epochs" else "log")
        assert ax.get_yscale() == ("log" if y == "gap" else "linear")


def test_the_same_results_draw_the_same_bytes(run_dir, tmp_path):
    first = plotting.plot_results(run_dir, tmp_path / "first").files
    again = plotting.plot_results(run_dir, tmp_path / "again").files
    assert [p.name for p in first] == [p.name for p in again] == ["figure2.png", "figure2.svg"]
    for a, b in zip(first, again):
        assert a.read_bytes() == b.read_bytes(), a.name
    svg = first[1].read_text()
    assert "<dc:date>" not in svg and 'id="' in svg  # no date; ids, derived from the file's name


def test_log_axes_are_labelled_in_plain_text_as_matplotlib_labels_them():
    labels, base2 = plotting.TextLogFormatter(), plotting.TextLogFormatter(2)
    assert [labels(v) for v in (1e5, 1e-3, 1.0)] == ["10⁵", "10⁻³", "10⁰"]
    assert [labels(v) for v in (0.3, 2.0)] == [f"3{plotting.TIMES}10⁻¹", f"2{plotting.TIMES}10⁰"]
    assert [base2(v) for v in (8, 0.5)] == ["2³", "2⁻¹"]
    assert plotting.TextLogFormatter(labelOnlyBase=True)(0.3) == ""


def test_no_figure_label_is_math_text(run_dir):
    """Every log axis, shared, secondary or of a zoom row, is labelled by TextLogFormatter (math text costs
    a parse per label, size and renderer), with the ticks matplotlib labels."""
    curves = read_curves(run_dir)
    fig = plotting.curves_figure(curves, plotting.X_AXES["iterations"], plotting.Y_AXES["gap"], zoom=True,
                                 marks=plotting.Marks(epochs_axis=True))
    image = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # labels as text elements
        fig.savefig(image, format="svg")
    svg = image.getvalue()
    axes = fig.axes + [child for ax in fig.axes for child in ax.child_axes]
    assert len(axes) == 3  # two rows and the epochs axis on top
    formatters = [f for ax in axes for axis in (ax.xaxis, ax.yaxis) if axis.get_scale() != "linear"
                  for f in (axis.get_major_formatter(), axis.get_minor_formatter())]
    assert len(formatters) == 10 and all(isinstance(f, plotting.TextLogFormatter) for f in formatters)
    assert "$" not in svg and "10⁰" in svg and re.search(r"10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+</text>", svg)


def test_an_axis_no_solver_has_is_one_error_line(monkeypatch, capsys, run_dir, tmp_path):
    linear_only = _only(run_dir, tmp_path, {"dcd"})
    assert sbpbench(monkeypatch, "plot", linear_only) == 2
    err = one_error_line(capsys.readouterr().err)
    assert str(linear_only) in err and "no solver has both kernel evaluations and test error" in err
    assert "--x kernel_evals --y test_error" in err
    assert not list(linear_only.glob("*.png"))
    assert sbpbench(monkeypatch, "plot", linear_only, "--x", "iterations", "--y", "gap") == 0

    assert sbpbench(monkeypatch, "plot", run_dir, "--x", "minutes") == 2
    assert "'minutes' is not one of" in one_error_line(capsys.readouterr().err)
    with pytest.raises(UserError, match="--y loss: expected one of test_error, objective, primal_objective, "
                                        "test_hinge_loss, gap"):
        plotting.plot_results(run_dir, tmp_path, y="loss")


def test_the_page_curves_are_the_mean_curves_of_the_figures(run_dir):
    curves = read_curves(run_dir)
    data = page.page_data(curves)
    sbp, dcd, smo = data["solvers"]
    assert [s["label"] for s in data["solvers"]] == [f"sbp {HOSTILE}", "dcd", "smo <1>"]
    assert "kernel_evals|test_error" not in dcd["curves"] and "iterations|gap" not in sbp["curves"]
    assert data["notes"]["kernel_evals|test_error"] == ["dcd in mixed: no kernel evaluations"]
    assert data["initial"] == ["kernel_evals", "test_error"]
    # each solver its look, the same on every pair of axes (three solvers of one entry each: three colours)
    assert [s["style"] for s in data["solvers"]] == svg_chart.styles(["sbp", "dcd", "smo"])
    assert len({s["style"]["color"] for s in data["solvers"]}) == 3
    for solver, key, x, y, factor in ((sbp, "epochs|test_error", "epoch", "test_error", 100),
                                      (dcd, "epochs|gap", "epoch", "duality_gap", 1),
                                      (smo, "iterations|primal_objective", "iteration", "primal_objective", 1),
                                      (smo, "kernel_evals|objective", "kernel_evals", "objective", 1),
                                      (dcd, "seconds|test_error", "train_time_s", "test_error", 100)):
        drawn = covering_mean(curves[curves["solver"] == solver["label"]], x=x, y=y)
        most = drawn.count >= 1  # at least half of the two runs (SMO's one: it is deterministic)
        line = solver["curves"][key]
        assert line["runs"] == (1 if solver is smo else 2)
        assert len(line["x"]) == most.sum() > (0 if x == "train_time_s" else 1)
        np.testing.assert_allclose(line["x"], drawn.x[most], rtol=1e-5)
        np.testing.assert_allclose(line["mean"], factor * drawn.mean[most], rtol=1e-5, atol=1e-12)
        se = np.array([np.nan if v is None else v for v in line["se"]], dtype=float)
        np.testing.assert_allclose(se, factor * drawn.se[most], rtol=1e-5, atol=1e-12)  # NaN where one run covers


def test_the_page_marks_the_curves_of_solvers_whose_checkpoints_are_fits(run_dir):
    curves = read_curves(run_dir)
    data = page.page_data(curves.assign(one_step_per_advance=curves["solver"] == "dcd"))  # as LIBLINEAR's
    fits = {s["label"]: {c["fits"] for c in s["curves"].values()} for s in data["solvers"]}
    assert fits == {f"sbp {HOSTILE}": {False}, "dcd": {True}, "smo <1>": {False}}


class _Tags(HTMLParser):
    """The start tags of a page, and its text outside scripts and styles."""

    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []
        self._raw = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._raw = tag in ("script", "style")

    def handle_endtag(self, tag):
        self._raw = False

    def handle_data(self, data):
        if not self._raw:
            self.text.append(data)


def test_run_writes_a_self_contained_page_with_everything_escaped(run_dir):
    text = (run_dir / "index.html").read_text()
    assert len(text.encode()) < 400_000
    parsed = _Tags()
    parsed.feed(text)
    body = " ".join(parsed.text)
    # the hostile labels and description are text, not markup: no element of theirs was made
    assert parsed.tags.count("script") == 2 and "b" not in parsed.tags and parsed.tags.count("h1") == 1
    assert f"SBP & co. {HOSTILE}" in body and f"sbp {HOSTILE}" in body and "smo <1>" in body
    # the interactive chart and the static figures of page.FIGURES, every one drawable here
    assert text.count("<svg") == 1 + len(page.FIGURES) and parsed.tags.count("figure") == len(page.FIGURES)
    # each figure is well-formed SVG, and no two elements of the page share an id
    for svg in re.findall(r"<svg.*?</svg>", text, re.S):
        ET.fromstring(svg)
    ids = re.findall(r"\sid=['\"]([^'\"]*)['\"]", text)
    assert len(ids) == len(set(ids)) and "plot-clip" not in ids  # page.js names its own clip path
    # nothing outside the page: no external script, style, image or font
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|@import|url\((?!#)", text)
    data = json.loads(re.search(r"id='sbpbench-data'>(.*?)</script>", text, re.S)[1])
    assert data == json.loads(json.dumps(page.page_data(read_curves(run_dir))))
    # the summary table, the runs, the resolved configuration, machine and versions
    meta = read_meta(run_dir)
    assert body.count("budget") >= 6 and "lambda: 0.0033333333333333335" in body
    assert meta["versions"]["numpy"] in body and meta["host"]["hostname"] in body
    assert "versions.numba" in body and "dataset_copy" in body


@needs_node
def test_the_static_figures_of_a_run_are_what_its_script_draws_first(run_dir):
    assert_drawn_as_the_script_draws(page.page_data(read_curves(run_dir)), list(page.FIGURES))


def test_the_summary_on_the_page_is_the_printed_one(run_dir):
    from sbpbench.outputs.notation import formatted
    from sbpbench.outputs.summary import summary_rows, summary_table

    curves = read_curves(run_dir)
    text = (run_dir / "index.html").read_text()
    for row, line in zip(summary_rows(curves), summary_table(curves).splitlines()[1:]):
        shown = f"{formatted(row.error_mean, '.2f')} ± {formatted(row.error_se, '.2f')}"  # SMO's one run: ± n/a
        assert shown in text and shown in " ".join(line.split())
        assert line.rstrip().endswith(row.statuses)


def test_the_page_names_the_spread_and_shows_the_budget_tables(run_dir):
    from sbpbench.outputs.budgets import BUDGET_AXES, budget_table

    text = (run_dir / "index.html").read_text()
    assert "standard deviation" not in text and "mean ± its standard error over runs" in text
    assert "<h3>Test error at fixed budgets</h3>" in text and "last checkpoint at or before the budget" in text
    evals = budget_table(read_curves(run_dir), "kernel_evals")
    assert evals.budgets and {r.solver for r in evals.rows} == {"sbp " + HOSTILE, "smo <1>"}  # dcd counts none
    budgets = sum(bool(budget_table(read_curves(run_dir), axis).budgets) for axis in BUDGET_AXES)
    # the summary, a table per axis with budgets (the seconds' depend on the machine), runs, machine; no best
    assert text.count("<table class='sortable'>") == 3 + budgets and "Best setting" not in text


def test_failed_runs_are_marked_on_the_page(run_dir):
    meta = read_meta(run_dir)
    meta["runs"][1]["status"] = "failed: MemoryError: out of memory <here>"
    html = page.render_page(read_curves(run_dir), meta, run_dir.name)
    assert html.count("<tr class=bad>") == 1 and "out of memory &lt;here&gt;" in html
    # every run failed before its first checkpoint: the page still says so
    meta["runs"] = [{**r, "status": "failed: MemoryError"} for r in meta["runs"]]
    html = page.render_page(curves_frame([]), meta, run_dir.name)
    assert html.count("<tr class=bad>") == len(meta["runs"]) == 5  # SBP's and DCD's two runs, SMO's one
    assert "No checkpoints were recorded." in html and "Nothing to draw." in html
    assert json.loads(re.search(r"id='sbpbench-data'>(.*?)</script>", html, re.S)[1])["solvers"] == []


def test_page_rewrites_the_same_page_and_writes_elsewhere(monkeypatch, capsys, run_dir, tmp_path):
    first = (run_dir / "index.html").read_bytes()
    (run_dir / "index.html").unlink()
    assert sbpbench(monkeypatch, "page", run_dir.parent.parent) == 0
    assert capsys.readouterr().out.strip() == str(run_dir / "index.html")
    assert (run_dir / "index.html").read_bytes() == first
    assert sbpbench(monkeypatch, "page", run_dir, "--out", tmp_path / "pages") == 0
    assert (tmp_path / "pages" / "mixed.html").read_bytes() == first


def test_page_errors_are_one_line(monkeypatch, capsys, run_dir, tmp_path):
    (tmp_path / "empty").mkdir()
    assert sbpbench(monkeypatch, "page", tmp_path / "empty") == 2
    assert "no run folder with checkpoints found" in one_error_line(capsys.readouterr().err)
    broken = _only(run_dir, tmp_path, {"dcd"})
    (broken / "meta.json").write_text("[1, 2]")
    assert sbpbench(monkeypatch, "page", broken) == 2
    assert "meta.json: not a sbpbench meta.json" in one_error_line(capsys.readouterr().err)
    assert not (broken / "index.html").exists()


def test_script_json_cannot_end_its_element():
    text = page.script_json({"label": "</script><!-- & -->"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"label": "</script><!-- & -->"}
    with pytest.raises(ValueError):
        page.script_json({"x": float("nan")})




def test_every_chart_gets_its_download_buttons_from_one_inlined_script(run_dir):
    text = (run_dir / "index.html").read_text()
    source = Path(page.__file__).with_name("chart_files.js").read_text()
    assert text.count(source) == 1 and text.count("const chartFiles =") == 1
    # chart_files.js puts an SVG and a PDF button into each figure's caption, page.js into #downloads
    figures = re.findall(r"<figure data-name='[^']+'>(.*?)</figure>", text, re.S)
    assert len(figures) == len(page.FIGURES) and all("<figcaption>" in f for f in figures)
    assert text.count("<span id='downloads'></span>") == 1
    uses = 'chartFiles.buttons(document.getElementById("downloads")'
    assert text.count(uses) == 1 and text.index("const chartFiles =") < text.index(uses)  # defined before page.js


@needs_chromium
def test_the_page_works_in_a_headless_browser(run_dir):
    done = subprocess.run([*CHECK, str(run_dir / "index.html")], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    steps = len(plotting.X_AXES) + len(plotting.Y_AXES) + 8  # every axis; axes, hide, show, zooms, reset
    assert f"ok ({steps} steps" in done.stdout


@needs_chromium
def test_the_browser_check_fails_on_a_broken_legend(run_dir, tmp_path):
    toggle = "if (hidden.has(i)) hidden.delete(i); else hidden.add(i);"
    broken = (run_dir / "index.html").read_text().replace(toggle, "")
    (tmp_path / "index.html").write_text(broken)
    done = subprocess.run([*CHECK, str(tmp_path / "index.html")], capture_output=True, text=True, timeout=180)
    assert done.returncode == 1
    assert "clicking a legend entry did not hide its solver" in done.stderr


@needs_chromium
def test_the_browser_check_fails_on_tables_that_do_not_sort(run_dir, tmp_path):
    broken = (run_dir / "index.html").read_text().replace("for (const row of rows) body.appendChild(row);", "")
    (tmp_path / "index.html").write_text(broken)
    done = subprocess.run([*CHECK, str(tmp_path / "index.html")], capture_output=True, text=True, timeout=180)
    assert done.returncode == 1
    assert "clicking the summary's error heading did not sort it" in done.stderr


@needs_chromium
def test_the_browser_check_fails_on_a_saved_chart_without_its_legend(run_dir, tmp_path):
    broken = (run_dir / "index.html").read_text().replace("    legendInto(copy);\n", "")
    (tmp_path / "index.html").write_text(broken)
    done = subprocess.run([*CHECK, str(tmp_path / "index.html")], capture_output=True, text=True, timeout=180)
    assert done.returncode == 1
    assert "downloaded kernel_evals-test_error.svg: no legend" in done.stderr


@needs_chromium
@pytest.mark.parametrize(("good", "bad", "message"), [
    ("const at = file.length;", "const at = file.length + 1;", "the cross-reference table puts object 1 at 16,"),
    ('\\nstartxref\\n" + xref', '\\nstartxref\\n" + (xref - 2)', "no cross-reference table of 6 entries at"),
    ('"<< /Length " + content.length', '"<< /Length " + (content.length + 3)', "no content stream of its stated"),
    ("+ pdfString(text) +", '+ "()" +', "texts of the chart not drawn"),
    ('else if (C === "L") at(num() + dx, num() + dy, "l");', 'else if (C === "L") at(num() + dx, num() + dy, "m");',
     "too few curves drawn"),
])
def test_the_browser_check_fails_on_a_broken_pdf(run_dir, tmp_path, good, bad, message):
    text = (run_dir / "index.html").read_text()
    assert text.count(good) == 1
    (tmp_path / "index.html").write_text(text.replace(good, bad))
    done = subprocess.run([*CHECK, str(tmp_path / "index.html")], capture_output=True, text=True, timeout=180)
    assert done.returncode == 1
    assert f"downloaded kernel_evals-test_error.pdf: {message}" in done.stderr

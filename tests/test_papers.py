"""The papers as data: the declaration types, their verdicts, the statistics over curves they use,
and the drawings a figure declaration names."""

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from sbpbench import papers
from sbpbench.outputs import figures, markdown, plotting, report
from sbpbench.papers.declarations import (
    NO_RESULTS,
    Claims,
    ErrorCurves,
    Figure,
    FinalAgainstParameter,
    NotReproduced,
    Numbers,
    ObjectiveCurves,
    Posed,
    Results,
    Section,
    Table,
    needs_download,
    not_run_yet,
)
from sbpbench.papers.questions import Equal, Exceeds, Runs, RunsPerSolver
from sbpbench.results.curves import (
    ReadAt,
    covering_mean,
    final_rows,
    finals_by_parameter,
    mean_before,
    mean_curve,
    run_values_at,
    settle_point,
    value_at,
    values_by_parameter,
)
from sbpbench.results.lookup import ExperimentResult

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "results" / "reference"
REF_RUNS = pd.read_csv(REF / "ci-adult" / "curves.csv")["run"].nunique()


def _experiment(root: Path, name: str, source: str) -> None:
    """The reference runs ``source`` as the committed results of experiment ``name``."""
    folder = root / name
    folder.mkdir(parents=True)
    pd.read_csv(REF / source / "curves.csv").assign(experiment=name).to_csv(folder / "curves.csv", index=False)
    (folder / "meta.json").write_text((REF / source / "meta.json").read_text())


@pytest.fixture()
def results(tmp_path) -> Results:
    """``ci-adult`` (SBP and Pegasos) as experiment ``exp-a``; ``exp-b`` declared, not run."""
    _experiment(tmp_path, "exp-a", "ci-adult")
    return Results(tmp_path, {}, {"exp-b": not_run_yet("too long"), "exp-c": needs_download("Forest")})


def test_results_say_why_an_experiment_is_missing(results):
    assert results.get("exp-a").name == "exp-a" and results.get("exp-b") is None
    assert results.get("exp-a") is results.get("exp-a")  # read once
    assert results.first(["exp-b", "exp-a"]).name == "exp-a"
    assert "configs/exp-b.yaml" in results.why_missing("exp-b") and results.why_missing("exp-b").endswith("too long")
    assert "Forest" in results.why_missing("exp-c")
    assert results.why_missing("exp-z") == NO_RESULTS.text


def test_printed_numbers_are_read_from_the_first_experiment_with_results(results):
    runs = results.get("exp-a").curves.groupby("solver_name")["run"].nunique()
    assert runs.nunique() == 1  # every solver of ci-adult has as many runs
    table = Numbers((
        Posed("stand-in", "Section 1", "runs", Equal(RunsPerSolver(), int(runs.iloc[0])), ("exp-b", "exp-a"),
              kind="setting"),
        Posed("other", "Section 1", "runs", Equal(RunsPerSolver(), int(runs.iloc[0]) + 1), ("exp-a",),
              kind="setting"),
        Posed("missing", "Section 1", "2%", Equal(RunsPerSolver(), 1), ("exp-b", "exp-z"), kind="setting"),
        NotReproduced("impossible", "3%", "not run here: no such data"),
    )).table(results)
    assert table.headers == ("what", "paper", "measured here", "verdict")
    (what, paper, measured, verdict), other, *rest = table.rows
    assert (what, paper, verdict) == ("stand-in", "runs", "matches") and measured.endswith("(exp-a)")
    assert "values other than the paper's 0 (exact; n = " in measured
    assert other[3] == "differs"
    assert rest == [("missing", "2%", "-", "not run yet: configured (configs/exp-b.yaml); too long"),
                    ("impossible", "3%", "-", "not run here: no such data")]


class _RunsOf:
    """A reader for the tests: each run of the solver ``name`` counts 1 (its value), so the mean is 1."""

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def solvers(self) -> tuple[str, ...]:
        return (self.name,)

    def read(self, found) -> Runs:
        c = found[0].curves
        n = c.loc[c["solver_name"] == self.name, "run"].nunique()
        return Runs(np.ones(n), np.ones(n, dtype=bool), f"{self.name} runs")


def _posed(what: str, experiment: str, least: float = 0.5, name: str = "sbp", **kw) -> Posed:
    """A claim posed on ``experiment``: each run of ``name`` counts 1, above ``least``."""
    return Posed(what, "Section 1", kw.pop("paper", "yes"), Exceeds(_RunsOf(name), None, least, "a test", "runs"),
                 (experiment,), **kw)


def test_claims_get_their_verdicts_and_a_row_per_claim_when_results_are_missing(results):
    claims = (_posed("SBP ran", "exp-a"),
              _posed("SBP ran, observed", "exp-a", paper="not claimed", kind="check", outcomes=("ran", "did not")),
              _posed("SMO ran", "exp-a", name="smo"),
              _posed("inverted", "exp-a", least=2.0),
              _posed("SBP ran", "exp-b"), _posed("SBP ran", "exp-c"))
    rows = Claims(claims).table(results).rows
    assert [(what, paper, verdict) for what, paper, _, verdict in rows] == [
        ("SBP ran", "yes", "held"),
        ("SBP ran, observed", "not claimed", "ran"),
        ("SMO ran", "yes", "not run here: smo not in exp-a's results"),
        ("inverted", "yes", "did not hold"),
        ("SBP ran", "yes", "not run yet: configured (configs/exp-b.yaml); too long"),
        ("SBP ran", "yes", "not run here: needs the Forest download (not available offline)"),
    ]
    assert f"sbp runs 1 (1-1); runs 1 [1, 1] (Welch, 90% interval; n = {REF_RUNS})" in rows[0][2]
    assert [measured for _, _, measured, _ in rows[4:]] == ["-", "-"]


class _Noted:
    """A table source with a sub-heading and a note."""

    def table(self, results: Results) -> Table:
        return Table(("a", "b"), [("1", "2"), ("3", "4")], heading="Part 1", note="A note.")


def test_markdown_of_a_section(results):
    section = Section("Paper, Table 9", (_Noted(), Numbers((NotReproduced("x", "1", "why"),))), intro="Intro.")
    assert markdown.section(section, results) == (
        "## Paper, Table 9\n\nIntro.\n\n### Part 1\n\nA note.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n"
        "| what | paper | measured here | verdict |\n|---|---|---|---|\n| x | 1 | - | why |")


def _with(monkeypatch, paper) -> None:
    """Make ``paper`` one of the papers, after the others."""
    monkeypatch.setattr(papers, "PAPERS", (*papers.PAPERS, paper))


def test_a_declared_claim_is_reported(monkeypatch, tmp_path):
    _experiment(tmp_path, "sbp-figure2-adult", "ci-adult")
    section = Section("A paper, Section 1: a claim", (Claims((_posed("SBP ran", "sbp-figure2-adult"),)),))
    _with(monkeypatch, dataclasses.replace(papers.sgd.PAPER, key="new", sections=(section,)))
    text = report.build(tmp_path)
    assert "## A paper, Section 1: a claim\n\n| claim | paper | measured here | verdict |\n|---|---|---|---|\n" \
           "| SBP ran | yes | sbp runs 1 (1-1); runs 1 [1, 1] (Welch" in text
    assert "(sbp-figure2-adult) | held |" in text


def test_a_declared_figure_is_drawn_with_its_kind_of_drawing(monkeypatch, tmp_path):
    root = tmp_path / "paper"
    _experiment(root, "lin", "ci-linear")
    _experiment(root, "ker", "ci-kernel-solvers")
    figure = Figure("new-figure", "A paper, Figure 1", "objective", "A paper, Figure 1", ("lin", "none", "gone"),
                    ObjectiveCurves(dpi=50), {"none": "ker"})
    _with(monkeypatch, dataclasses.replace(papers.sgd.PAPER, key="new", figures=(figure,)))
    drawn = {d.figure.stem: d for d in figures.draw_all(root, tmp_path / "out")}
    new = drawn["new-figure"]
    assert [p.name for p in new.files] == ["new-figure.png", "new-figure.svg"]
    assert [r.name for r in new.used] == ["lin", "ker"]
    assert new.missing == ["none (drawn: the substitute ker)", "gone"]
    assert "<h2>A paper, Figure 1</h2><p>objective</p>" in (tmp_path / "out" / "index.html").read_text()


@pytest.fixture()
def drawn_figures(monkeypatch):
    """The figures each drawing saves, as (titles of its panels, its title)."""
    saved = []
    real = plotting.save_figure

    def save(fig, stem, dpi=130):
        saved.append(([ax.get_title() for ax in fig.axes], fig.get_suptitle(), dpi))
        return real(fig, stem, dpi)

    monkeypatch.setattr(plotting, "save_figure", save)
    return saved


def _by_k(groups=("T fixed", "kT fixed"), ks=(1, 2, 4), runs=2) -> pd.DataFrame:
    rows = []
    for group in groups:
        for k in ks:
            for run in range(runs):
                for checkpoint in range(2):
                    rows.append({"experiment": "e", "dataset": "reuters", "solver": f"{group}, k={k}",
                                 "solver_name": "pegasos", "params": f"mini_batch={k}", "run": run,
                                 "checkpoint": checkpoint, "iteration": 10 * (checkpoint + 1),
                                 "primal_objective": 1.0 / k + 0.1 * run + (1 - checkpoint)})
    return pd.DataFrame(rows)


def test_final_against_parameter_draws_a_panel_per_group(tmp_path, drawn_figures):
    frame = _by_k()
    written = figures.draw(Figure("f", "p", "t", "Figure 3", ("e",), FinalAgainstParameter("mini_batch", "k", 80)),
                           [ExperimentResult("e", tmp_path, frame, {})], tmp_path / "f")
    assert [p.name for p in written] == ["f.png", "f.svg"]
    assert drawn_figures == [(["T fixed (reuters)", "kT fixed (reuters)"], "Figure 3", 80)]


def test_final_against_parameter_draws_a_line_per_value_read_along_the_runs(tmp_path, monkeypatch):
    """Issue #29: the Pegasos paper's Figure 3 (right) shows several values of kT, not only the end."""
    saved = []
    monkeypatch.setattr(plotting, "save_figure", lambda fig, stem, dpi=130: saved.append(fig) or [])
    read_at = {"kT fixed": ReadAt((20, 40), "kT", times_parameter=True)}
    plotting.final_against_parameter(_by_k(ks=(1, 2)), tmp_path / "f", "mini_batch", "k", read_at=read_at)
    t_fixed, kt_fixed = saved[0].axes[:2]
    assert [t.get_text() for t in t_fixed.get_legend().get_texts()] == ["end of the runs"]
    assert [t.get_text() for t in kt_fixed.get_legend().get_texts()] == ["kT = 20", "kT = 40"]
    kt20, kt40 = (bars.lines[0] for bars in kt_fixed.containers)  # each value's line of means
    # kT = 20: k = 1 at iteration 20 (its last checkpoint), k = 2 at iteration 10 (its first); means over two runs
    assert list(kt20.get_xdata()) == [1, 2] and kt20.get_ydata() == pytest.approx([1.05, 1.55])
    assert list(kt40.get_xdata()) == [2] and kt40.get_ydata() == pytest.approx([0.55])  # k = 1 never gets there


def test_extras_are_drawn_grey_beneath_thinner_and_marked_in_the_legend():
    a = _by_k(groups=("pegasos", "norma (projection)"), ks=(1,)).assign(solver=lambda f: f["solver"].str[:-5])
    fig = plotting.curves_figure(a, plotting.X_AXES["iterations"], plotting.Y_AXES["primal_objective"],
                                 marks=plotting.Marks(extras=("norma (projection)",)))
    paper, extra = fig.axes[0].get_lines()
    assert paper.get_label() == "pegasos (2 runs)"
    assert extra.get_label() == "norma (projection) (2 runs; extra: not in the paper)"
    assert extra.get_color() in plotting.EXTRA_COLORS and paper.get_color() not in plotting.EXTRA_COLORS
    # issue #47: beneath the papers' solvers and thinner, so that where they meet those stay visible
    assert extra.get_zorder() < paper.get_zorder() and extra.get_linewidth() < paper.get_linewidth()
    plt.close(fig)


def test_objective_and_error_curves_draw_a_panel_per_experiment(tmp_path, drawn_figures):
    a = _by_k(groups=("g",)).assign(experiment="a", test_error=0.2, kernel_evals=lambda f: f["iteration"])
    curves = pd.concat([a, a.assign(experiment="b", dataset="adult")], ignore_index=True)
    plotting.objective_curves(curves, tmp_path / "o", "objective")
    assert plotting.error_curves(curves, tmp_path / "e", zoom=True) != []
    assert plotting.error_curves(curves.assign(kernel_evals=0), tmp_path / "none") == []
    assert drawn_figures == [(["a (reuters)", "b (adult)"], "objective", 130),
                             (["a (reuters)", "b (adult)", "", ""], "", 130)]  # zoom: a second, untitled row


def test_every_declared_figure_names_an_experiment_of_its_paper():
    for paper in papers.PAPERS:
        for figure in paper.figures:
            assert set(figure.experiments) | set(figure.substitutes.values()) <= set(paper.experiments), figure.stem
            assert isinstance(figure.drawing, ErrorCurves | ObjectiveCurves | FinalAgainstParameter)


# ----------------------------------------------------------------------------- statistics over curves


def _runs(values_by_run: dict[int, list[float]], x: list[float], column: str = "test_error") -> pd.DataFrame:
    return pd.DataFrame([{"run": run, "checkpoint": i, "kernel_evals": xi, "train_time_s": xi, column: v}
                         for run, values in values_by_run.items() for i, (xi, v) in enumerate(zip(x, values))])


def test_mean_curve_and_value_at():
    frame = _runs({0: [0.4, 0.2, 0.1], 1: [0.6, 0.4, 0.3]}, [10, 100, 1000])
    grid, mean, std = mean_curve(frame)
    assert grid[0] == 10 and grid[-1] == pytest.approx(1000) and len(grid) == 41  # 20 per decade
    assert value_at(grid, mean, 100) == pytest.approx(0.3) and value_at(grid, std, 100) == pytest.approx(0.1)
    assert value_at(grid, mean, 1e6) == pytest.approx(0.2)  # constant beyond the end
    # each run's value, at one point or at several (one row per run)
    assert run_values_at(frame, np.sqrt(10 * 100)) == pytest.approx([0.3, 0.5])
    assert run_values_at(frame, np.array([1.0, 100.0, 1e6])) == pytest.approx(np.array([[0.4, 0.2, 0.1],
                                                                                        [0.6, 0.4, 0.3]]))


def test_covering_mean_averages_the_runs_at_each_point_and_has_no_spread_where_one_run_covers():
    frame = pd.concat([_runs({0: [0.4, 0.2, 0.1]}, [10, 100, 1000]),
                       _runs({1: [0.6, 0.4, 0.2, 0.0]}, [10, 100, 1000, 10000])], ignore_index=True)
    c = covering_mean(frame)
    assert c.x[0] == 10 and c.x[-1] == pytest.approx(10000)  # from the first start to the last end
    both, one = c.x <= 1000 * (1 + 1e-9), c.x > 1000 * (1 + 1e-9)
    assert set(c.count[both]) == {2} and set(c.count[one]) == {1}
    assert np.isnan(c.se[one]).all() and np.isfinite(c.se[both]).all()
    at100 = np.argmin(abs(np.log10(c.x) - 2))
    assert c.mean[at100] == pytest.approx(0.3) and c.se[at100] == pytest.approx(np.std([0.2, 0.4], ddof=1) / np.sqrt(2))
    assert c.mean[-1] == pytest.approx(0.0)  # the longer run alone: never the shorter one's last value carried on
    assert covering_mean(frame.assign(kernel_evals=0)).x.size == 0


def test_values_by_parameter_reads_each_run_at_t_or_at_kt_over_k_and_never_beyond_its_ends():
    frame = _by_k(groups=("kT fixed",), ks=(1, 2))  # iterations 10 and 20; objective 1/k + 0.1 run + (1 - checkpoint)
    at_t = values_by_parameter(frame, "mini_batch", ReadAt((10, 20), "T"))
    assert len(at_t) == 8 and set(at_t["at"]) == {10, 20}
    first = at_t[(at_t["mini_batch"] == 2) & (at_t["at"] == 10) & (at_t["run"] == 1)]["primal_objective"]
    assert first.tolist() == pytest.approx([0.5 + 0.1 + 1])
    at_kt = values_by_parameter(frame, "mini_batch", ReadAt((20, 40), "kT", times_parameter=True))
    # k = 1 reads iteration 20 (kT = 20) and nothing at 40; k = 2 reads iterations 10 and 20
    assert sorted(zip(at_kt["mini_batch"], at_kt["at"])) == [(1.0, 20), (1.0, 20), (2.0, 20), (2.0, 20),
                                                             (2.0, 40), (2.0, 40)]
    between = values_by_parameter(frame, "mini_batch", ReadAt((np.sqrt(200),), "T"))  # halfway in log iterations
    assert between[between["mini_batch"] == 1]["primal_objective"].tolist() == pytest.approx([1.5, 1.6])


def test_final_rows_and_finals_by_parameter():
    last = finals_by_parameter(_by_k(), "mini_batch")
    assert len(last) == 12 and set(last["checkpoint"]) == {1}
    assert final_rows(_by_k()).equals(last.drop(columns=["mini_batch", "group"]))
    t_fixed = last[last["group"] == "T fixed"].groupby("mini_batch")["primal_objective"].mean()
    assert t_fixed.to_dict() == pytest.approx({1.0: 1.05, 2.0: 0.55, 4.0: 0.3})


def test_mean_before_and_settle_point():
    frame = _runs({0: [0.5, 0.3, 0.1], 1: [0.7, 0.5, 0.3]}, [1, 10, 100])
    assert mean_before(frame, 10) == pytest.approx(0.4)
    assert np.isnan(mean_before(frame, 0.5))
    assert settle_point(frame) > 70  # still moving near the end (100)
    flat = _runs({0: [0.2, 0.2, 0.2]}, [1, 10, 100])
    assert settle_point(flat) == 1.0
    late = _runs({0: [0.5, 0.5, 0.201, 0.2]}, [1, 10, 100, 1000])
    assert settle_point(late) == pytest.approx(100, rel=0.15)  # within 10% from 100 on


def test_report_reads_the_configs_of_the_checkout_wherever_it_runs(monkeypatch, tmp_path):
    root = tmp_path / "paper"
    _experiment(root, "sbp-figure2-adult", "ci-adult")
    monkeypatch.chdir(tmp_path)  # no configs/ here
    rows = {row[0]: row for row in report.experiment_rows(papers.results(root))}
    assert list(rows) == papers.experiments()
    assert rows["sbp-figure2-adult"][1].endswith("10 runs")  # read from configs/sbp-figure2-adult.yaml
    assert rows["sbp-libsvm-forest"][2] == "-" and "Forest/Covertype" in rows["sbp-libsvm-forest"][3]


def test_a_zoomed_panel_shows_where_the_solvers_final_errors_lie():
    """Issue #14: the error axis of Figure 2 is focused on where the solvers converge and differ,
    from 0.9 times the lowest final mean error to 1.25 times their median, not from 0."""
    rows = [{"experiment": "e", "dataset": "adult", "solver": solver, "solver_name": solver, "run": run,
             "checkpoint": c, "epoch": c, "kernel_evals": 10.0 ** c, "test_error": error + 0.3 / (c + 1) + 0.001 * run}
            for solver, error in (("sbp", 0.15), ("perceptron", 0.2)) for run in (0, 1) for c in range(4)]
    curves = pd.DataFrame(rows)
    fig = plotting.curves_figure(curves, plotting.X_AXES["kernel_evals"], plotting.Y_AXES["test_error"], zoom=True)
    finals = {"sbp": 100 * (0.15 + 0.3 / 4 + 0.0005), "perceptron": 100 * (0.2 + 0.3 / 4 + 0.0005)}
    full, zoomed = fig.axes  # issue #29: the full curves above, the zoom in a row of its own
    median = (finals["sbp"] + finals["perceptron"]) / 2
    assert zoomed.get_ylim() == pytest.approx((0.9 * finals["sbp"], 1.25 * median))
    assert full.get_ylim()[1] > zoomed.get_ylim()[1]


def test_objective_curves_dash_the_test_hinge_loss_where_measured():
    a = _by_k(groups=("g",), ks=(1,)).assign(experiment="a")
    curves = pd.concat([a.assign(test_hinge_loss=0.5), a.assign(experiment="b")], ignore_index=True)
    fig = plotting.curves_figure(curves, plotting.X_AXES["iterations"], plotting.Y_AXES["primal_objective"],
                                 dashed=plotting.Y_AXES["test_hinge_loss"])
    measured, unmeasured = fig.axes
    solid, dashed = measured.get_lines()
    assert (solid.get_linestyle(), dashed.get_linestyle()) == ("-", "--")
    assert dashed.get_color() == solid.get_color() and set(dashed.get_ydata()) == {0.5}
    assert measured.get_ylabel() == "primal objective (solid), test hinge loss (dashed)"
    assert [line.get_linestyle() for line in unmeasured.get_lines()] == ["-"]
    assert unmeasured.get_ylabel() == "primal objective"
    plt.close(fig)


def test_a_figure_dashes_the_test_loss_only_in_the_panels_the_paper_shows_it_in(monkeypatch, tmp_path):
    """The Pegasos paper's Figure 2 shows the test loss in its left plot only; a run of the right
    plot's experiment that measured it does not bring it into that panel."""
    shown = {}
    monkeypatch.setattr(plotting, "objective_curves", lambda curves, *args: shown.setdefault("curves", curves))
    a = _by_k(groups=("g",), ks=(1,)).assign(test_hinge_loss=0.5)
    used = [SimpleNamespace(curves=a.assign(experiment=name)) for name in ("left", "right")]
    figure = Figure("f", "paper", "title", "label", ("left", "right"), ObjectiveCurves(test_loss=("left",)))
    figures.draw(figure, used, tmp_path / "f")
    loss = shown["curves"].groupby("experiment")["test_hinge_loss"]
    assert loss.apply(lambda s: s.eq(0.5).all()).to_dict() == {"left": True, "right": False}
    assert shown["curves"].loc[shown["curves"]["experiment"] == "right", "test_hinge_loss"].isna().all()
    pegasos_figure2 = next(f for p in papers.PAPERS for f in p.figures if f.stem == "pegasos-figure2")
    assert pegasos_figure2.drawing.test_loss == ("pegasos-figure2-norma",)

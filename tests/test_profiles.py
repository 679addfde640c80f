"""Performance profiles (Dolan and Moré) over the problems of a sweep or of several data sets."""

from __future__ import annotations

import math
import re
import textwrap

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import dump_svmlight_file, load_breast_cancer

from sbpbench.outputs import page
from sbpbench.outputs.profiles import TOLERANCE, caption, performance_profile, reached_at, setting_of, with_problems
from tests.cli_runner import sbpbench
from tests.experiments import adult_config, write_config

#: A small case computed by hand: per problem (sigma2) and solver, one run's test errors at 10,
#: 100 and 1000 kernel evaluations. The mean line is read on its grid (20 points a decade,
#: interpolated in log x): each line below crosses its target in the last twentieth of a decade
#: before a checkpoint, so it is reached at that checkpoint.
HAND = {
    ("1", "a"): [0.5, 0.5, 0.1],   # the lowest final error: target 1.05 * 0.1; reached at 1000
    ("1", "b"): [0.5, 0.1, 0.1],   # reached at 100: ratio 1, a's is 10
    ("1", "c"): [0.1, 0.3, 0.3],   # below the target at 10 but not kept: never reached
    ("2", "a"): [0.5, 0.2, 0.2],   # target 1.05 * 0.2; reached at 100
    ("2", "b"): [0.5, 0.2, 0.2],   # a tie with a: both ratio 1
    ("2", "c"): [0.4, 0.3, 0.25],  # never reached
}


def hand_curves(extra: dict | None = None) -> pd.DataFrame:
    """Curves of :data:`HAND` (and ``extra``, alike), one run per entry, labelled ``SOLVER[sigma2=S]``."""
    rows = [{"experiment": "e", "dataset": "d", "solver": f"{solver}[sigma2={s}]", "solver_name": solver,
             "params": f"sigma2={s}", "run": 0, "checkpoint": i, "iteration": i + 1, "kernel_evals": evals,
             "train_time_s": 0.001 * (i + 1), "status": "budget", "test_error": error}
            for (s, solver), errors in {**HAND, **(extra or {})}.items()
            for i, (evals, error) in enumerate(zip([10.0, 100.0, 1000.0], errors))]
    return pd.DataFrame(rows)


def test_a_hand_computed_profile_with_a_tie_and_a_solver_that_never_reaches_the_target():
    profile = performance_profile(hand_curves())
    assert profile.problems == ("e: sigma2=1", "e: sigma2=2") and profile.solvers == ("a", "b", "c")
    assert profile.targets == pytest.approx([(1 + TOLERANCE) * 0.1, (1 + TOLERANCE) * 0.2])
    assert profile.costs.tolist() == [[1000.0, 100.0, math.inf], [100.0, 100.0, math.inf]]
    assert profile.ratios.tolist() == [[10.0, 1.0, math.inf], [1.0, 1.0, math.inf]]
    assert profile.fractions([1, 5, 10, 1e9]).tolist() == [[0.5, 0.5, 1.0, 1.0], [1.0] * 4, [0.0] * 4]
    taus, fractions = profile.steps()[0]
    assert taus.tolist() == [1.0, 10.0, 10.0, 11.0] and fractions.tolist() == [0.5, 0.5, 1.0, 1.0]
    assert performance_profile(hand_curves(), "seconds").steps()[1][0].tolist() == [1.0, 5.5]  # to tau 5 at least
    assert profile.steps()[2][1].tolist() == [0.0, 0.0]  # no credit at any tau
    text = caption([profile])
    assert "at most 1.05 times the lowest final mean test error" in text and "no credit" in text


def test_a_solver_without_the_cost_axis_is_left_out_of_that_profile_only():
    curves = hand_curves({("1", "d"): [0.5, 0.4, 0.3], ("2", "d"): [0.5, 0.4, 0.3]})
    curves.loc[curves["solver_name"] == "d", "kernel_evals"] = np.nan  # LIBSVM's, Fourier features'
    by_evals, by_seconds = performance_profile(curves), performance_profile(curves, "seconds")
    assert by_evals.solvers == ("a", "b", "c") and by_evals.left_out == ("d",)
    assert by_seconds.solvers == ("a", "b", "c", "d") and by_seconds.left_out == ()
    assert by_seconds.costs[:, 3].tolist() == [math.inf, math.inf]  # d ends at 0.3: above both targets
    assert "Not compared on kernel evaluations (none recorded): d." in caption([by_evals, by_seconds])


def test_one_problem_makes_no_profile():
    curves = hand_curves()
    assert performance_profile(curves[curves["params"] == "sigma2=1"]) is None


@pytest.mark.parametrize(("label", "split"), [
    ("pegasos[C=10;mini_batch=1;sigma2=1]", ("C=10;sigma2=1", "pegasos[mini_batch=1]")),
    ("sbp[sigma2=scale]", ("sigma2=scale", "sbp")),
    ("libsvm[bias=True;sigma2=1]", ("sigma2=1", "libsvm[bias=True]")),
    ("smo", ("", "smo")),
    ("my [own] label", ("", "my [own] label")),
])
def test_a_label_splits_into_its_setting_and_its_solver(label, split):
    assert setting_of(label) == split


def test_reached_at_is_where_the_line_comes_to_the_target_and_stays():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    assert reached_at(x, np.array([0.1, 0.5, 0.1, 0.1]), 0.2) == 3.0
    assert reached_at(x, np.array([0.1, 0.1, 0.1, 0.1]), 0.2) == 1.0
    assert reached_at(x, np.array([0.1, 0.1, 0.1, np.nan]), 0.2) == math.inf
    assert reached_at(x[:0], x[:0], 0.2) == math.inf


def test_the_page_of_a_sweep_over_settings_draws_its_profiles():
    curves = with_problems(hand_curves()).drop(columns=["problem", "profiled"])
    html = page.render_page(curves, {"experiment": "e"}, "r")
    assert "<h3>Performance profile</h3>" in html and "at most 1.05 times" in html
    assert "data-name='performance-profile-kernel_evals'" in html
    assert "data-name='performance-profile-seconds'" in html
    one = page.render_page(curves[curves["params"] == "sigma2=1"], {"experiment": "e"}, "r")
    assert "Performance profile" not in one


def test_a_sweep_over_two_data_sets_draws_a_performance_profile(tmp_path, monkeypatch, capsys):
    """Two configs, two data sets (the bundled Adult, scikit-learn's breast cancer), one results tree:
    ``sbpbench run`` of both configs, and ``sbpbench plot`` on the tree, draw the profile of SBP and
    Pegasos over both."""
    X, y = load_breast_cancer(return_X_y=True)
    order = np.random.default_rng(0).permutation(y.size)
    for name, rows in (("train.svm", order[:200]), ("test.svm", order[200:400])):
        dump_svmlight_file(X[rows], y[rows], str(tmp_path / name), zero_based=False)
    write_config(tmp_path / "adult.yaml", adult_config("on-adult", n_train=150, n_test=150))
    (tmp_path / "cancer.yaml").write_text(textwrap.dedent("""\
        name: on-cancer
        dataset: {path: train.svm, test_path: test.svm}
        kernel: {name: gaussian, sigma2: scale}
        problem: {lambda: 1/n, nu: 0.05}
        solvers: [sbp, pegasos]
        budget: {epochs: 1}
        runs: 2
        seed: 0
        """))
    results = tmp_path / "results"
    assert sbpbench(monkeypatch, "run", tmp_path / "adult.yaml", tmp_path / "cancer.yaml", "--results", results) == 0
    said = capsys.readouterr().out.strip().splitlines()
    assert " ".join(said[-2:]).split()[-2:] == ["overview:", str(results / "index.html")]  # said last (wrapped)
    overview = (results / "index.html").read_text()  # the overview of both, linking each run's page
    hrefs = re.findall(r"<a href='([^']+)'>(on-[a-z]+)</a>", overview)
    assert [name for _, name in hrefs] == ["on-adult", "on-cancer"]
    assert all((results / href).is_file() and href.endswith("/index.html") for href, _ in hrefs)
    assert "Performance profile over 2 problems" in overview
    assert "<td>adult</td>" in overview and "<td>train.svm</td>" in overview  # the data sets, a file by its name
    svg = (results / "performance-profile.svg").read_text()  # the run of both configs draws it
    assert "Performance profile over 2 problems" in svg and "at most 1.05 times" in svg
    assert re.search(r"cost: kernel evaluations", svg) and "cost: training time (s)" in svg
    assert "sbp" in svg and "pegasos" in svg
    capsys.readouterr()
    assert sbpbench(monkeypatch, "plot", results, "--out", tmp_path / "figures") == 0  # and plot on the tree
    assert str(tmp_path / "figures" / "performance-profile.svg") in capsys.readouterr().out
    assert (tmp_path / "figures" / "performance-profile.svg").read_text() == svg
    assert sbpbench(monkeypatch, "page", results, "--out", tmp_path / "pages") == 0  # and page on the tree
    assert capsys.readouterr().out.splitlines()[-1] == str(tmp_path / "pages" / "index.html")
    pages = (tmp_path / "pages" / "index.html").read_text()
    assert re.findall(r"<a href='([^']+)'>", pages) == ["on-adult.html", "on-cancer.html"]
    assert all((tmp_path / "pages" / href).is_file() for href in ("on-adult.html", "on-cancer.html"))
    numbers = re.compile(r"id='sbpbench-profiles'>(.*?)</script>", re.S)
    assert numbers.search(pages).group(1) == numbers.search(overview).group(1)  # the same overview
    assert sbpbench(monkeypatch, "page", results) == 0  # in place: each run's page, and the overview run wrote
    assert capsys.readouterr().out.splitlines()[-1] == str(results / "index.html")
    assert (results / "index.html").read_text() == overview


def test_the_same_labels_in_two_experiments_are_two_entries_with_a_target_each():
    """Two data sets run with the same solvers (labels): each problem's target comes from its own
    experiment's final errors (the last checkpoint of each run taken per experiment)."""
    one = hand_curves()
    one = one[one["params"] == "sigma2=1"]
    other = one.assign(experiment="f", test_error=2 * one["test_error"])
    profile = performance_profile(pd.concat([one, other], ignore_index=True))
    assert profile.problems == ("e: sigma2=1", "f: sigma2=1")
    assert profile.targets == pytest.approx([(1 + TOLERANCE) * 0.1, (1 + TOLERANCE) * 0.2])
    assert profile.costs.tolist() == [[1000.0, 100.0, math.inf], [1000.0, 100.0, math.inf]]

"""scripts/sbp_causes.py: the rules naming each SBP claim row's cause, the Perceptron stand-in, and
the committed record covering every row it names."""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from sbpbench.papers import declarations, sbp
from sbpbench.papers.declarations import Results
from tests.problems import adult

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))  # the script imports authors_sbp.py by name

from sbp_causes import (  # noqa: E402
    FROZEN,
    PLAUSIBLE,
    decide_close,
    decide_ends,
    decide_fourier,
    decide_issvm,
    decide_overfits,
    decide_settle,
    first_epoch,
    printed_nu,
    settle_absolute,
    ten_run_means,
)


def _gaussian(A: np.ndarray, B: np.ndarray, sigma2: float) -> np.ndarray:
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * A @ B.T
    return np.exp(-np.maximum(d2, 0) / (2 * sigma2))


def test_first_epoch_is_the_perceptron_and_the_average_of_its_iterates():
    train, test = adult(120, seed=1, test=60)
    found = first_epoch(train, test, 10.0, seed=3)
    X, T, y = train.X.toarray(), test.X.toarray(), train.y
    K, KT = _gaussian(X, X, 10.0), _gaussian(X, T, 10.0)
    alpha, total, evals = np.zeros(train.n), np.zeros(train.n), 0
    for i in np.random.default_rng(3).permutation(train.n):
        evals += int(np.count_nonzero(alpha))
        if y[i] * ((alpha * y) @ K[:, i]) <= 0:
            alpha[i] += 1
        total += alpha  # the iterate after this example
    last = np.mean(np.sign((alpha * y) @ KT) != test.y)
    averaged = np.mean(np.sign((total / train.n * y) @ KT) != test.y)
    assert found["last_iterate"] == 100 * last and found["averaged"] == 100 * averaged
    assert found["kernel_evals"] == evals and found["mistakes"] == int(alpha.sum())


def test_ten_run_means_are_means_of_ten_of_the_values():
    means = ten_run_means(np.array([1.0, 3.0]), 500)
    assert means.shape == (500,) and means.min() >= 1 and means.max() <= 3
    draws_of_three = (means - 1) * 10 / 2  # a mean of ten draws of 1 or 3: a whole count of threes
    assert np.allclose(draws_of_three, np.round(draws_of_three)) and len(set(np.round(draws_of_three))) > 2


def test_settle_absolute_is_where_a_run_stays_within_the_band():
    run = pd.DataFrame({"kernel_evals": [1.0, 10, 100, 1000], "test_error": [0.5, 0.1, 0.3, 0.3]})
    assert settle_absolute(run, "kernel_evals", 0.01) == 100
    assert settle_absolute(run, "kernel_evals", 0.5) == 1


def _close(share: float, averaged: float) -> dict:
    return {"sbp": 15.0, "at_kernel_evals": 1e8,
            "single_runs": {"runs": 10, "within": 1, "share": 0.1, "interval": [0.01, 0.39]},
            "ten_run_means": {"draws": 100, "share": share, "median": 20.0},
            "averaged": {"runs": 2, "last_iterate": 20.0, "last_range": [17, 23], "averaged": averaged,
                         "averaged_range": [averaged, averaged]}}


def test_decide_close_names_a_lucky_mean_then_the_averaged_iterate():
    assert decide_close(_close(PLAUSIBLE, 20.0))[0] == "the paper's procedure"
    assert decide_close(_close(0.0, 15.6))[0] == "setup"
    assert decide_close(_close(0.0, 17.0))[0] == "not established"


def test_decide_settle_needs_a_count_that_puts_smo_a_tenth_of_a_decade_later_or_the_authors_smo_beside_ours():
    gaps = {"requested (ours)": -0.7, "cached": 0.09}
    assert decide_settle({"gaps": {**gaps, "cached": 0.1}, "nu_ratio": None})[0] == "setup"
    assert decide_settle({"gaps": gaps, "nu_ratio": 0.99})[0] == "not established"
    assert decide_settle({"gaps": gaps, "nu_ratio": None, "authors_gap": -0.3})[0] == "the paper's procedure"


def test_decide_settle_names_the_implementation_where_only_the_authors_smo_settles_later():
    gaps = {"requested (ours)": -0.7, "cached": 0.2}
    assert decide_settle({"gaps": gaps, "nu_ratio": None, "authors_gap": 0.1})[0] == "implementation"
    assert decide_settle({"gaps": {**gaps, "requested (ours)": 0.1}, "nu_ratio": None,
                          "authors_gap": 0.1})[0] == "setup"


def test_printed_nu_is_table_2s_without_bias_and_none_for_a_substitute():
    assert printed_nu("MNIST") == 2.21e-4 and printed_nu("Adult") == 1.10e-2
    assert printed_nu("MNIST-t10k (substitute)") is None


def test_decide_ends_blames_the_problem_when_its_optimum_is_not_lower():
    assert decide_ends({"optimum": 2.88, "sbp": 2.86, "perceptron": 2.65})[0] == "setup"
    assert decide_ends({"optimum": 2.75, "sbp": 2.86, "perceptron": 2.80})[0] == "setup"
    assert decide_ends({"optimum": 2.60, "sbp": 2.86, "perceptron": 2.80})[0] == "not established"


def test_decide_overfits_needs_a_nearly_fixed_predictor():
    adult_ends = {"epochs": 100.0, "mistakes_per_example": 0.15}
    assert decide_overfits({"epochs": 10.0, "mistakes_per_example": FROZEN, "adult": adult_ends})[0] == \
        "the paper's procedure"
    assert decide_overfits({"epochs": 10.0, "mistakes_per_example": 2 * FROZEN, "adult": adult_ends})[0] == \
        "not established"


def test_decide_fourier_needs_the_papers_settings_and_no_claim_on_the_panel():
    record = {"sigma2": 10.0, "paper_sigma2": 10.0, "k": 1024.0, "capped": 0, "fourier": 15.0, "sbp": 15.8,
              "sbp_end": 14.8, "claimed": False}
    assert decide_fourier(record)[0] == "the paper's procedure"
    assert decide_fourier({**record, "capped": 3})[0] == "not established"
    assert decide_fourier({**record, "claimed": True})[0] == "not established"


def test_decide_issvm_names_the_cost_model_unless_issvm_is_first_per_kernel_row_too():
    record = {"cost": {"issvm": "two rows", "sbp": "one row"}, "at_equal_rows": "inconclusive",
              "at_equal_rows_outcome": "inconclusive"}
    assert decide_issvm(record)[0] == "setup"
    assert decide_issvm({**record, "at_equal_rows_outcome": "supports"})[0] == "not established"


def _caused_rows() -> list[declarations.Posed]:
    return [group for group in sbp.CLAIMS.groups if isinstance(group, declarations.Posed)
            and group.cause is not None]


def test_the_committed_record_covers_every_row_it_names_with_a_fixed_cause():
    found = json.loads((ROOT / "results" / "paper" / sbp.CAUSES_RECORD).read_text())
    named = {sbp.cause_key(claim, dataset) for claim, panels in sbp.EXPLAINED.items() for dataset in panels}
    declared = {row.cause.row for row in _caused_rows() if row.cause is not None}
    assert set(found["rows"]) == named == declared
    assert all(record["cause"] in declarations.CAUSE_WORDS and record["evidence"] for record in found["rows"].values())


def test_the_issvm_row_names_its_cause_on_its_reversed_verdict():
    results = Results(ROOT / "results" / "paper", sbp.SHARED_RUNS, sbp.EXPERIMENTS)
    (_, _, measured, verdict), _ = sbp.AGAINST_ISSVM[0].decided(results)[0]
    found = json.loads((ROOT / "results" / "paper" / sbp.CAUSES_RECORD).read_text())
    cause = found["rows"][sbp.cause_key("issvm iterations", "Adult")]["cause"]
    assert verdict == f"did not hold: issvm reaches it first: cause: {cause}"
    assert "scripts/sbp_causes.py" in measured

"""The vocabulary of comparisons (sbpbench/papers/comparisons.py): for each kind, supporting data,
contradicting data, equal data, and that it can fail (the outcome turns when the data do)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from sbpbench.papers import comparisons as cmp

RNG = np.random.default_rng(7)


def noisy(mean: float, n: int = 10, sd: float = 0.01) -> np.ndarray:
    return mean + sd * RNG.standard_normal(n)


def test_equivalence_supports_contradicts_and_needs_runs():
    assert cmp.equivalence(noisy(15.0, sd=0.005), 15.0, 0.05).outcome == "supports"
    assert cmp.equivalence(noisy(15.5, sd=0.005), 15.0, 0.05).outcome == "contradicts"
    assert cmp.equivalence([15.0, 15.0, 15.0], 15.0, 0.05).outcome == "supports"  # equal data
    edge = cmp.equivalence(noisy(15.04, n=5, sd=0.05), 15.0, 0.05)
    assert edge.outcome == "inconclusive" and edge.runs_needed is not None and edge.runs_needed > 5
    assert "would decide" in edge.needed()
    # exact values decide from one run; one random run does not
    assert cmp.equivalence([2.0], 2.0, 0.1, exact=True).outcome == "supports"
    assert cmp.equivalence([2.0], 2.0, 0.1).outcome == "inconclusive"


@pytest.mark.parametrize("shift", [0.0, 0.2, 1.0])
def test_equivalence_can_fail(shift):
    """The same spread, moved away from the printed number: it matches near it, differs far from it."""
    found = cmp.equivalence(noisy(10.0 + shift, sd=0.01), 10.0, 0.1)
    assert found.outcome == ("supports" if shift < 0.1 else "contradicts")


def test_exceeds_equal_data_count_against():
    a = noisy(0.10)
    least = 0.02  # the least difference that counts (one test point, say)
    assert cmp.exceeds(a + 0.05, a, least, "B - A").outcome == "supports"
    assert cmp.exceeds(a - 0.05, a, least, "B - A").outcome == "contradicts"
    assert cmp.exceeds(a, a, least, "B - A").outcome == "contradicts"  # identical curves: not below
    same = np.full(5, 0.2)
    assert cmp.exceeds(same, same, 0.0, "B - A").outcome == "contradicts"
    wide = cmp.exceeds(noisy(0.1, n=3, sd=0.05), noisy(0.1, n=3, sd=0.05) - 0.02, 0.0, "B - A")
    assert wide.outcome in {"inconclusive", "contradicts", "supports"}
    if wide.outcome == "inconclusive":
        assert wide.runs_needed is None or wide.runs_needed > 3


def test_ranking_censoring():
    fast, slow = np.array([1.0, 1.1, 1.2, 1.3, 1.4]), np.array([5.0, 5.1, 5.2, 5.3, 5.4])
    yes = np.ones(5, bool)
    assert cmp.ranking(fast, yes, slow, yes).outcome == "supports"
    assert cmp.ranking(slow, yes, fast, yes).outcome == "contradicts"
    same = cmp.ranking(fast, yes, fast, yes)  # equal samples with a spread: no order, none excluded
    assert same.outcome == "inconclusive" and same.interval[1] > 0
    # B censored later than every A event: A is known to reach first
    assert cmp.ranking(fast, yes, slow, ~yes).outcome == "supports"
    # A censored early: the order is unknown, not counted as A first
    unknown = cmp.ranking(fast, ~yes, slow, yes)
    assert unknown.outcome != "supports" and unknown.estimate < 1
    # a censored slow run that dominates can make the claim fail: B reached before A even stopped
    assert cmp.ranking(slow, ~yes, fast, yes).outcome == "contradicts"


def test_a_ranking_with_a_group_without_runs_decides_nothing():
    """No runs of one side (a script's record not there): no value to compare, inconclusive, and
    no runs-needed estimate (the measured cell says why)."""
    found = cmp.ranking([], [], [1.0, 2.0], [True, True])
    assert found.outcome == "inconclusive" and found.n == (0, 2) and found.runs_needed is None
    assert found.needed() == ("inconclusive (0 runs; no value to compare (the measured cell says why); "
                       "runs that record one would decide it)")


def test_a_ranking_of_runs_that_all_tie_did_not_hold():
    """Equality counts against "fewer" or "faster": runs that all tie (every SGD-s and SGD-m run
    at 2 epochs) give the interval [0, 0], which excludes any advantage for A: the claim fails,
    either way round, however many runs tie."""
    for n in (2, 5, 30):
        ties = np.full(n, 2.0)
        found = cmp.ranking(ties, np.ones(n, bool), ties, np.ones(n, bool))
        assert (found.estimate, found.interval, found.outcome) == (0.0, (0.0, 0.0), "contradicts")
    # runs that all stopped short of the target (censored) show nothing: not refuted
    short = cmp.ranking(np.full(5, 2.0), np.zeros(5, bool), np.full(5, 2.0), np.zeros(5, bool))
    assert short.interval == (0.0, 0.0) and short.outcome == "inconclusive"
    # one run of A a little sooner than the others moves the interval above 0: no longer refuted
    sooner = cmp.ranking([1.5, 2.0, 2.0], np.ones(3, bool), [2.0, 2.0, 2.0], np.ones(3, bool))
    assert sooner.interval[1] > 0 and sooner.outcome != "contradicts"


def test_reach_fraction():
    assert cmp.reach_fraction([True] * 5, 0.5).outcome == "supports"
    assert cmp.reach_fraction([False] * 5, 0.5).outcome == "contradicts"
    mixed = cmp.reach_fraction([True, False, True, False, False], 0.5)
    assert mixed.outcome == "inconclusive" and mixed.runs_needed is not None and mixed.runs_needed > 5
    half = cmp.reach_fraction([True, False] * 15, 0.5)  # exactly the implied fraction: open, and says why
    assert half.outcome == "inconclusive" and half.runs_needed is None and "is the implied one" in half.needed()
    lo, hi = cmp.wilson(5, 5)
    assert 0.6 < lo < 0.7 and hi == 1.0


def documented_level() -> float:
    """The confidence level of the report's intervals, as docs/reproducing.md states it."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "reproducing.md").read_text()
    found = re.search(r"alpha\s+=\s+([0-9.]+),\s+([0-9.]+)%\s+intervals", text)
    assert found, "docs/reproducing.md no longer states the report's level as 'alpha = A, L% intervals'"
    alpha, level = float(found[1]), float(found[2]) / 100
    assert level == pytest.approx(1 - 2 * alpha)  # each end of an interval a one-sided test at alpha
    return level


def test_intervals_are_the_textbook_ones_at_the_documented_level():
    """Wilson's interval of a fraction and the t intervals of a mean and of Welch's difference, against
    scipy's at the level docs/reproducing.md states: the level the report's intervals are computed at."""
    level = documented_level()
    for k, n in [(0, 5), (3, 10), (5, 5), (7, 20), (19, 40)]:
        textbook = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
        assert cmp.wilson(k, n) == pytest.approx((textbook.low, textbook.high), rel=1e-9, abs=1e-12), (k, n)
    a, b = noisy(1.0, n=6, sd=0.3), noisy(0.4, n=9, sd=0.1)
    welch = stats.ttest_ind(a, b, equal_var=False).confidence_interval(level)
    assert cmp.exceeds(a, b, 0.0, "difference").interval == pytest.approx((welch.low, welch.high), rel=1e-9)
    one = stats.ttest_1samp(a, 0.0).confidence_interval(level)
    assert cmp.exceeds(a, None, 0.0, "mean").interval == pytest.approx((one.low, one.high), rel=1e-9)
    assert f"{level:.0%} interval" in cmp.equivalence(a, 1.0, 0.5).text()  # the level the report prints


def test_log_ratio():
    a, b = noisy(3.0, sd=0.05), noisy(1.0, sd=0.02)
    assert cmp.log_ratio([(a, 1), (b, -1)], 2.0, "a / b").outcome == "supports"
    assert cmp.log_ratio([(a, 1), (b, -1)], 4.0, "a / b").outcome == "contradicts"
    assert cmp.log_ratio([(b, 1), (b, -1)], 1.1, "b / b").outcome == "contradicts"  # equal: not larger by 10%
    factors = cmp.log_ratio([(a, 1), (b, -1), (b, 1), (a, -1)], 1.1, "factor over factor")
    assert factors.outcome == "contradicts" and factors.estimate == pytest.approx(1.0)


def test_trend():
    x = [np.arange(10.0)] * 4
    assert cmp.trend(x, [2 * xi + noisy(0, 10) for xi in x], +1, 0.01, "slope").outcome == "supports"
    assert cmp.trend(x, [-2 * xi + noisy(0, 10) for xi in x], +1, 0.01, "slope").outcome == "contradicts"
    assert cmp.trend(x, [np.ones(10)] * 4, +1, 0.01, "slope").outcome == "contradicts"  # flat: does not rise


def test_identical_settings():
    """A setting as run: every value equal to the paper's holds, one other value (or a missing one)
    fails it; numbers within a declared tolerance; no value decides nothing."""
    assert cmp.identical([10, 10, 10], 10).outcome == "supports"  # equal data: a setting that equals the paper's
    assert cmp.identical([10, 10, 9], 10).outcome == "contradicts"
    assert cmp.identical([10, None], 10).outcome == "contradicts"
    assert cmp.identical([("gaussian", 10.0)], ("gaussian", 10.0)).outcome == "supports"
    assert cmp.identical([("laplacian", 10.0)], ("gaussian", 10.0)).outcome == "contradicts"
    assert cmp.identical([1.0 + 1e-12], 1.0, rel_tol=1e-9).outcome == "supports"
    assert cmp.identical([0.71], 0.708, within=0.008).outcome == "supports"
    assert cmp.identical([0.72], 0.708, within=0.008).outcome == "contradicts"
    assert cmp.identical([False], False).outcome == "supports" and cmp.identical([True], False).outcome == "contradicts"
    none = cmp.identical([], 10)
    assert none.outcome == "inconclusive" and "no value" in none.needed()
    found = cmp.identical([10, 9], 10)
    assert found.estimate == 1 and found.text() == "values other than the paper's 1 (exact; n = 2)"


def test_equivalence_of_an_exact_value_known_within_bounds():
    """A value certified only to lie within bounds (an optimum and its duality gap): it matches
    when the bounds lie within the margin, differs when they lie beyond it, and is otherwise
    inconclusive, with a tighter optimum, not more runs, to decide it."""
    assert cmp.equivalence([1.0], 1.0, 0.1, exact=True, bounds=(0.95, 1.0)).outcome == "supports"
    assert cmp.equivalence([2.0], 1.0, 0.1, exact=True, bounds=(1.9, 2.0)).outcome == "contradicts"
    wide = cmp.equivalence([1.0], 1.05, 0.1, exact=True, bounds=(0.0, 1.2))
    assert wide.outcome == "inconclusive" and wide.runs_needed is None and "tighter optimum" in wide.needed()


def test_evidence_text_names_statistic_interval_and_runs():
    found = cmp.equivalence([1.0, 1.1, 0.9], 1.0, 0.5)
    text = found.text()
    assert "TOST" in text and "n = 3" in text and "[" in text


def test_one_run_says_it_has_no_spread():
    found = cmp.equivalence([2.0], 2.0, 0.1)
    assert found.outcome == "inconclusive" and "at least 2 runs" in found.needed()


def test_a_ranking_the_audit_found_unable_to_fail_can_fail():
    """Issue 36's audit: "SGD-m is slower than OCAS at C = 10" stayed inconclusive with OCAS made 100x
    slower. Ranked by the cost to 1% with censoring, SGD-m reaching 1% (4 of 5 runs) long before a
    slow OCAS does makes the claim fail; OCAS at its committed speed makes it hold."""
    sgd_m, sgd_m_reached = [1.8, 1.9, 2.0, 2.1, 2.8], [True, True, True, True, False]
    yes = [True] * 5
    assert cmp.ranking([5.6] * 5, yes, sgd_m, sgd_m_reached).outcome == "contradicts"  # OCAS 100x slower
    assert cmp.ranking([0.056, 0.05, 0.06, 0.055, 0.058], yes, sgd_m, sgd_m_reached).outcome == "supports"


# ----------------------------------------------------------------------------- properties: every comparison can fail

RUNS = st.lists(st.floats(0.5, 50.0, allow_nan=False), min_size=3, max_size=6)
FIXED = settings(max_examples=40, derandomize=True, database=None, deadline=None)


@FIXED
@given(RUNS, RUNS)
def test_a_ranking_that_holds_fails_with_the_solvers_swapped(a, b):
    """Gehan's statistic is antisymmetric: whatever the data, swapping the solvers turns support
    into contradiction (all runs reached), so a held ranking is one that can fail. Equality counts
    against: a way round whose interval shows A no advantage (upper end at or below 0) fails even
    where the other way round is not supported (both fail where every pair ties, [0, 0])."""
    ya, yb = [True] * len(a), [True] * len(b)
    forward, backward = cmp.ranking(a, ya, b, yb), cmp.ranking(b, yb, a, ya)
    assert forward.estimate == pytest.approx(-backward.estimate)
    for one, other in ((forward, backward), (backward, forward)):
        if one.outcome == "supports":
            assert other.outcome == "contradicts"
        assert (one.outcome == "contradicts") == (other.outcome == "supports" or one.interval[1] <= 0)  # all reached


@FIXED
@given(RUNS, RUNS)
def test_a_difference_that_holds_fails_with_the_solvers_swapped(a, b):
    """A difference above its least size holds; the same runs swapped contradict it."""
    found = cmp.exceeds(a, b, 0.1, "a - b")
    if found.outcome == "supports":
        assert cmp.exceeds(b, a, 0.1, "b - a").outcome == "contradicts"


@FIXED
@given(RUNS, RUNS)
def test_a_ratio_that_holds_fails_inverted(a, b):
    """A ratio above its threshold (above 1) holds; its inverse contradicts it."""
    found = cmp.log_ratio([(np.array(a), 1), (np.array(b), -1)], 1.5, "a / b")
    if found.outcome == "supports":
        assert cmp.log_ratio([(np.array(b), 1), (np.array(a), -1)], 1.5, "b / a").outcome == "contradicts"


@FIXED
@given(st.lists(st.booleans(), min_size=1, max_size=40))
def test_a_fraction_that_holds_fails_negated(reached):
    """More than half at the target holds; the runs negated (fewer than half) contradict it."""
    if cmp.reach_fraction(reached, 0.5).outcome == "supports":
        assert cmp.reach_fraction([not r for r in reached], 0.5).outcome == "contradicts"


@FIXED
@given(RUNS, st.floats(0.01, 5.0))
def test_a_match_fails_when_moved_beyond_its_margin(values, margin):
    """Values that match a printed number differ from one moved by the margin plus their interval's width."""
    found = cmp.equivalence(values, float(np.mean(values)), margin)
    if found.outcome == "supports":
        width = found.interval[1] - found.interval[0]
        assert cmp.equivalence(values, float(np.mean(values)) + 2 * margin + width, margin).outcome == "contradicts"


@FIXED
@given(st.lists(st.integers(0, 5), min_size=1, max_size=8), st.integers(0, 5))
def test_an_identical_setting_fails_when_one_value_changes(values, expected):
    """Whatever the values, the setting holds exactly when all equal the paper's, and one changed fails it."""
    found = cmp.identical(values, expected)
    assert (found.outcome == "supports") == all(v == expected for v in values)
    assert cmp.identical([*values, expected + 1], expected).outcome == "contradicts"


def test_a_deterministic_solvers_identical_runs_are_one_value():
    """Pseudo-replication: 50 identical runs of a deterministic solver are one run, decided exactly
    (n = 1), not a Wilson interval over 50 draws; the same runs of a stochastic solver stay a sample,
    and a deterministic solver's runs that differ (say, stopped by a clock) stay a sample too."""
    from sbpbench.papers.questions import Fraction, Runs, replicated

    class Reader:
        def __init__(self, solver, runs):
            self.solvers, self.runs = (solver,), runs

        def read(self, found):
            return self.runs

    same = Runs(np.full(50, 3.0), np.zeros(50, dtype=bool), "x")
    assert not replicated(same, Reader("svmperf", same)) and replicated(same, Reader("dcd", same))
    varied = Runs(np.arange(50.0), np.zeros(50, dtype=bool), "x")  # seconds vary, the outcome does not
    assert replicated(varied, Reader("svmperf", varied)) and not replicated(varied, Reader("svmperf", varied), False)
    assert Fraction(Reader("svmperf", varied), 0.5, "why").decide([])[0].n == (1,)
    evidence, _ = Fraction(Reader("svmperf", same), 0.5, "why").decide([])
    assert (evidence.test, evidence.n, evidence.outcome) == ("exact", (1,), "contradicts")
    evidence, _ = Fraction(Reader("dcd", same), 0.5, "why").decide([])
    assert (evidence.test, evidence.n) == ("Wilson", (50,))
    reached = Runs(np.full(30, 1.0), np.ones(30, dtype=bool), "x")
    assert Fraction(Reader("ocas", reached), 0.5, "why").decide([])[0].outcome == "supports"


def test_censored_runs_decide_when_they_can_only_move_the_estimate_further_away():
    """Web, SGD-QN's epochs to 1%: 28 runs average about 75 against the paper's 39 +- 3.9, and the 2
    runs short of 1% (their costs lower bounds) can only raise the mean: it differs. Where the runs
    that reach lie below the printed number, the censored ones could bring the mean to it: open."""
    from sbpbench.papers.questions import Match, Runs

    class Reader:
        solvers = ("sgdqn",)

        def __init__(self, runs):
            self.runs = runs

        def read(self, found):
            return self.runs

    rng = np.random.default_rng(0)
    reached = np.array([True] * 28 + [False] * 2)
    high = Runs(np.concatenate([rng.normal(75, 10, 28), [60.0, 90.0]]), reached, "epochs")
    evidence, text = Match(Reader(high), 39.0, 3.9, "why").decide([])
    assert evidence.outcome == "contradicts" and "can only raise the estimate" in text
    low = Runs(np.concatenate([rng.normal(20, 2, 28), [25.0, 30.0]]), reached, "epochs")
    assert Match(Reader(low), 39.0, 3.9, "why").decide([])[0].outcome == "inconclusive"
    all_reach = Runs(high.values, np.ones(30, dtype=bool), "epochs")
    assert Match(Reader(all_reach), 39.0, 3.9, "why").decide([])[0].outcome == "contradicts"


def test_a_margin_that_lets_half_or_twice_the_printed_value_match_is_refused():
    """An SGD table's T = 2 with a margin of one epoch would let T = 1 match: refused. A printing
    that coarse itself (T = 1, resolved to half an epoch) is not the margin's fault: accepted."""
    from sbpbench.papers.questions import Match, check_margin, printed_resolution
    from sbpbench.papers.sgd import epochs_margin

    assert [printed_resolution(v) for v in (39.0, 0.44, 2.0, 1e-5, 5.79e-4)] == pytest.approx(
        [0.5, 0.005, 0.5, 5e-6, 5e-7])
    with pytest.raises(ValueError, match="half or twice the printed 2 match"):
        check_margin(2.0, 1.0, "at least 1 epoch")
    with pytest.raises(ValueError):
        Match(None, 2.0, 1.0, "at least 1 epoch")
    check_margin(1.0, 0.5, "the printing's resolution")
    check_margin(2.0, epochs_margin(2.0), "ours")
    assert epochs_margin(2.0) == 0.5 and epochs_margin(261.0) == pytest.approx(26.1)


def test_seconds_compared_in_one_row_come_from_one_session():
    """SBP redone on 2026-11-25 against LIBSVM's seconds of 2026-11-23: the row decides nothing and
    says why; the same runs made together decide, and the row names their session."""
    from types import SimpleNamespace

    from sbpbench.papers.questions import same_session

    held = cmp.Evidence("Gehan", "P(A first) - P(B first)", 0.6, (0.2, 1.0), (10, 10), "supports")
    together = SimpleNamespace(meta={"started": "2026-11-23T12:14:20+00:00"})
    evidence, measured = same_session(held, "m", together, ("sbp", "libsvm"))
    assert evidence.outcome == "supports" and measured == "m; seconds of one session (run 2026-11-23T12:14:20+00:00)"
    apart = SimpleNamespace(meta={"started": "2026-11-23T12:14:20+00:00",
                                  "redos": [{"solvers": ["sbp"], "started": "2026-11-25T01:38:27+00:00"}]})
    evidence, _ = same_session(held, "m", apart, ("sbp", "libsvm"))
    assert evidence.outcome == "inconclusive" and "different sessions (sbp redone 2026-11-25" in evidence.needed()


def test_concordance_of_two_orders_of_medians():
    """Kendall's tau between the solvers' medians in two experiments, a seeded bootstrap interval:
    the same order supports, the reverse contradicts, two solvers cannot tell, and the interval is
    the same on every call."""
    from sbpbench.papers.comparisons import concordance

    rng = np.random.default_rng(1)
    runs = [rng.normal(10.0 * 2 ** k, 1.0, 20) for k in range(5)]
    same = concordance(runs, [2 * r for r in runs], 0.5, "tau")
    assert same.outcome == "supports" and same.estimate == pytest.approx(1.0)
    assert concordance(runs, [2 * r for r in runs], 0.5, "tau").interval == same.interval
    assert concordance(runs, runs[::-1], 0.5, "tau").outcome == "contradicts"
    assert concordance(runs[:2], runs[:2], 0.5, "tau").outcome == "inconclusive"

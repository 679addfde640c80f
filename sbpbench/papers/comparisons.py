"""The vocabulary of statistical comparisons every verdict of REPRODUCTION.md is made of.

Each comparison takes the runs' values (arrays, one entry per run) and returns an
:class:`Evidence`: the statistic, its estimate and interval, the test that decided, the runs it
used, the outcome (``supports``, ``contradicts`` or ``inconclusive``), and, when it is
inconclusive, how many runs per solver would decide it at the observed spread. The papers
(:mod:`sbpbench.papers.sbp`, :mod:`~sbpbench.papers.sgd`, ...) only declare which comparison a
printed number or a claim is, on which runs; they hold no verdict rules of their own.

One significance level, :data:`ALPHA`, holds for the whole report. Every interval is a
two-sided ``1 - 2 ALPHA`` interval, so that each of its ends is a one-sided test at ``ALPHA``
(an equivalence test, TOST, is then "the interval lies inside the margin").

The comparisons:

- :func:`equivalence`: a value against a printed number (TOST with a margin; ``differs`` when the
  interval lies outside the margin);
- :func:`exceeds`: a mean difference against a threshold, equality counting against the claim
  (A below B along an axis, a trend's slope); Welch's t interval;
- :func:`ranking`: costs to a target, a run that stopped before it censored (Gehan's generalized
  Wilcoxon statistic with an exact permutation test);
- :func:`reach_fraction`: the fraction of runs at a target, Wilson's interval, against the
  fraction the paper implies;
- :func:`log_ratio`: a ratio of mean costs, or of factors (scaling), by the interval of its
  logarithm (delta method) against a declared threshold;
- :func:`trend`: the slope of a value over a window, per run, its interval over runs;
- :func:`concordance`: the order of several solvers' median costs in two experiments (Kendall's
  tau), its interval over resamples of the runs, against a declared threshold;
- :func:`identical`: a setting as run (a configuration value, a data size) against the paper's,
  every value equal within a declared tolerance; not a random draw, so one run decides.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

#: The significance level of the whole report: every interval is a 1 - 2 ALPHA interval.
ALPHA = 0.05

#: The outcomes of a comparison.
Outcome = Literal["supports", "contradicts", "inconclusive"]

#: The test names, as the report's preamble names them.
TESTS = {
    "TOST": "two one-sided t tests (equivalence within a margin; Welch's t interval of the mean)",
    "Welch": "Welch's t interval of a difference of means, against a threshold",
    "Gehan": "Gehan's generalized Wilcoxon rank statistic for censored costs, exact permutation p-value",
    "Wilson": "Wilson's score interval of a fraction of runs",
    "log-ratio": "the interval of the log of a ratio of mean costs (delta method, t quantile)",
    "slope": "least-squares slope per run, t interval of its mean over runs",
    "bootstrap": "Kendall's tau between two orders of medians, percentile interval over resamples of each "
                 "solver's runs (seeded, so the same every time)",
    "exact": "a setting as run against the paper's, every value equal (within a declared tolerance), or a "
             "deterministic solver's identical runs counted as the one run they are; not a random draw, so "
             "one run decides",
}

#: Inconclusive comparisons cap their runs-needed estimate here: beyond it, more of the same runs
#: would not decide in practice (the number is said as "more than").
MAX_RUNS = 10_000


@dataclass(frozen=True)
class Evidence:
    """What a comparison measured and decided.

    Parameters
    ----------
    test : str
        The test's name (a key of :data:`TESTS`).
    statistic : str
        What ``estimate`` is, in words.
    estimate : float
        The statistic's value.
    interval : tuple of float
        Its 1 - 2 :data:`ALPHA` interval.
    n : tuple of int
        The runs of each group compared.
    outcome : Outcome
        What the interval decides.
    runs_needed : int or None
        Inconclusive: the runs per group that would decide at the observed spread (None when
        more of the same runs would not: no spread measured, or the estimate on the boundary).
    fmt : str
        How to print the estimate and interval.
    why_not : str
        Inconclusive: why more of the same runs would not decide, where another kind of run
        would (a tighter optimum, say); empty otherwise.
    """

    test: str
    statistic: str
    estimate: float
    interval: tuple[float, float]
    n: tuple[int, ...]
    outcome: Outcome
    runs_needed: int | None = None
    fmt: str = ".3g"
    why_not: str = ""

    def text(self) -> str:
        """The evidence in words: statistic, estimate, interval, test, runs."""
        lo, hi = (format(v, self.fmt) for v in self.interval)
        runs = ", ".join(map(str, self.n))
        if self.test == "exact":
            return f"{self.statistic} {format(self.estimate, self.fmt)} (exact; n = {runs})"
        return (f"{self.statistic} {format(self.estimate, self.fmt)} [{lo}, {hi}] "
                f"({self.test}, {1 - 2 * ALPHA:.0%} interval; n = {runs})")

    def needed(self) -> str:
        """``inconclusive (n runs; about m runs per solver would decide)``, or why more would not."""
        n = min(self.n) if self.n else 0
        if self.why_not:
            more = self.why_not
        elif self.runs_needed is None and n == 0:
            more = "no value to compare (the measured cell says why); runs that record one would decide it"
        elif self.runs_needed is None and n < 2:
            more = "one run has no spread: at least 2 runs per solver are needed to judge it"
        elif self.runs_needed is None:
            more = "more of the same runs would not decide it"
        elif self.runs_needed >= MAX_RUNS:
            more = f"more than {MAX_RUNS} runs per solver would decide it"
        else:
            more = f"about {self.runs_needed} runs per solver would decide it"
        return f"inconclusive ({n} run{'' if n == 1 else 's'}; {more})"


def _t(df: float) -> float:
    """The one-sided ALPHA quantile of Student's t with ``df`` degrees of freedom (normal when infinite)."""
    return float(stats.norm.isf(ALPHA) if not math.isfinite(df) else stats.t.isf(ALPHA, df))


def _mean_se_df(values: np.ndarray) -> tuple[float, float, float]:
    """Mean, standard error and degrees of freedom of ``values`` (se NaN below two values)."""
    n = len(values)
    mean = float(np.mean(values)) if n else math.nan
    if n < 2:
        return mean, math.nan, math.nan
    return mean, float(np.std(values, ddof=1) / math.sqrt(n)), float(n - 1)


def _welch(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """Mean of ``a`` minus mean of ``b``, its standard error and Welch's degrees of freedom."""
    (ma, sa, _), (mb, sb, _) = _mean_se_df(a), _mean_se_df(b)
    se = math.hypot(sa, sb)
    if not se > 0:
        return ma - mb, se, math.inf
    df = se ** 4 / (sa ** 4 / (len(a) - 1) + sb ** 4 / (len(b) - 1))
    return ma - mb, se, df


def _runs_needed(n: int, se: float, gap: float) -> int | None:
    """Runs per group for ``se`` (at ``n`` runs) to shrink below ``gap`` over the one-sided quantile."""
    if not (se > 0 and gap > 0 and n > 0):
        return None
    z = float(stats.norm.isf(ALPHA))
    return min(MAX_RUNS, max(n + 1, math.ceil(n * (z * se / gap) ** 2)))


def _interval(estimate: float, se: float, df: float) -> tuple[float, float]:
    if math.isnan(se):
        return -math.inf, math.inf
    half = _t(df) * se
    return estimate - half, estimate + half


def equivalence(values: Sequence[float] | np.ndarray, printed: float, margin: float,
                exact: bool = False, other: Sequence[float] | np.ndarray | None = None,
                bounds: tuple[float, float] | None = None) -> Evidence:
    """A measured value against a printed number: TOST with ``margin``.

    ``matches`` (``supports``) when the interval of the runs' mean lies within ``printed +-
    margin``; ``differs`` (``contradicts``) when it lies wholly outside; else inconclusive, with
    the runs that would shrink the interval enough at the observed spread. ``exact``: the value
    is not a random draw (a setting, a certified optimum), its interval the point itself, so one
    run decides. ``other``: the runs of a second solver, whose mean is subtracted (Welch's
    interval of the difference; ``printed`` is then the difference expected, 0 for "close").
    ``bounds``: an exact value known only to lie between these (an optimum certified by its
    duality gap): its interval; inconclusive when it straddles the margin's edge, and then a
    tighter optimum, not more runs, would decide.
    """
    x = np.asarray(values, dtype=float)
    if other is None:
        mean, se, df = _mean_se_df(x)
        n: tuple[int, ...] = (len(x),)
    else:
        y = np.asarray(other, dtype=float)
        mean, se, df = _welch(x, y)
        n = (len(x), len(y))
    if exact or (min(n) >= 2 and se == 0):
        se, df = 0.0, math.inf
    lo, hi = _interval(mean - printed, se, df) if bounds is None else (bounds[0] - printed, bounds[1] - printed)
    if -margin <= lo and hi <= margin:
        outcome: Outcome = "supports"
    elif lo > margin or hi < -margin:
        outcome = "contradicts"
    else:
        outcome = "inconclusive"
    gap = abs(abs(mean - printed) - margin)
    needed = _runs_needed(min(n), se, gap) if outcome == "inconclusive" and bounds is None else None
    what = "ours minus printed" if other is None else "difference"
    why_not = ("more runs would not decide it: the value is exact, known only within bounds that straddle the "
               "margin, and a tighter optimum would" if outcome == "inconclusive" and bounds is not None else "")
    return Evidence("TOST", f"{what} (margin +-{margin:.3g})", mean - printed, (lo, hi), n, outcome, needed,
                    why_not=why_not)


def exceeds(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray | None, threshold: float,
            statistic: str) -> Evidence:
    """Whether mean(a) - mean(b) exceeds ``threshold`` (``b`` None: mean(a) alone).

    ``threshold`` is the least difference that counts (one test point of an error, say), declared
    with its reason. ``supports`` when the interval lies above it; ``contradicts`` when it lies at
    or below it: a difference that does not reach it counts against the claim (two identical
    curves do not make one below the other), so the claim can fail on equal data. Welch's t
    interval; inconclusive otherwise, with the runs that would decide.
    """
    x = np.asarray(a, dtype=float)
    if b is None:
        est, se, df = _mean_se_df(x)
        n: tuple[int, ...] = (len(x),)
    else:
        y = np.asarray(b, dtype=float)
        est, se, df = _welch(x, y)
        n = (len(x), len(y))
    if se == 0:
        df = math.inf
    lo, hi = _interval(est, se, df)
    outcome: Outcome = "supports" if lo > threshold else "contradicts" if hi <= threshold else "inconclusive"
    needed = _runs_needed(min(n), se, abs(est - threshold)) if outcome == "inconclusive" else None
    return Evidence("Welch", statistic, est, (lo, hi), n, outcome, needed)


def _pair_scores(times: np.ndarray, events: np.ndarray) -> np.ndarray:
    """Gehan's score of every ordered pair of the pooled runs: +1 where run i is known to come
    first (it reached the target before j's cost), -1 where j is, 0 where censoring hides the
    order or the two tie."""
    first = (events[:, None] & (times[:, None] < times[None, :])).astype(float)
    return first - first.T


def _gehan(scores: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Gehan's statistic of each split (a row of ``masks``: True in group A): the mean over pairs
    (i in A, j in B) of their score (:func:`_pair_scores`), all splits at once."""
    a = masks.astype(float)
    k = a.sum(axis=1)
    return ((a @ scores) * (1.0 - a)).sum(axis=1) / (k * (masks.shape[1] - k))


def _hidden(times: np.ndarray, events: np.ndarray, in_a: np.ndarray) -> float:
    """The share of pairs (i in A, j in B) whose order censoring hides: neither known to come
    first (:func:`_pair_scores`) nor a known tie (both reached the target at the same cost)."""
    known = (_pair_scores(times, events) != 0) | (events[:, None] & events[None, :] & (times[:, None] == times))
    return 1.0 - float(known[np.ix_(in_a, ~in_a)].mean())


def _splits(n: int, k: int, limit: int = 20_000) -> np.ndarray:
    """Every way to pick ``k`` of ``n`` as group A, one row of a boolean array each (a fixed-seed
    uniform sample of ``limit`` of them when there are more)."""
    if math.comb(n, k) <= limit:
        chosen = np.array(list(itertools.combinations(range(n), k)), dtype=int).reshape(-1, k)
    else:
        chosen = np.argsort(np.random.default_rng(0).random((limit, n)), axis=1)[:, :k]
    masks = np.zeros((len(chosen), n), dtype=bool)
    np.put_along_axis(masks, chosen, True, axis=1)
    return masks


def ranking(cost_a: Sequence[float] | np.ndarray, reached_a: Sequence[bool] | np.ndarray,
            cost_b: Sequence[float] | np.ndarray, reached_b: Sequence[bool] | np.ndarray) -> Evidence:
    """Whether A reaches a target at a lower cost than B, a run short of the target censored.

    A run that stopped before the target (``reached`` False) has a cost only known to exceed its
    own: it is censored there, not left out. Gehan's generalized Wilcoxon statistic (the mean
    over pairs of A and B runs of +1 when A's run is known to reach first, -1 when B's is, 0
    when censoring hides the order) with its exact permutation distribution (all splits of the
    pooled runs). ``supports`` when the one-sided p-value of A first is below :data:`ALPHA`;
    ``contradicts`` when that of B first is, or when the interval excludes any advantage for A
    even with every pair whose order censoring hides counted as A first (its upper end plus the
    share of those pairs at or below 0: runs that all reach the target at one cost, say, show A
    no sooner than B, and equality counts against "fewer", "faster" or "more", as in
    :func:`exceeds`; runs that all stopped short of it show nothing either way); else inconclusive, with
    the runs that would decide at the observed statistic (its z scaled by the square root of the
    runs). The interval: the statistic's permutation quantiles around the estimate. A group
    without runs (no value to compare) is inconclusive.
    """
    ta, tb = np.asarray(cost_a, dtype=float), np.asarray(cost_b, dtype=float)
    if not len(ta) or not len(tb):
        return Evidence("Gehan", "P(A first) - P(B first)", math.nan, (-1.0, 1.0), (len(ta), len(tb)),
                        "inconclusive", fmt=".2f")
    times = np.concatenate([ta, tb])
    events = np.concatenate([np.asarray(reached_a, dtype=bool), np.asarray(reached_b, dtype=bool)])
    in_a = np.arange(len(times)) < len(ta)
    scores = _pair_scores(times, events)
    observed = float(_gehan(scores, in_a[None, :])[0])
    null = _gehan(scores, _splits(len(times), len(ta)))
    p_a, p_b = float(np.mean(null >= observed - 1e-12)), float(np.mean(null <= observed + 1e-12))
    half = float(np.quantile(np.abs(null), 1 - 2 * ALPHA))
    interval = (max(-1.0, observed - half), min(1.0, observed + half))
    no_advantage = interval[1] + _hidden(times, events, in_a) <= 0
    outcome: Outcome = ("supports" if p_a < ALPHA else "contradicts" if p_b < ALPHA or no_advantage
                        else "inconclusive")
    needed = None
    if outcome == "inconclusive" and observed != 0 and null.std() > 0:
        z_obs = abs(observed) / float(null.std())
        n = min(len(ta), len(tb))
        needed = min(MAX_RUNS, max(n + 1, math.ceil(n * (float(stats.norm.isf(ALPHA)) / z_obs) ** 2)))
    return Evidence("Gehan", "P(A first) - P(B first)", observed, interval, (len(ta), len(tb)), outcome,
                    needed, fmt=".2f")


def wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson's 1 - 2 :data:`ALPHA` score interval of a fraction ``k`` of ``n``."""
    return (0.0, 1.0) if n == 0 else _wilson(k / n, n)


def _wilson(p: float, n: int) -> tuple[float, float]:
    """Wilson's interval of an observed fraction ``p`` of ``n`` runs."""
    z = float(stats.norm.isf(ALPHA))
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _fraction_runs(p: float, n: int, implied: float) -> int | None:
    """The fewest runs whose Wilson interval at the observed fraction ``p`` excludes ``implied``
    (the fraction kept, the runs grown), searched up to :data:`MAX_RUNS`; None when ``p`` is ``implied``."""
    if not n or p == implied:
        return None
    for m in itertools.chain(range(n + 1, 200), range(200, MAX_RUNS, 10)):
        lo, hi = _wilson(p, m)
        if lo > implied or hi <= implied:
            return m
    return MAX_RUNS


def reach_fraction(reached: Sequence[bool] | np.ndarray, implied: float, replicates: bool = True) -> Evidence:
    """The fraction of runs at a target against the fraction ``implied`` by the paper's text.

    ``supports`` when Wilson's interval lies above ``implied``, ``contradicts`` when it lies at or
    below it; else inconclusive, with the runs that would decide at the observed fraction.
    ``replicates`` False: the runs are one run repeated (a deterministic solver's), so they are
    one value, not a sample: the fraction is exactly 0 or 1 and decides alone (test ``exact``).
    """
    flags = np.asarray(reached, dtype=bool)
    if not replicates and len(flags):
        p = float(flags[0])
        return Evidence("exact", f"at the target, one run (a deterministic solver's {len(flags)} identical runs; "
                        f"paper implies more than {implied:.0%} of runs)", p, (p, p), (1,),
                        "supports" if p > implied else "contradicts", fmt=".0%")
    n, k = len(flags), int(flags.sum())
    lo, hi = wilson(k, n)
    outcome: Outcome = "supports" if lo > implied else "contradicts" if hi <= implied else "inconclusive"
    p = k / n if n else math.nan
    needed = _fraction_runs(p, n, implied) if outcome == "inconclusive" else None
    why_not = ("the observed fraction is the implied one: at it no number of runs would decide, only runs whose "
               "fraction turns out on one side" if outcome == "inconclusive" and n and p == implied else "")
    return Evidence("Wilson", f"fraction of runs (paper implies more than {implied:.0%})", p, (lo, hi), (n,),
                    outcome, needed, fmt=".0%", why_not=why_not)


def log_ratio(groups: Sequence[tuple[np.ndarray, float]], threshold: float, statistic: str) -> Evidence:
    """Whether a ratio of mean costs exceeds ``threshold``: the product of mean(values) ** power over ``groups``.

    A ratio (Pegasos' seconds over SGD-m's) has two groups, powers +1 and -1; a ratio of factors
    (how much one solver's time grows from C = 1 to C = 10 over how much another's does) four;
    a ratio of geometric means fractional powers. Decided on its logarithm, whose standard error
    is the delta method's (each group independent), with a t quantile at the fewest runs:
    ``supports`` when the interval lies above ``threshold``, ``contradicts`` when at or below it
    (a ratio equal to the threshold counts against); ``threshold`` is declared with its reason.
    """
    log_est, var, n = 0.0, 0.0, []
    for group, power in groups:
        values = np.asarray(group, dtype=float)
        mean, se, _ = _mean_se_df(values)
        log_est += power * math.log(mean)
        var += (power * se / mean) ** 2
        n.append(len(values))
    se = math.sqrt(var)
    lo, hi = _interval(log_est, se, min(n) - 1 if se > 0 else math.inf)
    target = math.log(threshold)
    outcome: Outcome = "supports" if lo > target else "contradicts" if hi <= target else "inconclusive"
    needed = _runs_needed(min(n), se, abs(log_est - target)) if outcome == "inconclusive" else None
    return Evidence("log-ratio", f"{statistic} (against {threshold:.3g})", math.exp(log_est),
                    (math.exp(lo), math.exp(hi)), tuple(n), outcome, needed, fmt=".3g")


#: Resamples of :func:`concordance`'s bootstrap, and its seed (a report's verdicts are the same every time).
RESAMPLES, SEED = 2000, 0


def concordance(a: Sequence[np.ndarray], b: Sequence[np.ndarray], threshold: float, statistic: str) -> Evidence:
    """Whether several solvers are in the same order by median cost in two experiments.

    ``a`` and ``b`` hold, solver by solver in the same order, each run's cost in one experiment
    and the other. The estimate: Kendall's tau (tau-b) between the solvers' medians in ``a`` and
    in ``b``; its interval: the ``1 - 2 ALPHA`` percentiles of tau over :data:`RESAMPLES`
    resamples of each solver's runs with replacement (seeded). ``supports`` when the interval
    lies above ``threshold`` (declared with its reason), ``contradicts`` when at or below it;
    inconclusive with fewer than three solvers or a solver without runs.
    """
    groups = [np.asarray(g, dtype=float) for g in (*a, *b)]
    n = tuple(len(g) for g in groups)
    if len(a) < 3 or len(a) != len(b) or min(n, default=0) == 0:
        return Evidence("bootstrap", f"{statistic} (against {threshold:.3g})", math.nan, (math.nan, math.nan),
                        n, "inconclusive", None)
    k = len(a)

    def tau(medians: np.ndarray) -> float:
        return float(stats.kendalltau(medians[:k], medians[k:]).statistic)

    estimate = tau(np.array([np.median(g) for g in groups]))
    rng = np.random.default_rng(SEED)
    draws = np.array([[np.median(rng.choice(g, len(g))) for g in groups] for _ in range(RESAMPLES)])
    taus = np.nan_to_num([tau(row) for row in draws], nan=0.0)  # a resample with all medians tied: no order
    lo, hi = (float(v) for v in np.quantile(taus, [ALPHA, 1 - ALPHA]))
    outcome: Outcome = "supports" if lo > threshold else "contradicts" if hi <= threshold else "inconclusive"
    needed = _runs_needed(min(n), (hi - lo) / (2 * _t(math.inf)), abs(estimate - threshold)) \
        if outcome == "inconclusive" else None
    return Evidence("bootstrap", f"{statistic} (against {threshold:.3g})", estimate, (lo, hi), n, outcome, needed,
                    fmt=".2f")


def trend(xs: Sequence[np.ndarray], ys: Sequence[np.ndarray], sign: int, least: float,
          statistic: str) -> Evidence:
    """Whether a value moves in direction ``sign`` (+1 rises, -1 falls) over a window, run by run.

    Per run, the least-squares slope of ``ys`` on ``xs`` (the window's checkpoints); over runs,
    the t interval of the mean slope times ``sign`` against ``least``, the least slope that counts
    (:func:`exceeds`): a flat value counts against the claim.
    """
    slopes = [sign * float(np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)[0])
              for x, y in zip(xs, ys, strict=True) if len(x) >= 2]
    found = exceeds(slopes, None, least, statistic)
    return Evidence("slope", found.statistic, found.estimate, found.interval, found.n, found.outcome,
                    found.runs_needed, fmt=".3g")


def _same(value: object, expected: object, rel_tol: float, within: float) -> bool:
    """Whether ``value`` equals ``expected``: numbers within ``rel_tol`` (relative) or ``within``
    (absolute), anything else (text, a tuple, None) exactly."""
    def number(x: object) -> bool:
        return isinstance(x, int | float | np.number) and not isinstance(x, bool)
    if number(value) and number(expected):
        return math.isclose(float(value), float(expected), rel_tol=rel_tol, abs_tol=within)  # type: ignore[arg-type]
    return value == expected


def identical(values: Sequence[object], expected: object, rel_tol: float = 0.0, within: float = 0.0) -> Evidence:
    """A setting as run (one value per run, solver or entry) against the paper's ``expected``.

    ``supports`` when every value equals it (numbers within ``rel_tol`` relative or ``within``
    absolute, each declared with its reason); ``contradicts`` when one does not (a value the run
    lacks, None, counts against); inconclusive without any value. A setting is not a random
    draw: one run decides, and more of the same would not change it. The statistic: the number
    of values other than the paper's.
    """
    n = len(values)
    k = sum(not _same(value, expected, rel_tol, within) for value in values)
    outcome: Outcome = "inconclusive" if not n else "supports" if k == 0 else "contradicts"
    return Evidence("exact", "values other than the paper's", float(k), (float(k), float(k)), (n,), outcome,
                    fmt=".0f")

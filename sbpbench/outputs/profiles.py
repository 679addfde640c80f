"""The problems of a sweep, and performance profiles of the solvers over them (Dolan and Moré, 2002).

A sweep's entries each solve one *problem*: their experiment (its data set) and their *setting*,
the swept or entry-set values of :data:`SETTING_KEYS` its label shows (``sigma2=1;C=10``). What is
left of an entry's label once its setting is taken out is the *solver* a profile compares across
problems (``pegasos[mini_batch=1]``, ``libsvm[bias=True]``): :func:`setting_of` splits them. The sweep figures draw one
panel per problem (:mod:`sbpbench.outputs.plotting`), and :func:`performance_profile` compares the solvers over them:

* the *target* of a problem is a test error within :data:`TOLERANCE` of the lowest final mean test
  error of its solvers (at most ``1 + TOLERANCE`` times it): of every solver, the mean over runs
  of the last checkpoint's (the summary's), whether or not it has the cost axis;
* a solver's *cost* on a problem is where, on a cost axis (kernel evaluations or training seconds),
  its mean test error over runs (the line the figures draw,
  :func:`~sbpbench.outputs.lines.mean_line`) comes to the target and stays there to its end
  (so that a swing below it, SMO's or Pegasos' early ones, is not counted); infinite when it never
  does, or when the solver has no entry on the problem;
* its *ratio* on a problem is its cost over the lowest cost of any solver there, and its profile
  at ``tau`` is the fraction of the problems on which its ratio is at most ``tau``: a solver that
  never reaches a problem's target gets no credit for it, at any ``tau``.

Free of matplotlib: the run's page draws the profile as SVG of its own
(:mod:`sbpbench.outputs.svg_chart`), ``sbpbench plot`` with matplotlib.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sbpbench.outputs.lines import X_AXES, Y_AXES, Axis, Numbers, column_numbers, mean_line
from sbpbench.results.curves import final_rows

#: The keys of a label's brackets that make an entry's problem (with its experiment), not its
#: solver: the kernel's bandwidth and the problem's regularization. A solver's own parameters, its
#: ``bias`` and its ``kernel`` name stay with the solver (LIBSVM, which needs a bias, is compared
#: with the unbiased solvers of the same setting).
SETTING_KEYS = ("sigma2", "lambda", "C", "nu")

#: A problem's target: a test error at most ``1 + TOLERANCE`` times the lowest final one of its solvers.
TOLERANCE = 0.05

#: The least tau a profile is drawn to (times 1.1): its axis then holds the ticks 1, 2 and 5.
TAU_END = 5.0

#: The cost axes a profile is drawn against, each where some solver has it (keys of ``X_AXES``).
PROFILE_COSTS = ("kernel_evals", "seconds")


def setting_of(label: str) -> tuple[str, str]:
    """An entry's label (``NAME[k=v;k=v]``) split into its setting (the values of
    :data:`SETTING_KEYS` in its brackets, ``k=v;k=v``) and its solver (the label without them).

    Parameters
    ----------
    label : str
        The entry's label (the ``solver`` column).

    Returns
    -------
    tuple of (str, str)
        The setting (``""`` for none) and the solver, e.g. ``("C=10;sigma2=1", "pegasos[mini_batch=1]")``
        for ``pegasos[C=10;mini_batch=1;sigma2=1]``.
    """
    base, bracket, inner = label.removesuffix("]").rpartition("[")
    if not (bracket and label.endswith("]")):
        return "", label
    items = [p for p in inner.split(";") if p]
    setting = [p for p in items if p.partition("=")[0] in SETTING_KEYS]
    rest = ";".join(p for p in items if p not in setting)
    return ";".join(setting), f"{base}[{rest}]" if rest else base


def with_problems(curves: pd.DataFrame) -> pd.DataFrame:
    """``curves`` with two columns more, by :func:`setting_of` of each entry's label: ``problem``
    (``EXPERIMENT``, or ``EXPERIMENT: SETTING`` for an entry with a setting) and ``profiled`` (the
    solver the entry is across problems).

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of ``curves.csv`` files (``experiment`` and ``solver`` columns).

    Returns
    -------
    pandas.DataFrame
        A copy with the two columns.
    """
    split = {label: setting_of(str(label)) for label in curves["solver"].unique()}
    return curves.assign(
        problem=[f"{e}: {split[label][0]}" if split[label][0] else str(e)
                 for e, label in zip(curves["experiment"], curves["solver"])],
        profiled=[split[label][1] for label in curves["solver"]])


def reached_at(x: np.ndarray, mean: np.ndarray, target: float) -> float:
    """Where a mean line comes to ``target`` and stays at or below it to its end; ``inf`` when its
    last point is above it (or not a number).

    Parameters
    ----------
    x, mean : numpy.ndarray
        The line's points, in increasing ``x``.
    target : float
        The level to reach.

    Returns
    -------
    float
        The ``x`` of the first point of the line's final stretch at or below ``target``.
    """
    above = np.flatnonzero(~(mean <= target))  # NaN counts as above
    if above.size and above[-1] == mean.size - 1 or mean.size == 0:
        return math.inf
    return float(x[above[-1] + 1] if above.size else x[0])


@dataclass(frozen=True)
class Profile:
    """A performance profile: the solvers' costs on each problem and what they make.

    Parameters
    ----------
    cost : Axis
        The cost axis (kernel evaluations or training seconds).
    problems : tuple of str
        The problems, in the order they first appear.
    solvers : tuple of str
        The solvers compared, in the order they first appear.
    costs : numpy.ndarray
        ``costs[p, s]``: the cost of solver ``s`` to reach problem ``p``'s target (:func:`reached_at`),
        ``inf`` when it does not.
    targets : numpy.ndarray
        Each problem's target test error (a fraction).
    left_out : tuple of str
        The solvers without the cost axis on any problem, not compared.
    """

    cost: Axis
    problems: tuple[str, ...]
    solvers: tuple[str, ...]
    costs: np.ndarray
    targets: np.ndarray
    left_out: tuple[str, ...] = ()

    @property
    def ratios(self) -> np.ndarray:
        """``ratios[p, s]``: ``costs[p, s]`` over the lowest cost on problem ``p`` (``inf`` where not reached)."""
        best = np.min(self.costs, axis=1, keepdims=True)
        with np.errstate(invalid="ignore"):
            return np.where(np.isfinite(self.costs), self.costs / best, np.inf)

    def fractions(self, taus: Sequence[float] | np.ndarray) -> np.ndarray:
        """``fractions[s, i]``: the fraction of the problems on which solver ``s``'s ratio is at most ``taus[i]``."""
        r = self.ratios
        return np.array([[float(np.mean(r[:, s] <= tau)) for tau in taus] for s in range(len(self.solvers))])

    def steps(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each solver's profile as a step line from ``tau = 1`` to past the largest finite ratio (and
        past :data:`TAU_END` at least): the ``tau`` and fraction of each corner, for a line drawn
        straight between them."""
        r = self.ratios
        finite = r[np.isfinite(r)]
        end = 1.1 * max(TAU_END, float(finite.max()) if finite.size else 1.0)
        out = []
        for s in range(len(self.solvers)):
            jumps = np.unique(r[:, s][np.isfinite(r[:, s])])
            taus = np.r_[1.0, np.repeat(jumps[jumps > 1], 2), end]
            levels = self.fractions(np.r_[1.0, jumps[jumps > 1]])[s]
            out.append((taus, np.repeat(levels, 2)))
        return out


def caption(profiles: Sequence[Profile]) -> str:
    """What the profiles of one set of problems show, their target and costs stated: a figure's caption.

    Parameters
    ----------
    profiles : sequence of Profile
        Profiles of the same problems against different costs (at least one).

    Returns
    -------
    str
        The caption, naming the solvers each profile leaves out for want of its cost axis.
    """
    costs = " or ".join(p.cost.label for p in profiles)
    left = "".join(f" Not compared on {p.cost.label} (none recorded): {', '.join(p.left_out)}."
                   for p in profiles if p.left_out)
    return (f"Performance profile over {len(profiles[0].problems)} problems (data set and setting): for each "
            f"solver, the fraction of the problems on which its cost ({costs}) to reach the target is within a "
            f"factor tau of the best solver's. Target: a mean test error over runs at most {1 + TOLERANCE:g} times "
            "the lowest final mean test error of any solver on that problem, reached and kept to the end of the "
            f"line. A solver that never reaches a problem's target gets no credit for it.{left}")


def final_errors(every: pd.DataFrame) -> pd.Series:
    """The final mean test error over runs of each solver on each problem: the mean of its runs' last
    checkpoints (:func:`~sbpbench.results.curves.final_rows`, taken per experiment: the same label
    in two experiments is two entries), runs without a test error left out.

    Parameters
    ----------
    every : pandas.DataFrame
        Rows of ``curves.csv`` files with :func:`with_problems`' columns.

    Returns
    -------
    pandas.Series
        The test errors (fractions), indexed by ``(problem, profiled)`` in the order they first appear.
    """
    column = Y_AXES["test_error"].column
    frames = [final_rows(frame) for _, frame in every.groupby("experiment", sort=False)]
    final = pd.concat(frames) if frames else every
    return final[np.isfinite(column_numbers(final, column))].groupby(["problem", "profiled"], sort=False)[
        column].mean()


def performance_profile(curves: pd.DataFrame, cost: str = "kernel_evals") -> Profile | None:
    """The performance profile of the solvers of ``curves`` over its problems (:func:`with_problems`).

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of ``curves.csv`` files, of one experiment or several (several data sets).
    cost : str
        A key of :data:`PROFILE_COSTS`.

    Returns
    -------
    Profile or None
        None with fewer than two problems, or fewer than two solvers that have the cost axis and a
        test error.
    """
    x, y = X_AXES[cost], Y_AXES["test_error"]
    every = with_problems(curves)
    best = final_errors(every).groupby(level="problem").min()
    rows = every[Numbers(every).drawable(x, y)]
    problems, solvers = list(dict.fromkeys(every["problem"])), list(dict.fromkeys(rows["profiled"]))
    if len(problems) < 2 or len(solvers) < 2:
        return None
    targets = np.array([(1 + TOLERANCE) * best.get(problem, np.nan) for problem in problems])
    costs = np.full((len(problems), len(solvers)), np.inf)
    for (problem, solver), frame in rows.groupby(["problem", "profiled"], sort=False):
        line = mean_line(frame, x.column, y.column)
        p = problems.index(problem)
        if line is not None and np.isfinite(targets[p]):
            costs[p, solvers.index(solver)] = reached_at(line.x, line.mean, targets[p])
    return Profile(x, tuple(problems), tuple(solvers), costs, targets,
                   tuple(s for s in dict.fromkeys(every["profiled"]) if s not in solvers))

"""Comparisons posed on results: what a declaration names to decide a printed number or a claim.

A question (:class:`Match`, :class:`Rank`, :class:`Exceeds`, :class:`Fraction`, :class:`Ratio`,
:class:`Trend`, :class:`AllOf`, :class:`Equal`) names its readers, each of which takes one value
per run from the results of an experiment (:class:`Reader`; a setting's: :class:`SettingReader`),
and one comparison of :mod:`sbpbench.papers.comparisons`. It returns the
:class:`~sbpbench.papers.comparisons.Evidence` and what was measured, as text. The readers of
the runs' curves (a column at a solver's stopping point, a curve over a region, ...) live with
the paper whose results they read; the readers of a run's meta.json (:class:`Resolved`,
:class:`ConfigParam`, :class:`RunParam`) and of its runs' ends (:class:`RunsPerSolver`,
:class:`Ends`) are here, and so are the reader of a script's analysis file under the results
root (:func:`read_analysis`) and of the runs such a file records (:class:`RecordedToTarget`:
programs other than ours, whose runs no experiment's curves hold).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

import numpy as np

from sbpbench.errors import UserError
from sbpbench.papers import comparisons as cmp
from sbpbench.results.curves import final_rows
from sbpbench.results.lookup import ExperimentResult, resolved
from sbpbench.solvers import SOLVERS


@dataclass(frozen=True)
class Runs:
    """One value per run, whether each run reached the target (all True without one), and what the
    values are; ``bounds``: an exact value known only to lie between these (an optimum certified
    by its duality gap), which :class:`Match` compares in place of an interval over runs."""

    values: np.ndarray
    reached: np.ndarray
    label: str
    bounds: tuple[float, float] | None = None

    def text(self) -> str:
        """``label mean (range; k/n runs at the target)``."""
        v = self.values
        if not len(v):
            return f"{self.label}: no runs"
        at = "" if self.reached.all() else f"; {int(self.reached.sum())}/{len(v)} runs at the target"
        return f"{self.label} {np.mean(v):.3g} ({np.min(v):.3g}-{np.max(v):.3g}{at})"


class Reader(Protocol):
    """Takes one value per run from the results of a claim's experiments (its own first, then its ``also``)."""

    @property
    def solvers(self) -> tuple[str, ...]:
        """The solvers (``solver_name``) it reads."""
        ...

    def read(self, found: Sequence[ExperimentResult]) -> Runs:
        """The runs' values."""
        ...


class Question(Protocol):
    """A comparison posed on results."""

    def decide(self, found: Sequence[ExperimentResult]) -> tuple[cmp.Evidence, str]:
        """The evidence, and what was measured as text."""
        ...

    def solvers(self) -> tuple[str, ...]:
        """The solvers (``solver_name``) whose runs it reads: a result without one of them is not compared."""
        ...


def _solvers(*readers: Reader) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name for reader in readers for name in reader.solvers))


def replicated(runs: Runs, reader: Reader, by_values: bool = True) -> bool:
    """Whether ``runs`` are replicates: False when every solver ``reader`` reads is deterministic
    (:attr:`~sbpbench.solvers.base.Solver.deterministic`: it draws nothing from its generator) and
    the runs hold one outcome (whether each reached the target) and, with ``by_values``, one value,
    so that they are one run repeated, one value, not independent draws (counting them as many
    would be pseudo-replication). A question on the outcome alone passes ``by_values`` False: a
    deterministic solver's seconds vary with the machine's load, its outcome does not."""
    if not len(runs.values) or not all(getattr(SOLVERS.get(name), "deterministic", False) for name in reader.solvers):
        return True
    return not (np.unique(runs.reached).size == 1 and (not by_values or np.unique(runs.values).size == 1))


def session(res: ExperimentResult, solver: str) -> str:
    """When ``solver``'s runs in ``res`` were made: the last redo of it (``scripts/redo_runs.py``
    records each in ``meta.json``'s ``redos``), else the experiment's own start."""
    redone = [redo for redo in res.meta.get("redos") or [] if solver in (redo.get("solvers") or [])]
    return f"redone {redone[-1].get('started', '?')}" if redone else f"run {res.meta.get('started', '?')}"


def same_session(evidence: cmp.Evidence, measured: str, res: ExperimentResult,
                 solvers: Sequence[str]) -> tuple[cmp.Evidence, str]:
    """Seconds of several solvers compared in one row: they must come from one session of runs
    (made together, interleaved, on one machine's load), which the row names; seconds from
    different sessions (one solver redone later) decide nothing, and the row says why."""
    made = {solver: session(res, solver) for solver in dict.fromkeys(solvers)}
    if len(set(made.values())) == 1:
        return evidence, f"{measured}; seconds of one session ({next(iter(made.values()))})"
    apart = "; ".join(f"{solver} {when}" for solver, when in made.items())
    why = (f"the seconds come from different sessions ({apart}): only runs made together, interleaved, compare "
           "times, and more of these runs would not")
    return (cmp.Evidence(evidence.test, evidence.statistic, evidence.estimate, evidence.interval, evidence.n,
                         "inconclusive", None, evidence.fmt, why_not=why), measured)


def _measured(runs: Sequence[Runs], evidence: cmp.Evidence) -> str:
    return "; ".join([*(r.text() for r in runs), evidence.text()])


def printed_resolution(printed: float) -> float:
    """Half a unit of the last digit ``printed`` shows (``39`` -> 0.5, ``0.44`` -> 0.005): the
    precision of the printing itself."""
    text = format(printed, "g")
    if "e" in text:
        mantissa, exponent = text.split("e")
        decimals = len(mantissa.partition(".")[2]) - int(exponent)
    else:
        decimals = len(text.partition(".")[2])
    return 0.5 * 10.0 ** -decimals


def check_margin(printed: float, margin: float, reason: str) -> None:
    """Refuse a declared margin under which half or twice ``printed`` would match, unless the
    printing itself is that coarse (then no margin could tell them apart, and the row must say so).

    Raises
    ------
    ValueError
        ``margin`` reaches half of ``printed`` while the printing's own resolution does not.
    """
    if margin >= abs(printed) / 2 > printed_resolution(printed):
        raise ValueError(f"margin +-{margin:g} ({reason}) would let half or twice the printed {printed:g} match; "
                         f"the printing resolves +-{printed_resolution(printed):g}")


@dataclass(frozen=True)
class Match:
    """A measured value against a printed number (:func:`~sbpbench.papers.comparisons.equivalence`).

    ``margin``: the paper's printed precision, or a declared margin, with ``reason``; ``exact``:
    the value is not a random draw (one run decides). ``other``: a second solver's runs, whose
    mean is subtracted (``printed`` the difference expected), the margin then at least
    ``relative`` times that mean. A run short of a target (a censored value: a lower bound of its
    cost) is left out, and the comparison waits for runs that reach it: it is inconclusive until
    they all do, unless the runs that reach it lie above the margin and so do all runs counted at
    their lower bounds: the censored runs can then only move the estimate further from the
    printed number, and the row differs. ``timed``: the value is read at a time set by another
    solver's seconds, which must come from the same session of runs (:func:`same_session`).
    """

    reader: Reader
    printed: float
    margin: float
    reason: str
    exact: bool = False
    other: Reader | None = None
    relative: float = 0.0
    timed: bool = False

    def __post_init__(self) -> None:
        if self.other is None and self.printed and not self.exact:
            check_margin(self.printed, self.margin, self.reason)

    def decide(self, found: Sequence[ExperimentResult]) -> tuple[cmp.Evidence, str]:
        runs = self.reader.read(found)
        others = self.other.read(found) if self.other is not None else None
        margin = max(self.margin, self.relative * abs(float(np.mean(others.values)))) if others else self.margin
        one = others is None and not replicated(runs, self.reader)  # a deterministic solver's run, repeated
        values = runs.values[runs.reached][:1] if one else runs.values[runs.reached]
        evidence = cmp.equivalence(values, self.printed, margin, self.exact or one,
                                   None if others is None else others.values, runs.bounds)
        censored = ""
        if not runs.reached.all() and evidence.outcome != "inconclusive":
            at_bounds = cmp.equivalence(runs.values, self.printed, margin, self.exact or one, None, runs.bounds)
            if others is None and evidence.interval[0] > margin and at_bounds.interval[0] > margin:
                # a censored run's cost is a lower bound of its cost to the target: counted at any
                # higher value it can only move the estimate further above the printed number
                censored = (f"; the {int((~runs.reached).sum())} runs short of the target can only raise the "
                            f"estimate: counted at their lower bounds, {at_bounds.text()}")
            else:
                evidence = cmp.Evidence(evidence.test, evidence.statistic, evidence.estimate, evidence.interval,
                                        evidence.n, "inconclusive", None, evidence.fmt)
        shown = [runs] if others is None else [runs, others]
        measured = f"{_measured(shown, evidence)}{censored}; margin: {self.reason}"
        return same_session(evidence, measured, found[0], self.solvers()) if self.timed else (evidence, measured)

    def solvers(self) -> tuple[str, ...]:
        return _solvers(self.reader, *(() if self.other is None else (self.other,)))


@dataclass(frozen=True)
class Rank:
    """``fast`` reaches the target at a lower cost than ``slow``, runs short of it censored
    (:func:`~sbpbench.papers.comparisons.ranking`). ``timed``: the costs are seconds, which must
    come from one session of runs (:func:`same_session`)."""

    fast: Reader
    slow: Reader
    timed: bool = False

    def decide(self, found: Sequence[ExperimentResult]) -> tuple[cmp.Evidence, str]:
        a, b = self.fast.read(found), self.slow.read(found)
        evidence = cmp.ranking(a.values, a.reached, b.values, b.reached)
        if self.timed:
            return same_session(evidence, _measured([a, b], evidence), found[0], self.solvers())
        return evidence, _measured([a, b], evidence)

    def solvers(self) -> tuple[str, ...]:
        return _solvers(self.fast, self.slow)


@dataclass(frozen=True)
class Exceeds:
    """mean(a) - mean(b) above ``least``, the least difference that counts, with ``reason``
    (:func:`~sbpbench.papers.comparisons.exceeds`); ``b`` None: mean(a) alone."""

    a: Reader
    b: Reader | None
    least: float
    reason: str
    statistic: str

    def decide(self, found: Sequence[ExperimentResult]) -> tuple[cmp.Evidence, str]:
        a = self.a.read(found)
        b = self.b.read(found) if self.b is not None else None
        evidence = cmp.exceeds(a.values, None if b is None else b.values, self.least, self.statistic)
        return evidence, f"{_measured([a] if b is None else [a, b], evidence)}; least difference: {self.reason}"

    def solvers(self) -> tuple[str, ...]:
        return _solvers(self.a, *(() if self.b is None else (self.b,)))


@dataclass(frozen=True)
class Fraction:
    """The fraction of runs at the target against the fraction ``implied`` by the paper, with
    ``reason`` (:func:`~sbpbench.papers.comparisons.reach_fraction`)."""

    reader: Reader
    implied: float
    reason: str

    def decide(self, found: Sequence[ExperimentResult]) -> tuple[cmp.Evidence, str]:
        runs = self.reader.read(found)
        evidence = cmp.reach_fraction(runs.reached, self.implied, replicated(runs, self.reader, by_values=False))
        return evidence, f"{_measured([runs], evidence)}; {self.reason}"

    def solvers(self) -> tuple[str, ...]:
        return _solvers(self.reader)


@dataclass(frozen=True)
class Ratio:
    """The product of the readers' mean values, each to its power, above ``threshold``, declared
    with ``reason`` (:func:`~sbpbench.papers.comparisons.log_ratio`)."""

    groups: tuple[tuple[Reader, float], ...]
    threshold: float
    reason: str
    statistic: str

    def decide(self, found: Sequence[ExperimentResult]) -> tuple[cmp.Evidence, str]:
        runs = [(reader.read(found), power) for reader, power in self.groups]
        evidence = cmp.log_ratio([(r.values, power) for r, power in runs], self.threshold, self.statistic)
        return evidence, f"{_measured([r for r, _ in runs], evidence)}; threshold: {self.reason}"

    def solvers(self) -> tuple[str, ...]:
        return _solvers(*(reader for reader, _ in self.groups))


class Curves(Protocol):
    """Takes each run's checkpoints over a window, as (x, y) pairs, from the results."""

    @property
    def solvers(self) -> tuple[str, ...]:
        """The solvers (``solver_name``) it reads."""
        ...

    def read(self, found: Sequence[ExperimentResult]) -> tuple[list[np.ndarray], list[np.ndarray], str]:
        """Per run, x and y over the window, and what they are as text."""
        ...


@dataclass(frozen=True)
class Trend:
    """A value rises (``sign`` +1) or falls (-1) over a window, by more than the slope ``least``
    with ``reason`` (:func:`~sbpbench.papers.comparisons.trend`)."""

    curves: Curves
    sign: int
    least: float
    reason: str

    def decide(self, found: Sequence[ExperimentResult]) -> tuple[cmp.Evidence, str]:
        xs, ys, label = self.curves.read(found)
        word = "rise" if self.sign > 0 else "fall"
        evidence = cmp.trend(xs, ys, self.sign, self.least, f"{word} per unit, {label}")
        return evidence, f"{evidence.text()}; least slope: {self.reason}"

    def solvers(self) -> tuple[str, ...]:
        return self.curves.solvers


@dataclass(frozen=True)
class AllOf:
    """Every part must hold: supports when all do, contradicts when one contradicts, else
    inconclusive (with the most runs a part needs)."""

    parts: tuple[Question, ...]

    def decide(self, found: Sequence[ExperimentResult]) -> tuple[cmp.Evidence, str]:
        decided = [part.decide(found) for part in self.parts]
        outcomes = [evidence.outcome for evidence, _ in decided]
        outcome: cmp.Outcome = ("contradicts" if "contradicts" in outcomes
                                else "supports" if all(o == "supports" for o in outcomes) else "inconclusive")
        open_parts = [evidence for evidence, _ in decided if evidence.outcome == "inconclusive"]
        needed = None
        if outcome == "inconclusive" and all(e.runs_needed is not None for e in open_parts):
            needed = max(e.runs_needed or 0 for e in open_parts)
        first = decided[0][0]
        combined = cmp.Evidence(f"all of {len(decided)}", first.statistic, first.estimate, first.interval,
                                tuple(min(e.n) for e, _ in decided), outcome, needed, first.fmt)
        text = " ".join(f"({i + 1}) {measured}: {e.outcome}." for i, (e, measured) in enumerate(decided))
        return combined, text

    def solvers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(name for part in self.parts for name in part.solvers()))


@dataclass(frozen=True)
class FinalOf:
    """Each run of the solver labelled ``label`` (``solver_name`` ``name``) in the claim's
    experiment number ``experiment`` (0 its own, 1 its first ``also``): its ``column`` at its last
    checkpoint (e.g. the Pegasos paper's Figure 2 at its end, 10^6 iterations; the epoch at which
    an entry of a sweep stopped)."""

    label: str
    name: str
    column: str = "primal_objective"
    experiment: int = 0

    @property
    def solvers(self) -> tuple[str, ...]:
        return (self.name,)

    def read(self, found: Sequence[ExperimentResult]) -> Runs:
        curves = found[self.experiment].curves
        rows = final_rows(curves[curves["solver"] == self.label])
        values = rows[self.column].to_numpy(dtype=float) if self.column in rows else np.array([])
        return Runs(values, np.ones(len(values), dtype=bool), f"{self.label} final {self.column.replace('_', ' ')}")


# ----------------------------------------------------------------------------- analysis files

T = TypeVar("T")


def read_analysis(res: ExperimentResult, analysis: str, script: str, read: Callable[[Any], T]) -> T | None:
    """What ``read`` takes from the JSON file ``analysis`` (relative to the results root, the folder
    above ``res``'s) that ``scripts/<script>`` wrote; None when there is no such file.

    Raises
    ------
    UserError
        The file is there but is not the script's output (not JSON, or ``read`` meets a missing
        key or a value of the wrong type): one line naming the file and the script.
    """
    path = res.directory.parent / analysis
    if not analysis or not path.is_file():
        return None
    try:
        return read(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{path}: not the output of scripts/{script} ({type(exc).__name__}: {exc}); "
                        "run the script again or delete the file") from None


@dataclass(frozen=True)
class RecordedToTarget:
    """Each run of ``program`` recorded by ``scripts/<script>`` in the JSON file ``analysis``
    (:func:`read_analysis`): its ``cost`` at its first checkpoint at or below the file's target,
    a run that never gets there censored at its last checkpoint's cost (:class:`Rank` ranks
    them). For runs of programs other than ours (an author's program), which no experiment's
    curves hold. ``label``: what the cost is, in words.

    The file's keys: ``target`` ``{"column": C, "at_most": value}`` (and ``what`` it is, for
    the reader of the file: the row names the target) and ``runs``
    ``{program: [run, ...]}``, a run a list of checkpoints in order, each an object with
    ``cost`` and ``C``. Without the file there are no runs, and the label says which script
    writes it; a run without checkpoints is a malformed file.
    """

    analysis: str
    script: str
    program: str
    cost: str
    label: str

    @property
    def solvers(self) -> tuple[str, ...]:
        return ()

    def read(self, found: Sequence[ExperimentResult]) -> Runs:
        def take(data: Any) -> Runs:
            column, at_most = str(data["target"]["column"]), float(data["target"]["at_most"])
            values, reached = [], []
            for k, run in enumerate(data["runs"][self.program]):
                if not isinstance(run, list) or not run:
                    raise ValueError(f"run {k + 1} of {self.program!r} is not a non-empty list of checkpoints")
                hit = [float(point[self.cost]) for point in run if float(point[column]) <= at_most]
                reached.append(bool(hit))
                values.append(hit[0] if hit else float(run[-1][self.cost]))
            return Runs(np.array(values, dtype=float), np.array(reached, dtype=bool),
                        f"{self.label} to {column} <= {at_most:.4g} ({self.analysis})")
        runs = read_analysis(found[0], self.analysis, self.script, take)
        if runs is None:
            return Runs(np.array([]), np.array([], dtype=bool),
                        f"{self.label}: no {self.analysis} under the results (scripts/{self.script} writes it)")
        return runs


# ----------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class Setting:
    """A setting as run: its values (one per run, solver or entry) and what they are, as text."""

    values: tuple[Any, ...]
    text: str


class SettingReader(Protocol):
    """Takes a setting as run from the results of a row's experiment."""

    def read(self, found: Sequence[ExperimentResult]) -> Setting:
        """The values as run."""
        ...


@dataclass(frozen=True)
class Equal:
    """A setting as run against the paper's ``expected`` (:func:`~sbpbench.papers.comparisons.identical`):
    every value the reader takes equal to it, numbers within ``rel_tol`` (relative) or ``within``
    (absolute), a tolerance declared with ``reason``."""

    reader: SettingReader
    expected: Any
    rel_tol: float = 0.0
    within: float = 0.0
    reason: str = ""

    def decide(self, found: Sequence[ExperimentResult]) -> tuple[cmp.Evidence, str]:
        setting = self.reader.read(found)
        evidence = cmp.identical(setting.values, self.expected, self.rel_tol, self.within)
        return evidence, "; ".join([setting.text, evidence.text(), *([f"tolerance: {self.reason}"] if self.reason
                                                                     else [])])

    def solvers(self) -> tuple[str, ...]:
        return ()


@dataclass(frozen=True)
class Resolved:
    """A value of the run's meta.json ``resolved`` tree at ``paths`` (dotted; a missing one is refused
    in one line, :func:`~sbpbench.results.lookup.resolved`): one path's value, or of several
    their ``sum``, ``product`` (lambda times n) or ``tuple``."""

    paths: tuple[str, ...]
    combine: Literal["sum", "product", "tuple"] = "tuple"

    def read(self, found: Sequence[ExperimentResult]) -> Setting:
        values = [resolved(found[0], path) for path in self.paths]
        if len(values) == 1:
            value: Any = values[0]
        elif self.combine == "tuple":
            value = tuple(values)
        else:
            value = float(np.sum(values) if self.combine == "sum" else np.prod(values))
        shown = " / ".join(map(_show, values)) if len(values) > 1 and self.combine == "tuple" else _show(value)
        word = {"sum": " + ", "product": " x "}.get(self.combine, ", ")
        return Setting((value,), f"{word.join(self.paths)} = {shown}")


def _show(value: Any) -> str:
    """A value as run, as text (a float to 6 significant digits)."""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _entries(res: ExperimentResult, solvers: tuple[str, ...], where: Literal["config", "resolved"]) -> list[Any]:
    """The solver entries of ``solvers`` (all, when empty) in the run's config (the entries without a
    label: the solvers as the table runs them) or in its resolved solvers (but the ``optimum``)."""
    if where == "config":
        entries = [e for e in (res.meta.get("config") or {}).get("solvers", []) if isinstance(e, dict)
                   and "label" not in e]
    else:
        entries = [e for e in res.meta.get("resolved", {}).get("solvers", []) if e.get("label") != "optimum"]
    return [e for e in entries if not solvers or e.get("name") in solvers]


@dataclass(frozen=True)
class ConfigParam:
    """The value of ``key`` the run's config gives each of ``solvers`` (its entry without a label;
    ``default``: the solver's own default when the config gives none; a solver without an entry
    reads None, which equals no setting)."""

    solvers: tuple[str, ...]
    key: str
    default: Any = None

    def read(self, found: Sequence[ExperimentResult]) -> Setting:
        entries = {e["name"]: e for e in _entries(found[0], self.solvers, "config")}
        values = tuple(entries[s].get(self.key, self.default) if s in entries else None for s in self.solvers)
        return Setting(values, ", ".join(f"{s} {self.key} = {_show(v)}"
                                         for s, v in zip(self.solvers, values, strict=True)))


@dataclass(frozen=True)
class RunParam:
    """The parameter ``key`` each solver entry of ``solvers`` (every solver, when empty) ran with: its
    meta.json resolved parameters, defaults included (None where it has none)."""

    solvers: tuple[str, ...]
    key: str

    def read(self, found: Sequence[ExperimentResult]) -> Setting:
        entries = _entries(found[0], self.solvers, "resolved")
        named = {e["name"] for e in entries}
        values = tuple(e.get("params", {}).get(self.key) for e in entries) + tuple(
            None for s in self.solvers if s not in named)
        shown = [f"{e.get('label', e['name'])} {_show(e.get('params', {}).get(self.key))}" for e in entries]
        shown += [f"{s} not run" for s in self.solvers if s not in named]
        return Setting(values, f"{self.key}: {', '.join(shown) or 'no solver'}")


@dataclass(frozen=True)
class RunsPerSolver:
    """The number of runs of each solver (``solver_name``) in the run's curves."""

    def read(self, found: Sequence[ExperimentResult]) -> Setting:
        runs = found[0].curves.groupby("solver_name")["run"].nunique()
        return Setting(tuple(int(v) for v in runs), "runs: " + ", ".join(f"{k} {v}" for k, v in runs.items()))


@dataclass(frozen=True)
class Ends:
    """``column`` at the last checkpoint of the runs of ``solvers`` (``solver_name``; every solver,
    when empty): per solver the mean over its runs (``per`` ``solver``: each solver's epochs), or
    every run's own (``run``)."""

    column: str
    solvers: tuple[str, ...] = ()
    per: Literal["solver", "run"] = "solver"

    def read(self, found: Sequence[ExperimentResult]) -> Setting:
        curves = found[0].curves
        names = self.solvers or tuple(dict.fromkeys(curves["solver_name"]))
        ends = {name: final_rows(curves[curves["solver_name"] == name])[self.column].to_numpy(float)
                for name in names}
        if self.per == "run":
            values = tuple(float(v) for end in ends.values() for v in end)
            shown = (f"{min(values):,.6g}" if min(values) == max(values) else f"{min(values):,.6g} to "
                     f"{max(values):,.6g}") if values else "no run"
            return Setting(values, f"{self.column} at every run's end: {shown}")
        means = {name: float(end.mean()) if len(end) else None for name, end in ends.items()}
        return Setting(tuple(means.values()), f"{self.column} at the runs' ends (mean): "
                       + ", ".join(f"{k} {'-' if v is None else format(v, '.4g')}" for k, v in means.items()))

"""Regression check of result curves against committed reference curves.

A reference is a copy of a run folder (``curves.csv`` and ``meta.json``) under
``results/reference/<name>/``. :func:`compare` matches the new curves to it solver by
solver and checkpoint by checkpoint, and fails on any departure beyond a band, better or
worse alike (a "better" value is a changed solver too; regenerate the reference deliberately
with ``sbpbench check --update``):

* every solver of the reference must be there with as many runs at every checkpoint (a
  deterministic solver's identical runs count as one: its entry runs once unless repeated), and
  every run must stop where the reference's did (``iteration`` at its last checkpoint);
* the work done, :data:`WORK` (``iteration``, ``kernel_evals``, ``kernel_evals_computed``), must be
  identical at every checkpoint (means over runs): counts fixed by the seeds, with no spread
  from one run of the same seed to the next, so their band is zero;
* the measured columns, :data:`MEASURED` (``test_error``, ``objective``, ``primal_objective``,
  ``dual_objective``; means over runs), must stay within a band around the reference mean at
  every checkpoint: ``z`` times the reference's standard deviation over its runs (their
  seeds) at that checkpoint, but at least a floor: 0.5 percentage point for the test error
  (:data:`TEST_ERROR_FLOOR`), 0.1% of the reference's magnitude for an objective
  (:data:`OBJECTIVE_FLOOR`), so that a column with no spread over seeds (a deterministic
  solver's) has a band of its rounding, not of zero;
* a value missing (NaN) where the reference has a number is a departure (worse); nothing is
  compared where the reference has no number.

Each departure says which way it goes (:attr:`Deviation.verdict`): ``worse`` or ``better`` for
the measured columns (a lower test error, or a better objective in the solver's sense, is
better), ``differs`` for the work and the structure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from sbpbench.errors import UserError
from sbpbench.files import atomic_write
from sbpbench.outputs.notation import formatted
from sbpbench.results.agreement import resolved_difference
from sbpbench.results.curves import final_rows
from sbpbench.results.lookup import newest_runs
from sbpbench.results.store import read_curves, read_meta, solver_trait
from sbpbench.solvers import SOLVERS

#: Band width in reference standard deviations.
Z = 3.0
#: Smallest band for the test error (absolute, a fraction: 0.005 = half a percentage point).
TEST_ERROR_FLOOR = 0.005
#: Smallest band for an objective (relative to its magnitude).
OBJECTIVE_FLOOR = 1e-3
#: Counted work, compared exactly at every checkpoint.
WORK = ("iteration", "kernel_evals", "kernel_evals_computed")
#: Measured columns and the floor of their band: ``(floor, relative)``; ``relative`` floors are
#: fractions of the reference value's magnitude.
MEASURED = {"test_error": (TEST_ERROR_FLOOR, False), "objective": (OBJECTIVE_FLOOR, True),
            "primal_objective": (OBJECTIVE_FLOOR, True), "dual_objective": (OBJECTIVE_FLOOR, True)}


@dataclass
class Deviation:
    """One checkpoint of one solver outside its band (or a structural mismatch).

    ``verdict`` is ``"worse"``, ``"better"`` (a measured column, in its sense) or ``"differs"``
    (work or structure); every deviation fails the check.
    """

    solver: str
    checkpoint: int
    column: str
    reference: float
    value: float
    band: float
    verdict: str

    def line(self) -> str:
        """One row of the report table."""
        return (f"{self.solver:<20} {self.checkpoint:>10} {self.column:<21} {self.reference:>13.6g} "
                f"{formatted(self.value, '>13.6g')} {formatted(self.value - self.reference, '>+12.4g')} "
                f"{self.band:>10.3g}  {self.verdict.upper()}")


HEADER = (f"{'solver':<20} {'checkpoint':>10} {'column':<21} {'reference':>13} {'new':>13} "
          f"{'difference':>12} {'band':>10}  verdict")


def _senses(reference: pd.DataFrame, solver: str) -> dict[str, int]:
    """Per measured column, +1 when a larger value is better, -1 when a smaller one is.

    ``objective`` in the solver's sense (larger is better when its ``maximizes_objective`` is set);
    the test error and the primal objective are minimized, the dual objective maximized.
    """
    maximizes = solver_trait(reference[reference["solver"] == solver], "maximizes_objective")
    return {"test_error": -1, "objective": 1 if maximizes else -1, "primal_objective": -1, "dual_objective": 1}


def compare(new: pd.DataFrame, reference: pd.DataFrame, z: float = Z) -> list[Deviation]:
    """Compare new curves with reference curves.

    Parameters
    ----------
    new, reference : pandas.DataFrame
        Rows of ``curves.csv`` files.
    z : float
        Band width in reference standard deviations over seeds.

    Returns
    -------
    list of Deviation
        Everything outside its band (module docstring), better or worse; structural mismatches
        (a missing solver or run, other checkpoints, another stopping point) and any difference
        in the work done are ``differs``.
    """
    deviations: list[Deviation] = []
    for solver, ref in reference.groupby("solver", sort=False):
        got = new[new["solver"] == solver]
        if got.empty:
            deviations.append(Deviation(solver, -1, "missing solver", 1, 0, 0, "differs"))
            continue
        ref_mean = _means(ref)
        ref_std = ref.groupby("checkpoint").std(ddof=0, numeric_only=True).fillna(0.0)
        got_mean = _means(got)
        if len(got_mean) != len(ref_mean):
            deviations.append(Deviation(solver, -1, "checkpoints", len(ref_mean), len(got_mean), 0, "differs"))
        deviations += _missing_runs(solver, ref, got)
        deviations += _stopping_points(solver, ref, got)
        senses = _senses(reference, solver)
        for cp in ref_mean.index.intersection(got_mean.index):
            r, g, s = ref_mean.loc[cp], got_mean.loc[cp], ref_std.loc[cp]
            for column in WORK:
                if column in r:
                    deviations += _outside(solver, int(cp), column, r[column], g.get(column, math.nan), 0.0, 0)
            for column, (floor, relative) in MEASURED.items():
                if column in r:
                    least = floor * abs(r[column]) if relative else floor
                    band = max(z * s[column], least)
                    deviations += _outside(solver, int(cp), column, r[column], g.get(column, math.nan), band,
                                           senses[column])
    return deviations


def _means(frame: pd.DataFrame) -> pd.DataFrame:
    """Per checkpoint, the mean over runs of every numeric column; NaN where a run has NaN."""
    numeric = frame.select_dtypes("number").drop(columns="checkpoint")
    checkpoint = frame["checkpoint"]
    return numeric.groupby(checkpoint).mean().mask(numeric.isna().groupby(checkpoint).any())


def _missing_runs(solver: str, ref: pd.DataFrame, got: pd.DataFrame) -> list[Deviation]:
    """A deviation at the first checkpoint where ``got`` has another number of runs than ``ref``.

    A deterministic solver's runs are one run however many times it was repeated
    (:meth:`~sbpbench.experiment.config.Experiment.runs_of`): only whether it has one is compared.
    """
    ref_runs = ref.groupby("checkpoint")["run"].nunique()
    got_runs = got.groupby("checkpoint")["run"].nunique().reindex(ref_runs.index, fill_value=0)
    if getattr(SOLVERS.get(str(ref["solver_name"].iloc[0])), "deterministic", False):
        ref_runs, got_runs = ref_runs.clip(upper=1), got_runs.clip(upper=1)
    differ = ref_runs.index[ref_runs != got_runs]
    if differ.empty:
        return []
    cp = differ[0]
    return [Deviation(solver, int(cp), "runs", ref_runs[cp], got_runs[cp], 0.0, "differs")]


def _stopping_points(solver: str, ref: pd.DataFrame, got: pd.DataFrame) -> list[Deviation]:
    """A deviation for each run of ``ref`` that ``got`` has but ends at another iteration (its
    last checkpoint's), at the reference's last checkpoint of that run."""
    ends = final_rows(ref)[["run", "checkpoint", "iteration"]].merge(
        final_rows(got)[["run", "iteration"]], on="run", suffixes=("", "_new"))
    moved = ends[ends["iteration"] != ends["iteration_new"]]
    return [Deviation(solver, int(row.checkpoint), f"stop (run {row.run})", float(row.iteration),
                      float(row.iteration_new), 0.0, "differs") for row in moved.itertuples()]


def _outside(solver: str, cp: int, column: str, ref: float, value: float, band: float, sense: int) -> list[Deviation]:
    """The deviation of ``value`` from ``ref`` when it leaves the band (NaN: worse), else none.

    Nothing is compared where ``ref`` is NaN. ``sense`` is +1 when larger values are better,
    -1 when smaller ones are, 0 when neither is (a difference ``differs``).
    """
    if math.isnan(ref):
        return []
    if math.isnan(value):
        return [Deviation(solver, cp, column, ref, value, band, "worse")]
    diff = value - ref
    if abs(diff) <= band:
        return []
    verdict = "differs" if sense == 0 else "better" if sense * diff > 0 else "worse"
    return [Deviation(solver, cp, column, ref, value, band, verdict)]


def _run_folder(path: Path) -> Path:
    runs = newest_runs(path)
    if len(runs) != 1:
        raise UserError(f"{path}: expected one run folder (with meta.json and a checkpoint), found {len(runs)}")
    return runs[0]


def summary(deviations: list[Deviation]) -> str:
    """How many deviations, and how many of each verdict: ``"3 outside their bands (1 worse, 2 better, 0 differ)"``."""
    count = {verdict: sum(d.verdict == verdict for d in deviations) for verdict in ("worse", "better", "differs")}
    return (f"{len(deviations)} outside their bands ({count['worse']} worse, {count['better']} better, "
            f"{count['differs']} differ)")


def check(results: Path, reference: Path, update: bool = False, z: float = Z) -> tuple[bool, str]:
    """Check a run against a reference, or replace the reference with it.

    Parameters
    ----------
    results : pathlib.Path
        A run folder, or an experiment folder (its newest run is used).
    reference : pathlib.Path
        The reference folder (``results/reference/<name>``).
    update : bool
        Copy the run's ``curves.csv`` and ``meta.json`` into ``reference`` instead of checking.
    z : float
        Band width in reference standard deviations.

    Returns
    -------
    ok : bool
        False when any checkpoint leaves its band, better or worse (:func:`compare`).
    report : str
        A readable table.
    """
    run = _run_folder(results)
    if update:
        reference.mkdir(parents=True, exist_ok=True)
        for name in ("curves.csv", "meta.json"):
            atomic_write(reference / name, (run / name).read_bytes())
        return True, f"reference {reference} updated from {run}"
    if not (reference / "curves.csv").is_file():
        raise UserError(f"{reference}: no reference curves.csv (create one with --update)")
    ref_meta = read_meta(reference) if (reference / "meta.json").exists() else {}
    new_meta = read_meta(run) if (run / "meta.json").exists() else {}
    ref_resolved, new_resolved = ref_meta.get("resolved"), new_meta.get("resolved")
    if ref_resolved and new_resolved and (difference := resolved_difference(ref_resolved, new_resolved)):
        raise UserError(f"{run}: not the reference's configuration: "
                        f"{difference.describe('the reference', 'the run')}")
    deviations = compare(read_curves(run, traits=True), read_curves(reference / "curves.csv", traits=True), z)
    lines = [f"{run} against {reference}: {summary(deviations)}"]
    if deviations:
        lines += [HEADER] + [d.line() for d in deviations]
    return not deviations, "\n".join(lines)

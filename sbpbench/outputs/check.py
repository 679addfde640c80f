"""Regression check of result curves against committed reference curves.

A reference is a copy of a run folder (``curves.csv`` and ``meta.json``) under
``results/reference/<name>/``. :func:`compare` matches the new curves to it solver by
solver and checkpoint by checkpoint:

* every solver of the reference must be there with as many runs at every checkpoint;
* the work done must be identical: ``kernel_evals`` (or ``iteration`` for solvers that do
  not count kernel evaluations) at every checkpoint, and the number of checkpoints;
* ``test_error`` and ``objective`` (means over runs) must stay within a band around the
  reference mean: ``z`` times the reference's standard deviation over seeds at that
  checkpoint, but at least an absolute floor (test error) or a relative floor (objective);
  a value missing (NaN) where the reference has a number is worse.

Only a worse value fails: a lower test error, or a better objective, is reported as an
improvement (regenerate the reference deliberately with ``sbpbench check --update``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from sbpbench.errors import UserError
from sbpbench.files import atomic_write
from sbpbench.results.lookup import newest_runs
from sbpbench.results.store import comparable, read_curves, read_meta, solver_trait

#: Band width in reference standard deviations.
Z = 3.0
#: Smallest band for the test error (absolute, a fraction: 0.005 = half a percentage point).
TEST_ERROR_FLOOR = 0.005
#: Smallest band for the objective (relative to its magnitude).
OBJECTIVE_FLOOR = 1e-3


@dataclass
class Deviation:
    """One checkpoint of one solver outside its band (or a structural mismatch)."""

    solver: str
    checkpoint: int
    column: str
    reference: float
    value: float
    band: float
    worse: bool

    def line(self) -> str:
        """One row of the report table."""
        sign = "WORSE" if self.worse else "better"
        return (f"{self.solver:<20} {self.checkpoint:>10} {self.column:<15} {self.reference:>13.6g} "
                f"{self.value:>13.6g} {self.value - self.reference:>+12.4g} {self.band:>10.3g}  {sign}")


HEADER = (f"{'solver':<20} {'checkpoint':>10} {'column':<15} {'reference':>13} {'new':>13} "
          f"{'difference':>12} {'band':>10}  verdict")


def _objective_sense(reference: pd.DataFrame, solver: str) -> int:
    """+1 when a larger objective is better (a solver whose ``maximizes_objective`` is set), -1 otherwise."""
    return 1 if solver_trait(reference[reference["solver"] == solver], "maximizes_objective") else -1


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
        Everything outside its band; structural mismatches (a missing solver, different
        checkpoints or kernel evaluations) have ``worse`` set.
    """
    deviations: list[Deviation] = []
    for solver, ref in reference.groupby("solver", sort=False):
        got = new[new["solver"] == solver]
        if got.empty:
            deviations.append(Deviation(solver, -1, "missing solver", 1, 0, 0, True))
            continue
        ref_mean = _means(ref)
        ref_std = ref.groupby("checkpoint").std(ddof=0, numeric_only=True).fillna(0.0)
        got_mean = _means(got)
        if len(got_mean) != len(ref_mean):
            deviations.append(Deviation(solver, -1, "checkpoints", len(ref_mean), len(got_mean), 0, True))
        deviations += _missing_runs(solver, ref, got)
        work = "kernel_evals" if ref["kernel_evals"].notna().all() else "iteration"
        sense = _objective_sense(reference, solver)
        for cp in ref_mean.index.intersection(got_mean.index):
            r, g, s = ref_mean.loc[cp], got_mean.loc[cp], ref_std.loc[cp]
            if r[work] != g[work]:
                deviations.append(Deviation(solver, int(cp), work, r[work], g[work], 0.0, True))
            band = max(z * s["test_error"], TEST_ERROR_FLOOR)
            deviations += _outside(solver, int(cp), "test_error", r["test_error"], g["test_error"], band, -1)
            if "objective" in r:
                band = max(z * s["objective"], OBJECTIVE_FLOOR * max(abs(r["objective"]), 1e-12))
                deviations += _outside(solver, int(cp), "objective", r["objective"], g["objective"], band, sense)
    return deviations


def _means(frame: pd.DataFrame) -> pd.DataFrame:
    """Per checkpoint, the mean over runs of every numeric column; NaN where a run has NaN."""
    numeric = frame.select_dtypes("number").drop(columns="checkpoint")
    checkpoint = frame["checkpoint"]
    return numeric.groupby(checkpoint).mean().mask(numeric.isna().groupby(checkpoint).any())


def _missing_runs(solver: str, ref: pd.DataFrame, got: pd.DataFrame) -> list[Deviation]:
    """A worse deviation at the first checkpoint where ``got`` has another number of runs than ``ref``."""
    ref_runs = ref.groupby("checkpoint")["run"].nunique()
    got_runs = got.groupby("checkpoint")["run"].nunique().reindex(ref_runs.index, fill_value=0)
    differ = ref_runs.index[ref_runs != got_runs]
    if differ.empty:
        return []
    cp = differ[0]
    return [Deviation(solver, int(cp), "runs", ref_runs[cp], got_runs[cp], 0.0, True)]


def _outside(solver: str, cp: int, column: str, ref: float, value: float, band: float, sense: int) -> list[Deviation]:
    """The deviation of ``value`` from ``ref`` when it leaves the band (NaN: worse), else none.

    Nothing is compared where ``ref`` is NaN. ``sense`` is +1 when larger values are better,
    -1 when smaller ones are.
    """
    if math.isnan(ref):
        return []
    if math.isnan(value):
        return [Deviation(solver, cp, column, ref, value, band, True)]
    diff = value - ref
    if abs(diff) <= band:
        return []
    return [Deviation(solver, cp, column, ref, value, band, sense * diff < 0)]


def _run_folder(path: Path) -> Path:
    runs = newest_runs(path)
    if len(runs) != 1:
        raise UserError(f"{path}: expected one run folder (with meta.json and a checkpoint), found {len(runs)}")
    return runs[0]


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
        False when any checkpoint is worse than its band allows.
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
    ref_resolved, new_resolved = comparable(ref_meta.get("resolved")), comparable(new_meta.get("resolved"))
    if ref_resolved and new_resolved and ref_resolved != new_resolved:
        keys = sorted(k for k in ref_resolved if ref_resolved[k] != new_resolved.get(k))
        raise UserError(f"{run}: resolved configuration differs from the reference's in {', '.join(keys)}")
    deviations = compare(read_curves(run, traits=True), read_curves(reference / "curves.csv", traits=True), z)
    worse = [d for d in deviations if d.worse]
    lines = [f"{run} against {reference}: {len(worse)} worse, {len(deviations) - len(worse)} better"]
    if deviations:
        lines += [HEADER] + [d.line() for d in deviations]
    return not worse, "\n".join(lines)


"""Every verdict the papers declare can fail (issue #14).

For every printed number, claim and row of the SGD tables declared in
:data:`sbpbench.papers.PAPERS`, a synthetic result that contradicts it gets the failing verdict
("differs", "did not hold" or the claim's own failing outcome) and one that supports it the
passing one ("matches", "held"), read from the row the report prints. Synthetic curves are right
here: the point is a result that contradicts the claim, which the committed runs do not give.

:data:`CASES` holds the results, by verdict function; a declared verdict whose function has no
case fails :func:`test_every_declared_verdict_has_a_failing_case`. A verdict that cannot fail on
a result contradicting it is marked ``xfail(strict=True)`` with why: the suite records the defect,
and turns red when the verdict is fixed without the mark being removed.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pytest
import yaml

from sbpbench import papers
from sbpbench.papers import pegasos, sbp, sgd
from sbpbench.papers.declarations import Claim, Claims, ClaimsOn, NotReproduced, Numbers, Printed, Results
from sbpbench.results.store import curves_frame

# ----------------------------------------------------------------------------- synthetic results


class Synthetic(NamedTuple):
    """The curves and meta.json of a synthetic run folder."""

    curves: pd.DataFrame
    meta: dict[str, Any]


def curve(label: str, *runs: Mapping[str, Sequence[float]], name: str = "",
          params: str = "") -> list[dict[str, Any]]:
    """``curves.csv`` rows of one solver (``solver_name`` ``name``, else ``label``): one run per
    mapping of column -> its values at the run's checkpoints. Not given: ``iteration`` 1, 2, ...;
    ``kernel_evals`` and ``train_time_s`` equal to ``iteration``; the other columns empty."""
    rows = []
    for run, columns in enumerate(runs):
        for i in range(len(next(iter(columns.values())))):
            row: dict[str, Any] = {"dataset": "synthetic", "solver": label, "solver_name": name or label,
                                   "params": params, "seed": 0, "run": run, "checkpoint": i, "iteration": i + 1,
                                   "status": "budget", **{column: float(v[i]) for column, v in columns.items()}}
            row.setdefault("kernel_evals", row["iteration"])
            row.setdefault("train_time_s", row["iteration"])
            rows.append(row)
    return rows


def _meta(n_train: int = 1000, problem: Mapping[str, Any] | None = None,
          config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {"config": dict(config or {}),
            "resolved": {"dataset": {"n_train": n_train, "n_test": 10000}, "problem": dict(problem or {})}}


def synthetic(*curves: list[dict[str, Any]], meta: dict[str, Any] | None = None) -> Synthetic:
    """The results of the solvers ``curves`` (rows of :func:`curve`)."""
    return Synthetic(curves_frame([row for rows in curves for row in rows]), meta or _meta())


def _write(root: Path, experiment: str, result: Synthetic | Mapping[str, Synthetic]) -> Results:
    """``result`` as the committed results of ``experiment`` under ``root``, read as the report
    reads them; a mapping gives the results of several experiments by name."""
    for name, one in (result.items() if isinstance(result, Mapping) else [(experiment, result)]):
        folder = root / name
        folder.mkdir(parents=True)
        one.curves.assign(experiment=name).to_csv(folder / "curves.csv", index=False)
        (folder / "meta.json").write_text(json.dumps({"experiment": name, **one.meta}))
    return Results(root, {}, {})


# ----------------------------------------------------------------------------- the cases

#: The arguments a declaration gives its verdict function (a partial's keywords), as a builder gets them.
Params = Mapping[str, Any]
Build = Callable[[Params], Synthetic | Mapping[str, Synthetic]]


@dataclass(frozen=True)
class Contradiction:
    """A result contradicting a claim or a printed number.

    ``cannot_fail``: why the verdict does not fail on it (an xfail reason); ``applies``: to
    which declarations of the function it applies.
    """

    what: str
    build: Build
    cannot_fail: str = ""
    applies: Callable[[Params], bool] = lambda params: True


@dataclass(frozen=True)
class Case:
    """The results for one verdict function: one supporting its claim, and contradicting ones.

    ``cannot_pass``: why the verdict does not pass on the supporting result (an xfail reason).
    """

    support: Build
    contradictions: tuple[Contradiction, ...]
    cannot_pass: str = ""


def _cannot_fail(why: str) -> str:
    return f"verdict cannot fail: {why}, issue #14"


# --- SBP paper, Table 2: nu

_OPTIMUM = {"mean_hinge": 0.1, "duality_gap": 1e-9, "norm": 10.0, "seconds": 1.0}  # resolved: hinge >> gap


def _nu(nu: float, params: Params, optimum: Mapping[str, float] = _OPTIMUM) -> Synthetic:
    """An experiment whose nu was derived from lambda (at an exact optimum) as ``nu``."""
    meta = _meta(params["paper_n"], {"nu": nu, "optimum": dict(optimum)}, {"problem": {"nu": "from_lambda"}})
    return synthetic(curve("sbp", {"test_error": [0.2, 0.1]}), meta=meta)


def _unresolved(printed: float) -> Synthetic:
    """nu below the optimizer's resolution (mean hinge loss equal to the duality gap), whose bound
    10 gap / ||w|| is a hundredth of the printed value."""
    gap = printed / 100
    return _nu(printed / 1000, {"paper_n": 1000}, {"mean_hinge": gap, "duality_gap": gap, "norm": 10.0})


# --- SBP paper, Section 5: LIBSVM (its final fit takes 100 s) and SBP against training time

SBP_SECONDS = [1, 10, 20, 50, 100]  # a quarter of LIBSVM's time: 25 s


def _section5(libsvm_error: float, sbp_errors: Sequence[float]) -> Synthetic:
    """LIBSVM ending at ``libsvm_error`` (%) in 100 s; SBP's errors (%) at :data:`SBP_SECONDS`."""
    libsvm = curve("libsvm", {"test_error": [0.3, libsvm_error / 100], "train_time_s": [20, 150],
                              "fit_time_s": [10, 100]})
    sbp_run = curve("sbp", {"test_error": [e / 100 for e in sbp_errors], "train_time_s": SBP_SECONDS})
    return synthetic(libsvm, sbp_run)


def _sbp_reaching(level: float, at_seconds: float) -> list[float]:
    """SBP's errors (%): above ``level`` until ``at_seconds``, then at it."""
    return [level + 5 if t < 10 else level + 0.5 if t < at_seconds else level for t in SBP_SECONDS]


# --- SBP paper, Figure 2: test error against kernel evaluations

KERNEL_EVALS = [1e2, 1e3, 1e4, 1e5, 1e6]
FALLING = [0.4, 0.3, 0.2, 0.15, 0.1]


def _errors(runs: int = 2, **errors: Sequence[float]) -> Synthetic:
    """``runs`` equal runs per solver, its test errors at :data:`KERNEL_EVALS`."""
    return synthetic(*(curve(name, *[{"kernel_evals": KERNEL_EVALS, "test_error": e}] * runs)
                       for name, e in errors.items()))


#: The Perceptron's and SBP's checkpoints, in epochs: a first epoch ends at 1e4 kernel evaluations.
EPOCHS = [0.1, 0.5, 1, 2, 3, 10, 50, 100]
#: SBP improving after its first epoch (20%) to 15%.
SBP_IMPROVING = [0.3, 0.25, 0.2, 0.18, 0.17, 0.16, 0.15, 0.15]
#: Three runs differ by these offsets to every error.
OFFSETS = (-0.005, 0.0, 0.005)


def _runs(errors: Sequence[Sequence[float]]) -> list[dict[str, list[float]]]:
    """Runs with test errors ``errors`` (one sequence per run) at :data:`EPOCHS`."""
    return [{"epoch": EPOCHS, "kernel_evals": [1e4 * e for e in EPOCHS], "test_error": list(run)} for run in errors]


def _perceptron(errors: Sequence[float], sbp_errors: Sequence[float] = SBP_IMPROVING) -> Synthetic:
    """Three runs each of the Perceptron and SBP, their test errors ``errors`` and ``sbp_errors``
    at :data:`EPOCHS` plus the run's offset in :data:`OFFSETS`."""
    def three(values: Sequence[float]) -> list[dict[str, list[float]]]:
        return _runs([[v + offset for v in values] for offset in OFFSETS])
    return synthetic(curve("perceptron", *three(errors)), curve("sbp", *three(sbp_errors)))


#: The Perceptron rising above its first-epoch error (20%) after its best (18.5%).
OVERFITTING = [0.4, 0.3, 0.2, 0.19, 0.185, 0.2, 0.22, 0.24]


def _fourier(sbp_errors: Sequence[float], runs: int = 2) -> Synthetic:
    """Random Fourier features ending at 15% at 1e5 inner products, and SBP's errors at
    :data:`KERNEL_EVALS`: ``runs`` equal runs each."""
    four = curve("fourier", *[{"inner_products": [1e3, 1e4, 1e5], "pairs": [16, 128, 1024],
                               "test_error": [0.3, 0.2, 0.15]}] * runs)
    return synthetic(four, curve("sbp", *[{"kernel_evals": KERNEL_EVALS, "test_error": sbp_errors}] * runs))


# --- Pegasos paper, Figure 2: primal objective against iterations

ITERATIONS = [1e2, 1e3, 1e4, 1e5, 1e6]
PEGASOS_PATH = [0.2, 0.07, 0.064, 0.0632, 0.063]
FAILING_ETA = [0.5, 0.4, 0.35, 0.34, 0.33]
AS_FAST_ETA = [0.2, 0.07, 0.0639, 0.0632, 0.0631]  # within 0.001 of Pegasos' final objective where Pegasos is
#: Figure 2 (right) as the paper shows it: a slow eta, one as fast as Pegasos, one that fails.
SOME_ETAS = {"pegasos": PEGASOS_PATH, "sgd eta=0.001": [0.5, 0.3, 0.15, 0.1, 0.08], "sgd eta=0.01": AS_FAST_ETA,
             "sgd eta=10": FAILING_ETA}


def _objectives(paths: Mapping[str, Sequence[float]], runs: int = 2) -> Synthetic:
    """``runs`` equal runs per solver label (``sgd eta=0.01`` is solver ``sgd``), its primal
    objectives at :data:`ITERATIONS`."""
    return synthetic(*(curve(label, *[{"iteration": ITERATIONS, "primal_objective": path}] * runs,
                             name=label.split(" ")[0]) for label, path in paths.items()))


def _norma(pegasos_final: float, norma_final: float, projection_final: float) -> Synthetic:
    """Pegasos, Norma and Norma with projection ending at these objectives."""
    def path(final: float) -> list[float]:
        return [1.0, 0.5, 0.3, 0.2, final]
    return _objectives({"pegasos": path(pegasos_final), "norma": path(norma_final),
                        "norma (projection)": path(projection_final)})


NORMA_SUPPORT = (0.063, 0.167, 0.165)
NORMA_CONTRADICTIONS = {"not converged": ("Norma ends within 10% of Pegasos", (0.063, 0.066, 0.065)),
                        "still ahead": ("Norma with projection ends below Pegasos", (0.063, 0.167, 0.06))}


def _norma_contradiction(which: str) -> Contradiction:
    what, finals = NORMA_CONTRADICTIONS[which]
    return Contradiction(what, lambda params: _norma(*finals), applies=lambda params: params["which"] == which)


#: Figure 2 (left) as the paper draws it: Norma far above Norma with projection at 10^3
#: iterations (issue #29's 5.53 against 0.85), the two level within noise at 10^6.
NORMA_PATH = [20.0, 5.53, 1.0, 0.3, 0.167]
PROJECTED_PATH = [2.0, 0.85, 0.4, 0.2, 0.167]


def _projected(norma: Sequence[float], projection: Sequence[float], runs: int = 2,
               spread: float = 0.0) -> Synthetic:
    """Norma and Norma with projection, their objectives at :data:`ITERATIONS`, ``runs`` runs
    each, run i's objectives times 1 + i ``spread``."""
    return synthetic(*(curve(label, *[{"iteration": ITERATIONS,
                                       "primal_objective": [v * (1 + i * spread) for v in path]}
                                      for i in range(runs)], name="norma")
                       for label, path in (("norma", norma), ("norma (projection)", projection))))


def _test_losses(pegasos_final: float, norma_final: float) -> Synthetic:
    """Pegasos and Norma, two runs each, their test hinge losses ending at these values."""
    return synthetic(*(curve(label, *[{"iteration": ITERATIONS, "test_hinge_loss": [2.0, 1.0, 0.5, 0.2, final]}] * 2)
                       for label, final in (("pegasos", pegasos_final), ("norma", norma_final))))


# --- Pegasos paper, Figure 3: the mini-batch size k

KS = (1, 4, 16, 64, 256)
KT_FRACTIONS = (0.01, 0.1, 1.0)  # checkpoints of the kT-fixed runs: 2560, 25600 and 256000 examples


def _figure3(t_fixed: Callable[[int], float], kt_fixed: Callable[[int], Sequence[float]],
             runs: int = 2) -> Synthetic:
    """Figure 3's runs, ``runs`` equal ones per k: with T = 1000 fixed, the final objective
    ``t_fixed(k)``; with kT = 256000 fixed, the objectives ``kt_fixed(k)`` after the examples
    :data:`KT_FRACTIONS` of kT."""
    curves = [curve(f"T fixed, k={k}", *[{"iteration": [10, 100, 1000], "primal_objective": [1.0, 0.5, t_fixed(k)]}]
                    * runs, name="pegasos", params=f"mini_batch={k}") for k in KS]
    curves += [curve(f"kT fixed, k={k}", *[{"iteration": [f * 256000 / k for f in KT_FRACTIONS],
                                           "primal_objective": kt_fixed(k)}] * runs,
                     name="pegasos", params=f"mini_batch={k}") for k in KS]
    return synthetic(*curves)


def _improving_with_k(k: int) -> float:
    return 0.06 + 0.25 / k


def _same_for_every_k(k: int) -> list[float]:
    return [0.07, 0.064, 0.0635]


# --- Pegasos paper, Table 1: time to within 0.001 of the optimal objective (J_opt = 1)


def _time_to_optimum(pegasos_objectives: Sequence[float]) -> Synthetic:
    """The optimum solver ending at J_opt = 1, and Pegasos' objectives after 1, 2, 3 s."""
    return synthetic(curve("optimum", {"primal_objective": [2.0, 1.0]}, name="dcd"),
                     curve("pegasos", {"primal_objective": pegasos_objectives, "train_time_s": [1, 2, 3]}))


# --- SGD paper, Tables 2-7: epochs to 1% relative accuracy (J_opt = 1)


def _sgd(params: Params, epochs: Sequence[float], rel_acc: Sequence[float]) -> Synthetic:
    """The optimum solver ending at J_opt = 1, and the row's solver at ``epochs`` (times the
    paper's, or of 10 where it prints none) with relative accuracies ``rel_acc``."""
    scale = params["paper_epochs"] or 10
    optimum = curve("optimum", {"epoch": [1, 50], "primal_objective": [1.5, 1.0], "relative_accuracy": [1e-2, 1e-8]},
                    name="dcd")
    solver = params["solver"]
    mine = curve(solver, {"epoch": [scale * e for e in epochs], "primal_objective": [1 + r for r in rel_acc]})
    return synthetic(optimum, mine)


def _budget_is_the_papers(params: Params) -> bool:
    """Whether the config runs the row's solver for the paper's epochs (its budget), as Pegasos and SGD-r."""
    if params["paper_epochs"] is None:
        return False
    config = yaml.safe_load((papers.CONFIGS / f"{sgd.experiment(params['table'], params['dataset'])}.yaml").read_text())
    return any(isinstance(entry, dict) and entry.get("name") == params["solver"]
               and (entry.get("budget") or {}).get("epochs") == params["paper_epochs"] for entry in config["solvers"])


# --- the table

CASES: dict[Callable[..., Any], Case] = {
    sbp._nu: Case(lambda p: _nu(p["printed"], p), (
        Contradiction("nu twice the printed value", lambda p: _nu(2 * p["printed"], p)),
        Contradiction("nu below the optimizer's resolution, the printed value above that bound",
                      lambda p: _unresolved(p["printed"])))),
    sbp._libsvm_row: Case(lambda p: _section5(p["printed"], _sbp_reaching(p["printed"], 20)), (
        Contradiction("LIBSVM's error 1 pp above the printed one",
                      lambda p: _section5(p["printed"] + 1, _sbp_reaching(p["printed"], 20))),)),
    sbp._sbp_row: Case(lambda p: _section5(10, _sbp_reaching(p["printed"], 20)), (
        Contradiction("SBP 0.5 pp above the printed error at 1/4 of LIBSVM's time",
                      lambda p: _section5(10, _sbp_reaching(p["printed"], 50))),)),
    sbp._reaches: Case(lambda p: _section5(10, _sbp_reaching(10 + p["margin"] - 0.01, 20)), (
        Contradiction("SBP reaches LIBSVM's error plus the margin only at half of LIBSVM's time",
                      lambda p: _section5(10, _sbp_reaching(10 + p["margin"] - 0.01, 50))),)),
    sbp._sbp_below: Case(lambda p: _errors(sbp=FALLING, **{p["other"]: [e + 0.05 for e in FALLING]}), (
        Contradiction("SBP above the other solver everywhere",
                      lambda p: _errors(sbp=[e + 0.05 for e in FALLING], **{p["other"]: FALLING})),)),
    sbp._smo_late: Case(lambda p: _errors(sbp=[0.2, 0.105, 0.1, 0.1, 0.1], smo=[0.5, 0.45, 0.5, 0.4, 0.1]), (
        Contradiction("SMO settles early", lambda p: _errors(sbp=[0.2, 0.105, 0.1, 0.1, 0.1],
                                                             smo=[0.3, 0.1, 0.1, 0.1, 0.1])),)),
    sbp._perceptron_close: Case(lambda p: _perceptron(OVERFITTING), (
        Contradiction("the Perceptron 10 pp above SBP after its first epoch",
                      lambda p: _perceptron([0.45, 0.4, 0.3, 0.25, 0.22, 0.2, 0.2, 0.2])),)),
    sbp._perceptron_overfits: Case(lambda p: _perceptron(OVERFITTING), (
        Contradiction("the Perceptron improving to its last epoch",
                      lambda p: _perceptron([0.4, 0.3, 0.2, 0.19, 0.18, 0.17, 0.16, 0.15])),
        Contradiction("the Perceptron dipping, never above its first-epoch error again (issue #14's Adult means)",
                      lambda p: _perceptron([0.4, 0.3, 0.222, 0.205, 0.198, 0.208, 0.194, 0.201])),
    )),
    sbp._sbp_keeps_improving: Case(lambda p: _perceptron(OVERFITTING), (
        Contradiction("SBP flat after its first epoch, the Perceptron ending below it (issue #14's Reuters)",
                      lambda p: _perceptron([0.4, 0.3, 0.2, 0.19, 0.18, 0.17, 0.16, 0.15],
                                            [0.3, 0.25, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2])),
        Contradiction("SBP improving, but the Perceptron ending lower",
                      lambda p: _perceptron([0.4, 0.3, 0.2, 0.18, 0.16, 0.14, 0.13, 0.12])),
        Contradiction("SBP's error rising after its first epoch, still below the Perceptron",
                      lambda p: _perceptron(OVERFITTING, [0.3, 0.25, 0.2, 0.2, 0.21, 0.21, 0.22, 0.22])),
    )),
    sbp._sbp_beats_fourier: Case(lambda p: _fourier([0.3, 0.2, 0.15, 0.1, 0.1]), (
        Contradiction("SBP above the Fourier features at their cost",
                      lambda p: _fourier([0.4, 0.3, 0.25, 0.2, 0.18])),)),
    pegasos._time_to_optimum: Case(
        lambda p: _time_to_optimum([1.5, 1.0005, 1.0002]),
        (Contradiction("Pegasos never within 0.001 of the optimum", lambda p: _time_to_optimum([1.5, 1.2, 1.1])),)),
    pegasos._against_norma: Case(lambda p: _norma(*NORMA_SUPPORT), tuple(map(_norma_contradiction,
                                                                             NORMA_CONTRADICTIONS))),
    pegasos._projection_improves_norma: Case(lambda p: _projected(NORMA_PATH, PROJECTED_PATH), (
        Contradiction("Norma ends lower without projection", lambda p: _projected(NORMA_PATH, NORMA_PATH[:4] + [0.17])),
        Contradiction("the projection higher at 10^3 and 10^4 iterations, lower only at the end",
                      lambda p: _projected(PROJECTED_PATH[:4] + [0.167], NORMA_PATH[:4] + [0.16])),
        Contradiction("the projection no lower anywhere", lambda p: _projected(NORMA_PATH, NORMA_PATH)),
    )),
    pegasos._test_loss_against_norma: Case(lambda p: _test_losses(0.09, 0.12), (
        Contradiction("Norma ends with the lower test loss", lambda p: _test_losses(0.092, 0.088)),)),
    pegasos._some_eta: Case(
        lambda p: _objectives(SOME_ETAS),
        (Contradiction("every eta as fast as Pegasos", lambda p: _objectives(
            {"pegasos": PEGASOS_PATH, "sgd eta=0.01": PEGASOS_PATH, "sgd eta=1": PEGASOS_PATH})),
         Contradiction("no eta converges", lambda p: _objectives(
             {"pegasos": PEGASOS_PATH, "sgd eta=0.01": [0.5, 0.3, 0.2, 0.1, 0.09], "sgd eta=10": FAILING_ETA})),
         Contradiction("the one eta within 0.001 of Pegasos gets there only at its last checkpoint (100x slower)",
                       lambda p: _objectives({"pegasos": PEGASOS_PATH, "sgd eta=0.01": [0.5, 0.3, 0.15, 0.09, 0.0635],
                                              "sgd eta=10": FAILING_ETA})))),
    pegasos._improves_with_k: Case(lambda p: _figure3(_improving_with_k, _same_for_every_k), (
        Contradiction("the objective grows with k", lambda p: _figure3(lambda k: 0.06 + 0.25 * k / 256,
                                                                       _same_for_every_k)),)),
    pegasos._constant_over_k: Case(lambda p: _figure3(_improving_with_k, _same_for_every_k), (
        Contradiction("final objectives 60% apart", lambda p: _figure3(
            _improving_with_k, lambda k: [0.2, 0.1, 0.0635 * (1 + 0.6 * np.log2(k) / 8)])),
        Contradiction("every k converged by kT = 256000, far apart at equal examples before", lambda p: _figure3(
            _improving_with_k, lambda k: [0.07 * k, 0.064 * np.sqrt(k), 0.0635])),
    )),
    sgd._verdict: Case(lambda p: _sgd(p, [0.25, 0.5, 1], [0.5, 0.05, 0.008]), (
        Contradiction("1% not reached", lambda p: _sgd(p, [0.25, 0.5, 1], [0.5, 0.05, 0.02])),
        Contradiction("1% reached after twice the paper's epochs", lambda p: _sgd(p, [0.5, 1, 2], [0.05, 0.02, 0.008]),
                      applies=lambda p: p["paper_epochs"] is not None),
        Contradiction("1% reached at a fifth of the paper's epochs, run on to the paper's",
                      lambda p: _sgd(p, [0.1, 0.2, 1], [0.05, 0.008, 0.001]), applies=_budget_is_the_papers),
    )),
}


# ----------------------------------------------------------------------------- the declared verdicts


@dataclass(frozen=True)
class Declared:
    """One verdict a paper declares: its verdict function, the arguments the declaration gives
    it, the experiment it reads, and its outcome on results (``passing`` or ``failing``)."""

    id: str
    function: Callable[..., Any]
    params: Params
    experiment: str
    outcome: Callable[[Results], str]
    passing: str = "matches"
    failing: str = "differs"


def _word(verdict: str) -> str:
    """``matches`` or ``differs`` from a number's verdict (``error matches; time: ...``), else the verdict."""
    found = re.match(r"(?:error )?(matches|differs)\b", verdict)
    return found[1] if found else verdict


def _printed(key: str, row: Printed) -> Declared:
    return Declared(f"{key}: {row.what}", getattr(row.measure, "func", row.measure),
                    getattr(row.measure, "keywords", {}), row.experiments[0],
                    lambda results: _word(row.row(results)[3]))


def _claim(key: str, experiment: str, claim: Claim) -> Declared:
    """A claim's verdict; its builders also get the experiments it compares with (``also``)."""
    params = {**getattr(claim.check, "keywords", {}), "experiment": experiment, "also": claim.also}
    return Declared(f"{key}: {claim.what}", getattr(claim.check, "func", claim.check), params, experiment,
                    lambda results: ClaimsOn(experiment, (claim,)).rows(results)[0][3], *claim.outcomes)


def _sgd_row(table: str, dataset: str, solver: str, paper_epochs: int | None) -> Declared:
    def outcome(results: Results) -> str:
        rows = sgd.EpochsTable(table).table(results).rows
        return _word(next(row for row in rows if row[:2] == (sgd.DATASETS[dataset], solver))[7])

    params = {"table": table, "dataset": dataset, "solver": solver, "paper_epochs": paper_epochs}
    return Declared(f"sgd: {sgd.TABLES[table].tables}, {sgd.DATASETS[dataset]}, {solver}", sgd._verdict, params,
                    sgd.experiment(table, dataset), outcome)


def declared() -> list[Declared]:
    """Every verdict the papers declare, walking their sections' tables. A table or row of a kind
    not known here is a :class:`Declared` whose function is its type (and has no case)."""
    found = []
    for paper in papers.PAPERS:
        for section in paper.sections:
            for table in section.tables:
                if isinstance(table, Numbers):
                    found += [_printed(paper.key, row) if isinstance(row, Printed)
                              else Declared(f"{paper.key}: {row.what}", type(row), {}, "", str)
                              for row in table.rows if not isinstance(row, NotReproduced)]
                elif isinstance(table, Claims):
                    found += [_claim(paper.key, group.experiment, claim)
                              for group in table.groups for claim in group.claims]
                elif isinstance(table, sgd.EpochsTable):
                    found += [_sgd_row(table.key, dataset, solver, epochs)
                              for dataset, solvers in sgd.TABLES[table.key].printed.items()
                              for solver, (epochs, seconds) in solvers.items() if (epochs, seconds) != (None, None)]
                else:
                    found.append(Declared(f"{paper.key}: a {type(table).__name__}", type(table), {}, "", str))
    return found


DECLARED = declared()
COVERED = [d for d in DECLARED if d.function in CASES]


def _all_cases() -> dict[Callable[..., Any], Case]:
    """:data:`CASES` and the ``CASES`` of the ``tests/test_verdicts_<paper>.py`` files (which test
    them with :func:`supporting` and :func:`contradicting`)."""
    cases = dict(CASES)
    for path in sorted(Path(__file__).parent.glob("test_verdicts_*.py")):
        cases.update(importlib.import_module(f"tests.{path.stem}").CASES)
    return cases


def test_every_declared_verdict_has_a_failing_case():
    """A new claim, printed number or kind of table without a case here (or in another
    ``test_verdicts_*.py``) fails the suite, and so does a case for a verdict function no paper declares."""
    cases = _all_cases()
    assert [d.id for d in DECLARED if d.function not in cases] == []
    assert set(cases) == {d.function for d in DECLARED}
    for d in DECLARED:
        assert any(c.applies(d.params) for c in cases[d.function].contradictions), d.id
    assert {d.id.split(":")[0] for d in COVERED} == {paper.key for paper in papers.PAPERS}


def supporting(cases: Mapping[Callable[..., Any], Case]) -> list[Any]:
    """Parameters ``(verdict, build)``: each declared verdict with a case in ``cases`` and the
    builder of its supporting result (expected to fail, strictly, where the case says it cannot pass)."""
    params = []
    for d in DECLARED:
        if d.function in cases:
            case = cases[d.function]
            marks = [pytest.mark.xfail(strict=True, reason=case.cannot_pass)] if case.cannot_pass else []
            params.append(pytest.param(d, case.support, id=d.id, marks=marks))
    return params


def contradicting(cases: Mapping[Callable[..., Any], Case]) -> list[Any]:
    """Parameters ``(verdict, build)``: each declared verdict with a case in ``cases`` and the
    builder of each contradiction that applies to it."""
    return [pytest.param(d, c.build, id=f"{d.id} | {c.what}",
                         marks=[pytest.mark.xfail(strict=True, reason=c.cannot_fail)] if c.cannot_fail else [])
            for d in DECLARED if d.function in cases
            for c in cases[d.function].contradictions if c.applies(d.params)]


def verdict_tests(cases: Mapping[Callable[..., Any], Case]) -> tuple[Callable[..., None], Callable[..., None]]:
    """The two tests of a file of cases, to be bound to ``test_*`` names there: each declared
    verdict with a case in ``cases`` gets the passing outcome on its supporting result and the
    failing one on each result contradicting it."""

    @pytest.mark.parametrize("verdict, build", supporting(cases))
    def passing(verdict: Declared, build: Build, tmp_path: Path) -> None:
        assert verdict.outcome(_write(tmp_path, verdict.experiment, build(verdict.params))) == verdict.passing

    @pytest.mark.parametrize("verdict, build", contradicting(cases))
    def failing(verdict: Declared, build: Build, tmp_path: Path) -> None:
        assert verdict.outcome(_write(tmp_path, verdict.experiment, build(verdict.params))) == verdict.failing

    return passing, failing


test_a_supporting_result_gets_the_passing_verdict, test_a_contradicting_result_gets_the_failing_verdict = \
    verdict_tests(CASES)


# ----------------------------------------------------------------------------- runs that disagree


def _one(function: Callable[..., Any]) -> Declared:
    """The first declared verdict of ``function``."""
    return next(d for d in COVERED if d.function is function)


#: Results whose runs support neither verdict, by verdict function: the verdict names them inconclusive.
DISAGREEING: dict[Callable[..., Any], Build] = {
    pegasos._time_to_optimum: lambda p: synthetic(
        curve("optimum", {"primal_objective": [2.0, 1.0]}, name="dcd"),
        curve("pegasos", {"primal_objective": [1.5, 1.0005]}, {"primal_objective": [1.5, 1.2]})),
    pegasos._some_eta: lambda p: synthetic(*(
        curve(label, *[{"iteration": ITERATIONS, "primal_objective": path} for path in paths], name=label.split(" ")[0])
        for label, paths in {"pegasos": [PEGASOS_PATH] * 2, "sgd eta=0.01": [AS_FAST_ETA, FAILING_ETA],
                             "sgd eta=10": [FAILING_ETA] * 2}.items())),
    pegasos._constant_over_k: lambda p: _figure3(_improving_with_k, _same_for_every_k, runs=1),
    sbp._sbp_below: lambda p: synthetic(  # the other solver's two runs either side of SBP
        curve("sbp", *[{"kernel_evals": KERNEL_EVALS, "test_error": FALLING}] * 2),
        curve(p["other"], *[{"kernel_evals": KERNEL_EVALS, "test_error": [e + d for e in FALLING]}
                            for d in (-0.05, 0.06)])),
    sbp._smo_late: lambda p: _errors(runs=1, sbp=[0.2, 0.105, 0.1, 0.1, 0.1], smo=[0.5, 0.45, 0.5, 0.4, 0.1]),
    sbp._perceptron_close: lambda p: synthetic(  # first-epoch errors 20% and 30%: within 2 pp of SBP's 20%?
        curve("perceptron", *_runs([OVERFITTING, [e + 0.1 * (i == 2) for i, e in enumerate(OVERFITTING)]])),
        curve("sbp", *_runs([SBP_IMPROVING] * 2))),
    sbp._sbp_beats_fourier: lambda p: _fourier([0.3, 0.2, 0.15, 0.1, 0.1], runs=1),
    pegasos._against_norma: lambda p: synthetic(*(  # Norma's runs end 0.066 and 0.2: has it converged?
        curve(label, *[{"iteration": ITERATIONS, "primal_objective": [1.0, 0.5, 0.3, 0.2, f]} for f in finals],
              name=label.split(" ")[0])
        for label, finals in {"pegasos": (0.063, 0.063), "norma": (0.066, 0.2),
                              "norma (projection)": (0.165, 0.165)}.items())),
    pegasos._test_loss_against_norma: lambda p: synthetic(*(  # Norma's test losses 0.08 and 0.14
        curve(label, *[{"iteration": ITERATIONS, "test_hinge_loss": [2.0, 1.0, 0.5, 0.2, f]} for f in finals])
        for label, finals in (("pegasos", (0.09, 0.09)), ("norma", (0.08, 0.14))))),
    pegasos._improves_with_k: lambda p: synthetic(*(  # k = 16's runs end 0.1 apart: better than k = 4?
        curve(f"T fixed, k={k}", *[{"iteration": [10, 100, 1000], "primal_objective": [1.0, 0.5, final]}
                                   for final in (_improving_with_k(k), _improving_with_k(k) + 0.1 * (k == 16))],
              name="pegasos", params=f"mini_batch={k}") for k in KS)),
    sgd._verdict: lambda p: synthetic(
        curve("optimum", {"epoch": [1, 50], "primal_objective": [1.5, 1.0]}, name="dcd"),
        curve(p["solver"], *[{"epoch": [(p["paper_epochs"] or 10) * e for e in (0.5, 1)],
                              "primal_objective": [1.05, 1 + r]} for r in (0.005, 0.02)])),
}


@pytest.mark.parametrize("function", DISAGREEING, ids=lambda f: f.__qualname__)
def test_runs_that_disagree_are_inconclusive(function: Callable[..., Any], tmp_path):
    """One run agrees and one does not (or a single run, where the verdict needs a spread): inconclusive."""
    verdict = _one(function)
    assert _word(verdict.outcome(_write(tmp_path, verdict.experiment, DISAGREEING[function](verdict.params)))) \
        .startswith("inconclusive")


# ----------------------------------------------------------------------------- inconclusive verdicts (SBP paper)


def _claim_row(experiment: str, claim: Claim, result: Synthetic, tmp_path: Path) -> tuple[str, ...]:
    """The row the report prints for ``claim`` on ``result``."""
    return ClaimsOn(experiment, (claim,)).rows(_write(tmp_path, experiment, result))[0]


def test_overfitting_within_the_spread_of_the_runs_is_inconclusive(tmp_path):
    """Issue #14's Adult runs: a first-epoch error spread over runs (17% to 40%) leaves a 5 pp
    mean fall after it (2 pp over windows) undecided; so does a single run."""
    runs = [[0.4, 0.3, first, 0.19, 0.19, 0.2, 0.2, final] for first, final in [(0.17, 0.2), (0.4, 0.19), (0.19, 0.21)]]
    spread = synthetic(curve("perceptron", *_runs(runs)), curve("sbp", *_runs([SBP_IMPROVING] * 3)))
    overfits = Claim("overfits", sbp._perceptron_overfits, needs=("sbp", "perceptron"))
    row = _claim_row("sbp-figure2-adult", overfits, spread, tmp_path / "spread")
    assert row[3] == "inconclusive (3 runs)"
    assert "change -2.17 pp ± 4.17 (mean ± standard error over 3 runs)" in row[2]
    one = synthetic(curve("perceptron", *_runs([OVERFITTING])), curve("sbp", *_runs([SBP_IMPROVING])))
    assert _claim_row("sbp-figure2-adult", overfits, one, tmp_path / "one")[3] == "inconclusive (1 run)"


def test_sbp_improving_within_the_spread_of_the_runs_is_inconclusive(tmp_path):
    """SBP ending level with the Perceptron, whose final errors spread by 10 pp, decides nothing."""
    per = [[0.4, 0.3, 0.2, 0.19, 0.18, 0.17, 0.16, final] for final in (0.05, 0.25, 0.15)]
    result = synthetic(curve("perceptron", *_runs(per)),
                       curve("sbp", *_runs([[v + o for v in SBP_IMPROVING] for o in OFFSETS])))
    claim = Claim("improves", sbp._sbp_keeps_improving, needs=("sbp", "perceptron"))
    row = _claim_row("sbp-figure2-reuters", claim, result, tmp_path)
    assert row[3] == "inconclusive (3 runs)"
    assert "SBP minus Perceptron 0.00 pp ± 5.78" in row[2]


WANDERING = [25.0, 16.0, 15.04, 15.09, 14.95, 14.99, 14.86]  # SBP's errors (%), one run; wander after 50 s: 0.23 pp


def _wandering_sbp(errors: Sequence[float]) -> Synthetic:
    """LIBSVM at 14.88% in 100 s; one SBP run with ``errors`` (%) at 1, 10, 20, 50, 60, 80, 100 s."""
    libsvm = curve("libsvm", {"test_error": [0.3, 0.1488], "train_time_s": [20, 150], "fit_time_s": [10, 100]})
    sbp_run = curve("sbp", {"test_error": [e / 100 for e in errors], "train_time_s": [1, 10, 20, 50, 60, 80, 100]})
    return synthetic(libsvm, sbp_run)


def test_a_single_sbp_run_within_its_wander_is_inconclusive(tmp_path):
    """Section 5 on Adult is one run: 15.04% against the printed 15.0% (precision 0.05 pp) with a
    wander of 0.23 pp would both match and differ; 15.5% differs whatever the wander, and two
    runs are judged as before."""
    ours, verdict = sbp._sbp_row(_wandering_sbp(WANDERING), printed=15.0)
    assert (ours, verdict.split(":")[0]) == ("15.04%", "inconclusive (1 run)")
    assert "wander, 0.23 pp" in verdict
    assert sbp._sbp_row(_wandering_sbp([e + 0.5 for e in WANDERING]), printed=15.0)[1] == "differs by +0.54 pp"
    two = _wandering_sbp(WANDERING)
    two = Synthetic(pd.concat([two.curves, two.curves[two.curves["solver"] == "sbp"].assign(run=1)]), two.meta)
    assert sbp._sbp_row(two, printed=15.0) == ("15.04%", "matches")
    held, measured = sbp._reaches(_wandering_sbp(WANDERING), margin=0.1)  # target 14.98%: 0.06 pp away
    assert held is None and "SBP is +0.06 pp from the target, within the run's own wander, 0.23 pp" in measured
    claim = Claim("reaches", partial(sbp._reaches, margin=0.1), needs=("libsvm", "sbp"))
    assert _claim_row("sbp-libsvm-adult", claim, _wandering_sbp(WANDERING), tmp_path)[3] == "inconclusive (1 run)"


def test_sbp_without_a_checkpoint_by_a_quarter_of_libsvms_time_is_not_measured():
    """No 'nan': SBP's first checkpoint after 1/4 of LIBSVM's time (25 s) is said as such."""
    late = _wandering_sbp(WANDERING)
    late = Synthetic(late.curves.assign(train_time_s=late.curves["train_time_s"] + 30), late.meta)
    ours, verdict = sbp._sbp_row(late, printed=15.0)
    assert (ours, verdict) == ("-", "not measured: SBP has no checkpoint by 1/4 of LIBSVM's time (25.0 s); "
                                    "its first is at 31.0 s")
    held, measured = sbp._reaches(late, margin=0.1)
    assert held is False and "nan" not in measured and "no checkpoint by 1/4" in measured


def test_sbp_at_a_quarter_of_libsvms_time_is_judged_by_the_spread_of_its_runs(tmp_path):
    """Section 5 with several SBP runs: their mean error at a quarter of LIBSVM's time matches
    the printed 15.0% only when two standard errors of the runs keep it within the printed
    precision; runs spread by 0.5 pp around it decide nothing."""
    row = next(r for r in sbp.LIBSVM.rows if r.what == "SBP test error at 1/4 of LIBSVM's time, Adult")

    def result(errors_at_quarter: Sequence[float]) -> Synthetic:
        libsvm = curve("libsvm", {"test_error": [0.3, 0.149], "train_time_s": [20, 150], "fit_time_s": [10, 100]})
        runs = [{"test_error": [0.2, e / 100, e / 100], "train_time_s": [1, 20, 50]} for e in errors_at_quarter]
        return synthetic(libsvm, curve("sbp", *runs))

    tight = row.row(_write(tmp_path / "tight", "sbp-libsvm-adult", result([15.0, 15.01, 14.99])))
    assert (tight[2], tight[3]) == ("15.00%", "matches")
    spread = row.row(_write(tmp_path / "spread", "sbp-libsvm-adult", result([14.5, 15.0, 15.6])))
    assert spread[3].startswith("inconclusive (3 runs): +0.03 pp from the printed value, and within 2 standard "
                                "errors of the 3 runs' errors there")
    off = row.row(_write(tmp_path / "off", "sbp-libsvm-adult", result([16.0, 16.01, 15.99])))
    assert off[3] == "differs by +1.00 pp"


def test_sbps_reaching_time_over_several_runs_is_judged_by_their_spread(tmp_path):
    """Section 5's claim with several SBP runs: their times to reach LIBSVM's error plus the
    margin against a quarter of LIBSVM's time (25 s, over three runs), two standard errors either way."""
    claim = Claim("reaches", partial(sbp._reaches, margin=0.1), needs=("libsvm", "sbp"))

    def verdict(name: str, reach_times: Sequence[float]) -> str:
        libsvm = curve("libsvm", *[{"test_error": [0.3, 0.149], "train_time_s": [20, 150], "fit_time_s": [10, t]}
                                   for t in (99, 100, 101)])
        runs = [{"test_error": [0.2, 0.16, 0.1495], "train_time_s": [1, t / 2, t]} for t in reach_times]
        return _claim_row("sbp-libsvm-adult", claim, synthetic(libsvm, curve("sbp", *runs)), tmp_path / name)[3]

    assert verdict("early", [10, 12, 14]) == "held"
    assert verdict("late", [40, 45, 50]) == "did not hold"
    assert verdict("spread", [5, 25, 45]) == "inconclusive (3 runs)"


def test_the_projection_improving_norma_is_judged_over_the_papers_range(tmp_path):
    """Issue #29: at 10^6 iterations Norma and Norma with projection are level within the runs'
    spread (the old rule, the end alone: inconclusive), at 10^3 they are 5.53 against 0.85: held,
    and the text names every decade."""
    end_level = _projected(NORMA_PATH, PROJECTED_PATH[:4] + [0.1653], runs=5, spread=0.02)
    held, text = pegasos._projection_improves_norma(_write(tmp_path, "pegasos-figure2-norma", end_level)
                                                     .get("pegasos-figure2-norma"))
    assert held is True
    assert "10^3: Norma 5.751 +- 0.16, with projection 0.884 +- 0.024" in text
    assert "10^6: Norma 0.1737 +- 0.0047, with projection 0.1719 +- 0.0047" in text  # level within the spread


def test_sbp_improving_is_measured_from_the_perceptrons_first_epoch(tmp_path):
    """Issue #29: SBP's first epoch costs 100 times the Perceptron's kernel evaluations here; SBP
    falls from 20% at the Perceptron's first epoch (1e4) to 15% by its own first epoch (1e6), then
    stays. From its own first epoch it stalls (the old rule: did not hold); from the common origin
    it improves by 5 pp, and ends below the Perceptron: held."""
    sbp_errors = [0.2, 0.2, 0.2, 0.17, 0.16, 0.15, 0.15, 0.15]  # at kernel evaluations 1e4 * EPOCHS
    sbp_runs = [{"epoch": [e / 100 for e in EPOCHS], "kernel_evals": [1e4 * e for e in EPOCHS],
                 "test_error": [v + o for v in sbp_errors]} for o in OFFSETS]
    per_runs = _runs([[v + o for v in OVERFITTING] for o in OFFSETS])
    result = synthetic(curve("perceptron", *per_runs), curve("sbp", *sbp_runs))
    claim = Claim("improves", sbp._sbp_keeps_improving, needs=("sbp", "perceptron"))
    row = _claim_row("sbp-figure2-reuters", claim, result, tmp_path)
    assert row[3] == "held"
    assert "SBP at the Perceptron's first epoch (1e+04 kernel evaluations) 20.00% ± 0.29" in row[2]
    assert "change -5.00 pp ± 0.00" in row[2]


def test_smo_late_is_judged_in_kernel_evaluations_not_in_its_own_range(tmp_path):
    """Issue #29's MNIST: SMO settles at the end of its own range (1e6 kernel evaluations; the old
    rule, fractions of each solver's own log range: held) but SBP, run on to 1e9, settles only
    past 1e8: SMO is not late on Figure 2's axis, did not hold."""
    smo = curve("smo", *[{"kernel_evals": KERNEL_EVALS, "test_error": [0.5, 0.45, 0.5, 0.4, 0.1]}] * 2)
    sbp_runs = curve("sbp", *[{"kernel_evals": [1e2, 1e4, 1e6, 1e8, 1e9],
                               "test_error": [0.5 + o, 0.3, 0.2, 0.12 + o, 0.1]} for o in (0.0, 0.001)])
    claim = Claim("late", sbp._smo_late, needs=("sbp", "smo"))
    row = _claim_row("sbp-figure2-mnist", claim, synthetic(smo, sbp_runs), tmp_path)
    assert row[3] == "did not hold"
    assert "at 1e+06 kernel evaluations, SMO;" in row[2] and "SMO later by -2." in row[2]


def test_perceptron_overfitting_is_judged_over_windows_of_checkpoints(tmp_path):
    """Issue #29: the Perceptron's error alternates 19% / 21% from checkpoint to checkpoint, its
    first-epoch checkpoint at 19% and its last at 20.7% (the old rule, one checkpoint each: +1.7 pp,
    overfits). Over its second epoch it is 20%, over the last tenth of its epochs 19.9%: does not."""
    epochs = [0.5, 1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9, 9.5, 10]
    errors = [0.3, 0.19, 0.21, 0.20, 0.21, 0.19, 0.21, 0.19, 0.21, 0.19, 0.20, 0.19, 0.207]
    runs = [{"epoch": epochs, "kernel_evals": [1e4 * e for e in epochs], "test_error": [v + o for v in errors]}
            for o in OFFSETS]
    result = synthetic(curve("perceptron", *runs), curve("sbp", *_runs([SBP_IMPROVING] * 3)))
    claim = Claim("overfits", sbp._perceptron_overfits, needs=("sbp", "perceptron"))
    row = _claim_row("sbp-figure2-adult", claim, result, tmp_path)
    assert row[3] == "did not hold"
    assert "over its second epoch 20.00% ± 0.29, over the last tenth of its epochs (to epoch 10) 19.90%" in row[2]


def test_equal_test_losses_are_inconclusive_not_norma_lower(tmp_path):
    """Issue #29: the test-loss check is ours, with three outcomes: level runs decide neither way
    (the old rule: 'did not hold' whenever Pegasos was not lower by two standard errors)."""
    verdict = _one(pegasos._test_loss_against_norma)
    assert (verdict.passing, verdict.failing) == ("Pegasos lower", "Norma lower")
    assert verdict.outcome(_write(tmp_path, verdict.experiment, _test_losses(0.09, 0.09))) == "inconclusive (2 runs)"

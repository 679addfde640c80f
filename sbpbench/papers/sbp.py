"""The SBP paper: Cotter, Shalev-Shwartz, Srebro, *The Kernelized Stochastic Batch Perceptron*, ICML 2012.

Reproduced here: Table 2 (nu of the slack-constrained problem, derived from lambda; the data
sizes, sigma^2 and lambda as run, with the runs, epochs and Fourier pairs of the figures' captions), the
runtime comparison with LIBSVM of Section 5, Figure 2 (test error against kernel evaluations:
SBP, Pegasos, SDCA, SMO and the Perceptron) with the claims Section 5 makes about it, and
Figure 3 of Appendix A (SBP against random Fourier features, by d-dimensional inner products).

nu: the slack-constrained problem bounds the total slack by n nu (Problem 2.3); the paper
derives nu from the lambda of the regularized problem at its exact optimum (Section 5).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import partial
from typing import Any, Literal, TypeVar

import numpy as np
import pandas as pd

from sbpbench.errors import UserError
from sbpbench.papers.declarations import (
    NO_RESULTS,
    TOO_LONG,
    Claim,
    Claims,
    ClaimsOn,
    ErrorCurves,
    Figure,
    NotRun,
    Numbers,
    Paper,
    Printed,
    Results,
    Section,
    needs_download,
    not_run_yet,
    settings,
)
from sbpbench.results.curves import (
    SETTLED_WITHIN,
    SPREAD,
    above_zero,
    difference,
    final_rows,
    first_epoch_end,
    mean_and_se,
    mean_before,
    mean_curve,
    run_values_at,
    settle_point,
    values_before,
)
from sbpbench.results.lookup import ExperimentResult

CITATION = "Cotter, Shalev-Shwartz, Srebro, The Kernelized Stochastic Batch Perceptron, ICML 2012"

MNIST_TOO_LONG = not_run_yet("MNIST's 60000 training images can be fetched now, but the runs take hours of "
                             "2-core time and are left for a longer run")

#: The experiments (configs) that reproduce the paper, and why their results may be missing.
EXPERIMENTS: dict[str, NotRun] = {
    "sbp-figure2-reuters": NO_RESULTS,
    "sbp-figure2-adult": TOO_LONG,
    "sbp-figure2-mnist": MNIST_TOO_LONG,
    "sbp-figure2-mnist-t10k": NO_RESULTS,
    "sbp-figure3-reuters": NO_RESULTS,
    "sbp-figure3-adult": TOO_LONG,
    "sbp-figure3-mnist": MNIST_TOO_LONG,
    "sbp-libsvm-adult": TOO_LONG,
    "sbp-libsvm-mnist": MNIST_TOO_LONG,
    "sbp-libsvm-forest": needs_download("Forest/Covertype"),
}

#: Runs an experiment takes from another instead of repeating them: ``{experiment: (source,
#: solver)}``. Figure 3 on MNIST shows the SBP runs of Figure 2 on MNIST: the two configs
#: pose the same problem with the same seed, and a run's generator depends only on the
#: seed, the run index and the solver (:func:`sbpbench.execution.loop.run_rng`), so the runs
#: are the same bit for bit (as the committed Adult pair shows, ``tests/test_figures_report.py``).
#: Ten more 10-epoch SBP runs on full MNIST would cost about three core-hours.
SHARED_RUNS = {"sbp-figure3-mnist": ("sbp-figure2-mnist", "sbp")}

# ----------------------------------------------------------------------------- Table 2: nu


def _sig3(x: float) -> float:
    return float(f"{x:.2e}")


#: A mean hinge loss within this factor of the optimum's duality gap is not resolved by the optimization.
HINGE_RESOLUTION = 10.0


def _below_resolution(optimum: dict[str, Any], printed: float) -> str | None:
    """The verdict when nu is zero within the optimizer's tolerance (near-separable data), else None.

    nu = mean hinge / ||w||. The duality gap bounds how far the objective (lambda/2 ||w||^2 +
    mean hinge) is from its optimum; when the mean hinge loss is within
    :data:`HINGE_RESOLUTION` times the gap, the optimization does not determine it, so
    only ``nu <= HINGE_RESOLUTION * gap / ||w||`` is known. A printed value below that bound
    is consistent with ours (inconclusive: the digits cannot be compared); one above it
    differs.
    """
    hinge, gap, norm = optimum.get("mean_hinge"), optimum.get("duality_gap"), optimum.get("norm")
    if hinge is None or gap is None or not norm or hinge > HINGE_RESOLUTION * gap:
        return None
    bound = HINGE_RESOLUTION * gap / norm
    why = (f"below the optimizer's resolution: our mean hinge loss {hinge:.2g} is within {HINGE_RESOLUTION:g}x "
           f"of the duality gap {gap:.2g}, so nu is only known to be below {HINGE_RESOLUTION:g} gap / ||w|| = "
           f"{bound:.2g}")
    if printed <= bound:
        return f"inconclusive, {why}; the printed value is below that bound too (consistent)"
    return f"differs: ours is {why}; the printed value is above that bound"


#: How our copy of a data set compares with the paper's: the same files as far as we know
#: (``copy``), the canonical files with verified checksums (``canonical``), or another data
#: set standing in for it (``substitute``).
DataCopy = Literal["copy", "canonical", "substitute"]


def _nu_reason(ratio: float, n: int, paper_n: int, gap: float | None, data: DataCopy) -> str:
    """What is known about a difference between our nu (from an exact optimum) and the printed one."""
    about_data = (f"our copy has n = {n}, the paper's n = {paper_n}" if n != paper_n
                  else f"same n = {n} and the canonical files (checksums verified)" if data == "canonical"
                  else f"same n = {n}; whether our copy's entries are the paper's is not known")
    certified = f"our optimum has duality gap {gap:.1e}" if gap is not None else "our optimum is exact"
    if 0.9 <= ratio <= 1.1:
        return f"close; {about_data}; {certified}, the paper does not say how exact its optimum was"
    return f"cause not established ({about_data}, which alone should not change nu this much; {certified})"


T = TypeVar("T")


def _analysis(res: ExperimentResult, analysis: str, script: str, read: Callable[[Any], T]) -> T | None:
    """What ``read`` takes from the JSON file ``analysis`` (relative to the results root) that
    ``scripts/<script>`` wrote; None when there is no such file.

    Raises
    ------
    UserError
        The file is there but is not the script's output.
    """
    path = res.directory.parent / analysis
    if not analysis or not path.is_file():
        return None
    try:
        return read(json.loads(path.read_text()))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{path}: not the output of scripts/{script} ({type(exc).__name__}: {exc}); "
                        "run the script again or delete the file") from None


def _hypotheses(res: ExperimentResult, analysis: str) -> str:
    """The hypotheses for a difference in nu, as ``scripts/nu_hypotheses.py`` computed them into
    ``analysis`` (:func:`_analysis`), quoted; empty when it is not there. A hypothesis the
    script did not finish within its time limit is quoted as such."""
    def read(found: Any) -> str:
        found = found["hypotheses"]
        tried = "; ".join(f"{h['what']}: " + (f"{h['nu']:.3g} ({h['ratio_to_paper']:.2f}x)" if h["nu"] is not None
                                               else f"not finished within {h['not_finished_within_s']:.0f} s")
                          for h in found)
        finished = [h for h in found if h["nu"] is not None]
        nearest = min(finished, key=lambda h: abs(math.log(h["ratio_to_paper"]))) if finished else None
        return (f"; hypotheses computed by scripts/nu_hypotheses.py ({analysis}), nu and its ratio to the printed "
                f"value: {tried}" + (f"; the nearest, {nearest['what']}, gives {nearest['ratio_to_paper']:.2f}x"
                                     if nearest else ""))
    return _analysis(res, analysis, "nu_hypotheses.py", read) or ""


def _digits_off(nu: float, printed: float) -> str:
    """How far ``nu`` is from the printed value in units of its third significant digit, the
    printed precision (rounding allows half a unit)."""
    unit = 10.0 ** (math.floor(math.log10(printed)) - 2)
    return f"{(nu - printed) / unit:+.1f} units of the printed third digit, rounding allows 0.5"


def _nu(res: ExperimentResult, printed: float, paper_n: int, data: DataCopy,
        analysis: str = "") -> tuple[str, str]:
    """Our nu (from the experiment's meta.json) and its verdict: matches when it rounds to the
    printed value at its 3 significant digits (within half a unit of the third digit, the printed
    precision: 0.23% of 2.21e-4), else differs however small the gap, with the gap in units of
    that digit: our nu comes from an optimum exact to its duality gap, so the gap is not ours to
    round away; whether the paper's optimum was as exact it does not say.

    ``analysis``: where ``scripts/nu_hypotheses.py`` wrote the hypotheses it tested for a
    difference (relative to the results root), quoted in the reason."""
    problem = res.meta["resolved"]["problem"]
    nu = float(problem["nu"])
    derived = res.meta["config"].get("problem", {}).get("nu") == "from_lambda"
    n = res.meta["resolved"]["dataset"]["n_train"]
    optimum = problem.get("optimum") or {}
    timing = f"; exact optimum in {optimum['seconds']:.0f} s" if "seconds" in optimum else ""
    ours = f"{nu:.4e} ({'from lambda' if derived else 'as printed'}; n = {n}{timing}; {res.name})"
    if not derived:
        return ours, "not derived here: the printed value is used"
    if _sig3(nu) == _sig3(printed):
        return ours, "matches"
    if (unresolved := _below_resolution(optimum, printed)) is not None:
        return ours, unresolved
    if data == "substitute":
        return ours, (f"differs ({nu / printed:.3g}x), as expected: a substitute data set (n = {n} "
                      f"instead of {paper_n}), not comparable")
    return ours, (f"differs ({nu / printed:.3g}x, {_digits_off(nu, printed)}): " + _nu_reason(nu / printed, n, paper_n,
                                                                  optimum.get("duality_gap"), data)
                  + _hypotheses(res, analysis))


def _nu_row(dataset: str, bias: bool, experiments: tuple[str, ...], printed: float, paper_n: int,
            data: DataCopy = "copy", analysis: str = "") -> Printed:
    """Table 2's nu for one data set, with or without bias; ``paper_n``: the paper's training size;
    ``analysis``: the hypotheses tested for a difference (see :func:`_nu`)."""
    return Printed(f"nu, {dataset}, {'with' if bias else 'without'} bias", f"{printed:.3g}", experiments,
                   partial(_nu, printed=printed, paper_n=paper_n, data=data, analysis=analysis))


#: Table 2: nu per data set, without and with bias. Ours is in the meta.json of the experiment
#: that solves the problem (or of a cheaper run of the same problem, ``table2-nu-*``); the
#: with-bias values come from the LIBSVM comparison, whose problem has a bias.
TABLE2 = Numbers((
    _nu_row("Reuters money-fx", False, ("sbp-figure2-reuters",), 6.34e-4, 7770),
    _nu_row("Adult", False, ("sbp-figure2-adult", "table2-nu-adult"), 1.10e-2, 31562),
    _nu_row("Adult", True, ("sbp-libsvm-adult", "table2-nu-adult-bias"), 5.79e-4, 31562,
            analysis="analyses/nu-adult-bias.json"),
    _nu_row("MNIST 8 vs rest", False, ("sbp-figure2-mnist", "table2-nu-mnist"), 2.21e-4, 60000, "canonical"),
    _nu_row("MNIST 8 vs rest", True, ("sbp-libsvm-mnist", "table2-nu-mnist-bias"), 6.42e-11, 60000, "canonical"),
    _nu_row("MNIST-t10k (substitute for MNIST)", False, ("sbp-figure2-mnist-t10k",), 2.21e-4, 60000, "substitute"),
    _nu_row("Forest", True, ("sbp-libsvm-forest",), 7.62e-10, 522910),
))

# ----------------------------------------------------------------------------- Table 2 and the figures: settings


def _repeated_rows(res: ExperimentResult, analysis: str, split: Literal["n_train", "n_test"], printed: int) -> str:
    """What ``scripts/duplicate_rows.py`` counted in our copy (``analysis``, :func:`_analysis`), and
    whether removing repeated rows gives the printed size; empty without it."""
    def read(found: Any) -> str:
        if split == "n_test":
            repeated = int(found["test_rows_repeating_a_test_row"])
            distinct, where = int(found["n_test"]) - repeated, "another test row"
            also = f", {int(found['test_rows_equal_to_a_training_row'])} equal a training row"
        else:
            repeated = int(found["training_rows_repeating_a_training_row"])
            distinct, where, also = int(found["n_train"]) - repeated, "another training row", ""
        gives = "the paper's size" if distinct == printed else f"{distinct}, not the paper's {printed}"
        return (f"; counted by scripts/duplicate_rows.py ({analysis}): {repeated} rows repeat {where}{also}; "
                f"without the repeats: {gives}")
    return _analysis(res, analysis, "duplicate_rows.py", read) or ""


def _size(res: ExperimentResult, printed: int, split: Literal["n_train", "n_test"], copy: str,
          analysis: str = "") -> tuple[str, str]:
    """A data set's training or test size (``split``) against the printed one; ``copy``: what our
    copy is; ``analysis``: the repeated rows counted in it (:func:`_repeated_rows`), quoted."""
    ours = int(res.meta["resolved"]["dataset"][split])
    measured = f"{ours} ({res.name})"
    if ours == printed:
        return measured, "matches"
    return measured, (f"differs ({ours - printed:+d} rows): our copy is {copy}; the paper's copy is not available; "
                      f"cause not established" + _repeated_rows(res, analysis, split, printed))


def _sigma2(res: ExperimentResult, printed: float) -> tuple[str, str]:
    """The Gaussian kernel's sigma^2 as run (meta.json's resolved kernel) against the printed one;
    a kernel other than the Gaussian (Table 2's caption) differs whatever its sigma^2."""
    kernel = res.meta["resolved"]["kernel"]
    ours = float(kernel.get("sigma2", math.nan))
    same = kernel.get("name") == "gaussian" and math.isclose(ours, printed, rel_tol=1e-12)
    return f"{ours:g} ({kernel.get('name')} kernel; {res.name})", "matches" if same else "differs"


def _lambda(res: ExperimentResult, per_n: float) -> tuple[str, str]:
    """lambda as run against the printed ``per_n / n`` (n: our training size)."""
    problem = res.meta["resolved"]["problem"]
    n = int(res.meta["resolved"]["dataset"]["n_train"])
    ours = float(problem["lambda"])
    measured = f"{ours:.4g} = {ours * n:.4g}/n ({problem.get('lambda_expression', '?')}; n = {n}; {res.name})"
    return measured, "matches" if math.isclose(ours * n, per_n, rel_tol=1e-9) else "differs"


def _runs_of(res: ExperimentResult, printed: int) -> tuple[str, str]:
    """The number of runs of every solver (the committed curves) against the printed one."""
    runs = res.curves.groupby("solver_name")["run"].nunique()
    measured = ", ".join(f"{name} {count}" for name, count in runs.items())
    return measured, "matches" if bool((runs == printed).all()) else "differs"


def _epochs_of(res: ExperimentResult, printed: float, solvers: tuple[str, ...]) -> tuple[str, str]:
    """The epochs ``solvers`` ran (each run's last checkpoint; the mean over runs) against the printed ones."""
    ends = {name: float(final_rows(_solver(res, name))["epoch"].mean()) for name in solvers}
    measured = ", ".join(f"{name} {epochs:.3g}" for name, epochs in ends.items())
    return measured, "matches" if all(math.isclose(e, printed, rel_tol=1e-9) for e in ends.values()) else "differs"


def _fourier_pairs(res: ExperimentResult) -> tuple[str, str]:
    """The numbers k of Fourier feature pairs run (Figure 3's caption: k = 1, 2, 4, 8, ...):
    matches when the first set has one pair and the t-th set 2^(t-1), at every checkpoint."""
    four = _solver(res, "fourier")
    pairs, sets = four["pairs"].to_numpy(float), four["iteration"].to_numpy(float)
    doubling = bool(len(pairs)) and bool(np.all(pairs == 2.0 ** (sets - 1)))
    measured = (f"k = {', '.join(f'{k:g}' for k in sorted(set(pairs)))} at the checkpoints "
                f"(k = 2^(t-1) at set t: {'yes' if doubling else 'no'})")
    return measured, "matches" if doubling else "differs"


#: Table 2's data sets: the experiments that solve each problem without and with a bias, and
#: what our copy of the data is (where its sizes may differ from the paper's).
ADULT_COPY = "LIBSVM's a9a / a9a.t (LaSVM's archive has the same 32561 / 16281 rows)"
TABLE2_DATA = (
    ("Reuters money-fx", ("sbp-figure2-reuters",), (), 7770, 3229,
     "LaSVM's archive as distributed (duplicate feature entries removed)", "analyses/rows-reuters.json"),
    ("Adult", ("sbp-figure2-adult", "table2-nu-adult"), ("sbp-libsvm-adult", "table2-nu-adult-bias"), 31562, 16282,
     ADULT_COPY),
    ("MNIST 8 vs rest", ("sbp-figure2-mnist", "table2-nu-mnist"), ("sbp-libsvm-mnist", "table2-nu-mnist-bias"),
     60000, 10000, "the canonical MNIST files"),
    ("Forest", (), ("sbp-libsvm-forest",), 522910, 58102, "Covertype"),
)

#: Table 2's sigma^2 and lambda (as a multiple of 1/n), without and with bias (None: not printed).
TABLE2_PARAMETERS = {"Reuters money-fx": ((0.5, 1.0), None), "Adult": ((10.0, 1.0), (100.0, 0.01)),
                     "MNIST 8 vs rest": ((25.0, 1.0), (25.0, 0.001)), "Forest": (None, (5000.0, 1e-4))}


def _lambda_text(per_n: float) -> str:
    return "1/n" if per_n == 1 else f"1/{1 / per_n:g}n"


def _table2_settings(dataset: str, without: tuple[str, ...], with_bias: tuple[str, ...], n_train: int,
                     n_test: int, copy: str, analysis: str = "") -> tuple[Printed, ...]:
    """Table 2's training and test sizes, sigma^2 and lambda of one data set, read from the runs;
    ``analysis``: the repeated rows counted in our copy (:func:`_repeated_rows`)."""
    experiments = without or with_bias
    rows = [Printed(f"training size n, {dataset}", str(n_train), experiments,
                    partial(_size, printed=n_train, split="n_train", copy=copy, analysis=analysis)),
            Printed(f"testing size, {dataset}", str(n_test), experiments,
                    partial(_size, printed=n_test, split="n_test", copy=copy, analysis=analysis))]
    for bias, exps, parameters in ((False, without, TABLE2_PARAMETERS[dataset][0]),
                                   (True, with_bias, TABLE2_PARAMETERS[dataset][1])):
        if parameters is None:
            continue
        sigma2, per_n = parameters
        which = "with" if bias else "without"
        rows += [Printed(f"sigma^2, {dataset}, {which} bias", f"{sigma2:g}", exps, partial(_sigma2, printed=sigma2)),
                 Printed(f"lambda, {dataset}, {which} bias", _lambda_text(per_n), exps, partial(_lambda, per_n=per_n))]
    return tuple(rows)


def _figure_settings(dataset: str, figure2: str, figure3: str) -> tuple[Printed, ...]:
    """The captions' settings of one data set: ten runs (Figures 2 and 3), ten epochs (Figure 2),
    the Perceptron's epochs (100 on Adult, ten elsewhere), the pairs of Fourier features (Figure 3)."""
    perceptron = 100 if dataset == "Adult" else 10
    return (
        Printed(f"runs per solver, Figure 2, {dataset}", "10", (figure2,), partial(_runs_of, printed=10)),
        Printed(f"epochs of SBP, Pegasos and SDCA, Figure 2, {dataset}", "10", (figure2,),
                partial(_epochs_of, printed=10.0, solvers=("sbp", "pegasos", "sdca"))),
        Printed(f"epochs of the Perceptron, Figure 2, {dataset}", str(perceptron), (figure2,),
                partial(_epochs_of, printed=float(perceptron), solvers=("perceptron",))),
        Printed(f"runs per solver, Figure 3, {dataset}", "10", (figure3,), partial(_runs_of, printed=10)),
        Printed(f"pairs k of Fourier features, Figure 3, {dataset}", "1, 2, 4, 8, ...", (figure3,), _fourier_pairs),
    )


def _smo_epochs(res: ExperimentResult) -> tuple[str, str]:
    """The epochs SMO ran in Figure 2 (each run's last checkpoint; epochs are kernel evaluations
    over n^2) against the caption's "all algorithms were run for ten epochs".

    Matches at ten epochs. SMO stops by its own rule (the KKT violation below its ``eps``); when
    every run ended so, the row differs for that measured reason, with the violation and eps;
    otherwise the cause is not established.
    """
    smo = final_rows(_solver(res, "smo"))
    epochs = float(smo["epoch"].mean())
    measured = (f"{epochs:.3g} epochs = {float(smo['kernel_evals'].mean()):.3g} kernel evaluations "
                f"(mean over {len(smo)} runs; {res.name})")
    if math.isclose(epochs, 10.0, rel_tol=1e-9):
        return measured, "matches"
    eps = next((float(s["params"]["eps"]) for s in res.meta["resolved"].get("solvers", []) if s.get("name") == "smo"),
               math.nan)
    violation = float(smo["kkt_violation"].max()) if "kkt_violation" in smo else math.nan
    if violation < eps:
        return measured, (f"differs: SMO stopped at its own convergence, largest KKT violation {violation:.4g} "
                          f"below its eps = {eps:g} in every run, before ten epochs")
    return measured, "differs: SMO stopped before ten epochs, cause not established (no KKT violation below eps)"


def _smo_working_set(res: ExperimentResult) -> tuple[str, str]:
    """SMO's working-set selection: the paper's is second order (Fan, Chen, Lin 2005). Ours has no
    other (:mod:`sbpbench.solvers.smo`, LIBSVM's WSS2; tests/test_smo.py checks it against LIBSVM),
    so the row matches when the run's resolved solvers include SMO, and differs when they do not."""
    entries = [s for s in res.meta["resolved"].get("solvers", []) if s.get("name") == "smo"]
    if not entries:
        return f"no SMO in {res.name}", "differs (SMO not run)"
    params = ", ".join(f"{key} = {value}" for key, value in entries[0].get("params", {}).items())
    return (f"smo: WSS2, LIBSVM's second-order selection, the only one it has ({params}; {res.name})",
            "matches")


#: The experiments of Figure 2 on each data set.
FIGURE2_DATA = (("Reuters", "sbp-figure2-reuters"), ("Adult", "sbp-figure2-adult"), ("MNIST", "sbp-figure2-mnist"))

SETTINGS = Numbers(settings(
    *(row for data in TABLE2_DATA for row in _table2_settings(*data)),
    *(row for dataset, name in (("Reuters", "reuters"), ("Adult", "adult"), ("MNIST", "mnist"))
      for row in _figure_settings(dataset, f"sbp-figure2-{name}", f"sbp-figure3-{name}")),
    Printed("SMO's working-set selection, Figure 2", "second order (Fan, Chen, Lin 2005)",
            tuple(exp for _, exp in FIGURE2_DATA), _smo_working_set),
))

#: The epochs SMO ran in Figure 2: a measured number (it stops by its own rule), not a setting.
SMO_EPOCHS = Numbers(tuple(Printed(f"epochs of SMO, Figure 2, {dataset}",
                                   "10 (\"all algorithms were run for ten epochs\")", (exp,), _smo_epochs)
                           for dataset, exp in FIGURE2_DATA))

# ----------------------------------------------------------------------------- Section 5: LIBSVM


def _tolerance(printed: float, test_points: int) -> float:
    """The paper's printed precision of a test error (in pp): half a unit of the printed
    number's last digit (15.0%: 0.05 pp; 0.46%: 0.005 pp), but at least one test point
    (100 / test_points pp), the error's own resolution."""
    decimals = len(repr(float(printed)).split(".")[1])
    return max(0.5 * 10.0 ** -decimals, 100.0 / test_points) + 1e-9


def _error_verdict(ours: float, printed: float, test_points: int) -> str:
    """``matches`` when a test error (in %) is within the paper's printed precision
    (:func:`_tolerance`) of its value."""
    difference = ours - printed
    return "matches" if abs(difference) <= _tolerance(printed, test_points) else f"differs by {difference:+.2f} pp"


def _solver(res: ExperimentResult, name: str) -> pd.DataFrame:
    return res.curves[res.curves["solver_name"] == name]


def _libsvm_times(res: ExperimentResult) -> np.ndarray:
    """LIBSVM's training time (s) per run: its final fit alone (trained to the final tolerance
    from scratch; ``train_time_s`` adds up every refit of the tolerance schedule, which would
    flatter SBP)."""
    lib = final_rows(_solver(res, "libsvm"))
    return lib["fit_time_s" if "fit_time_s" in lib else "train_time_s"].to_numpy(float)


def _libsvm(res: ExperimentResult) -> tuple[float, float]:
    """LIBSVM's mean test error (%) and mean training time (s, :func:`_libsvm_times`)."""
    lib = final_rows(_solver(res, "libsvm"))
    return 100 * float(lib["test_error"].mean()), float(_libsvm_times(res).mean())


def _sbp_at_quarter(res: ExperimentResult, libsvm_time: float) -> float:
    """SBP's mean test error (%) at a quarter of LIBSVM's time (NaN when no run has a checkpoint by then)."""
    return 100 * mean_before(_solver(res, "sbp"), libsvm_time / 4)


def _test_points(res: ExperimentResult) -> int:
    return int(res.meta["resolved"]["dataset"]["n_test"])


def _no_checkpoint(res: ExperimentResult, libsvm_time: float) -> str:
    """Why SBP has no error at a quarter of LIBSVM's time: where its first checkpoint is."""
    first = float(_solver(res, "sbp")["train_time_s"].min())
    return (f"SBP has no checkpoint by 1/4 of LIBSVM's time ({libsvm_time / 4:.1f} s); "
            f"its first is at {first:.1f} s")


def _single_run_wander(res: ExperimentResult) -> float | None:
    """The wander (pp) of SBP's test error when it has a single run, else None.

    One run has no spread across runs to judge a difference by; its own wander after
    convergence stands in for it: the range (largest minus smallest) of its test error over
    the second half of its training time, where what remains of the optimization is small
    next to the checkpoint-to-checkpoint noise of the test error.
    """
    sbp = _solver(res, "sbp")
    if sbp["run"].nunique() != 1:
        return None
    late = sbp[sbp["train_time_s"] >= sbp["train_time_s"].max() / 2]["test_error"]
    return 100 * float(late.max() - late.min())


def _spread_at_quarter(res: ExperimentResult, libsvm_time: float) -> tuple[float, tuple[str, str]]:
    """How far SBP's mean error at a quarter of LIBSVM's time (pp) may be from the truth: the
    spread, and (``n runs``, the spread in words).

    Over several runs, :data:`~sbpbench.results.curves.SPREAD` standard errors of the runs'
    errors there; with one run, its own wander (:func:`_single_run_wander`).
    """
    wander = _single_run_wander(res)
    if wander is not None:
        return wander, ("1 run", _wander_text(wander))
    errors = 100 * values_before(_solver(res, "sbp"), libsvm_time / 4)
    _, se = mean_and_se(errors[~np.isnan(errors)])
    n = int((~np.isnan(errors)).sum())
    return SPREAD * se, (f"{n} runs", f"{SPREAD:g} standard errors of the {n} runs' errors there, {SPREAD * se:.2f} pp")


def _wander_text(wander: float) -> str:
    return (f"the run's own wander, {wander:.2f} pp (the range of its test error over the second half of its "
            "training time)")


def _libsvm_row(res: ExperimentResult, printed: float) -> tuple[str, str]:
    error, seconds = _libsvm(res)
    return (f"{error:.2f}% in {seconds:.1f} s",
            f"error {_error_verdict(error, printed, _test_points(res))}; time: different machine (paper: Intel E7500)")


def _sbp_row(res: ExperimentResult, printed: float) -> tuple[str, str]:
    """SBP's mean error at a quarter of LIBSVM's time against the printed one (:func:`_error_verdict`).

    Inconclusive when the verdict would change within the spread of our error
    (:func:`_spread_at_quarter`): unless the difference plus the spread is within the printed
    precision (matches) or the difference minus the spread is beyond it (differs).
    """
    libsvm_time = _libsvm(res)[1]
    ours = _sbp_at_quarter(res, libsvm_time)
    if math.isnan(ours):
        return "-", f"not measured: {_no_checkpoint(res, libsvm_time)}"
    difference, tolerance = ours - printed, _tolerance(printed, _test_points(res))
    spread, (runs, text) = _spread_at_quarter(res, libsvm_time)
    if not abs(difference) + spread <= tolerance and not abs(difference) - spread > tolerance:
        return f"{ours:.2f}%", (f"inconclusive ({runs}): {difference:+.2f} pp from the printed value, and within "
                                f"{text} it would both match (within {tolerance:.2f} pp) and differ")
    return f"{ours:.2f}%", _error_verdict(ours, printed, _test_points(res))


def _reaches(res: ExperimentResult, margin: float) -> tuple[bool | None, str]:
    """Claim: SBP reaches LIBSVM's error plus ``margin`` (pp) within a quarter of LIBSVM's time.

    Reaching is a run's first checkpoint at or below it (the error then moves by a test point or
    two); a run that never reaches it makes the claim fail. Over several runs, held when the
    quarters of LIBSVM's times exceed SBP's reaching times by two standard errors of the
    difference of their means (LIBSVM's own spread counted when it has several runs), did not
    hold when below by as much, else inconclusive. With a
    single run, inconclusive when SBP's error at a quarter of LIBSVM's time is closer to the
    target than the run's wander (:func:`_spread_at_quarter`): a crossing then says only where
    the noise was.
    """
    lib_err, lib_time = _libsvm(res)
    sbp = _solver(res, "sbp")
    target = lib_err + margin
    firsts = np.array([run[100 * run["test_error"] <= target + 1e-9]["train_time_s"].min()
                       for _, run in sbp.groupby("run")])
    reached = float(np.mean(firsts)) if not np.any(np.isnan(firsts)) else math.inf
    when = f"first at {reached:.1f} s" if np.isfinite(reached) else "never"
    at_quarter = _sbp_at_quarter(res, lib_time)
    there = (_no_checkpoint(res, lib_time) if math.isnan(at_quarter)
             else f"1/4 of LIBSVM's time: {lib_time / 4:.1f} s, where its error is {at_quarter:.2f}%")
    measured = f"SBP reaches {target:.2f}% {when} ({there}); LIBSVM {lib_err:.2f}% at {lib_time:.1f} s"
    if not np.isfinite(reached):
        return False, measured
    if len(firsts) > 1:
        (quarter, se_q), (first, se_f) = mean_and_se(_libsvm_times(res) / 4), mean_and_se(firsts)
        ahead, se = quarter - first, math.hypot(0.0 if math.isnan(se_q) else se_q, se_f)  # one LIBSVM run: no spread
        return above_zero(ahead, se), (f"{measured}; a quarter of LIBSVM's time minus SBP's reaching time "
                                       f"{ahead:.1f} s ± {se:.1f} (mean ± standard error over {len(firsts)} runs)")
    spread, (_, text) = _spread_at_quarter(res, lib_time)
    if abs(at_quarter - target) < spread:
        return None, (f"{measured}; at 1/4 of LIBSVM's time SBP is {at_quarter - target:+.2f} pp from the target, "
                      f"within {text}")
    return reached <= lib_time / 4, measured


#: Section 5 (with bias, on an Intel E7500): per data set, the experiment, LIBSVM's test error
#: (%) and seconds, and SBP's test error (%) in a quarter of that time.
SECTION5 = (
    ("Adult", "sbp-libsvm-adult", 14.9, 195.0, 15.0),
    ("MNIST", "sbp-libsvm-mnist", 0.44, 1980.0, 0.46),
    ("Forest", "sbp-libsvm-forest", 1.8, 35 * 3600.0, 1.6),
)

LIBSVM = Numbers(tuple(
    row for dataset, exp, error, seconds, sbp_error in SECTION5 for row in (
        Printed(f"LIBSVM test error / time, {dataset}", f"{error}% in {seconds:g} s", (exp,),
                partial(_libsvm_row, printed=error)),
        Printed(f"SBP test error at 1/4 of LIBSVM's time, {dataset}", f"{sbp_error}%", (exp,),
                partial(_sbp_row, printed=sbp_error)),
    )))

# ----------------------------------------------------------------------------- Section 5 and Appendix A: claims


def _mean(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    grid, mean, _ = mean_curve(frame)
    return grid, mean


#: SBP is below on at least this share of the common kernel-evaluation range.
BELOW_SHARE = 0.75


def _common_grid(first: pd.DataFrame, second: pd.DataFrame,
                 upto: float = math.inf) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """50 points of a log grid over the kernel evaluations both solvers' runs cover (up to ``upto``),
    and each solver's runs' test errors there (interpolated in log kernel evaluations; runs by
    grid points); None when the range is empty."""
    (g1, _), (g2, _) = _mean(first), _mean(second)
    lo, hi = max(g1[0], g2[0]), min(g1[-1], g2[-1], upto)
    if hi <= lo:
        return None
    grid = np.logspace(np.log10(lo), np.log10(hi), 50)
    return grid, run_values_at(first, grid), run_values_at(second, grid)


def _sbp_below(res: ExperimentResult, other: str) -> tuple[bool | None, str]:
    """Claim: SBP's test error is below ``other``'s at equal kernel evaluations.

    Compared at 50 points of a log grid over the kernel-evaluation range both solvers' runs
    cover: at each, the runs' errors there (interpolated in log kernel evaluations), and the
    difference of the two means with its standard error. SBP is *below* at a point when
    ``other`` minus SBP is above zero by two standard errors, *not below* when it is at or below
    zero by two; where the runs cannot separate the two (late, when both have converged to the
    same error), the point counts for neither, with no tie allowance. Held when SBP is below on
    at least :data:`BELOW_SHARE` of the grid; did not hold when it is not below on more than the
    rest; else inconclusive.
    """
    common = _common_grid(_solver(res, "sbp"), _solver(res, other))
    if common is None:
        return False, "no common range of kernel evaluations"
    grid, at_sbp, at_oth = common
    lo, hi = grid[0], grid[-1]
    kinds = [above_zero(d, se) for d, se in (difference(at_oth[:, j], at_sbp[:, j]) for j in range(grid.size))]
    below, above = (float(np.mean([k is want for k in kinds])) for want in (True, False))
    a, b = at_sbp[:, -1], at_oth[:, -1]
    text = (f"SBP below {other} (by {SPREAD:g} standard errors) on {below:.0%} of [{lo:.2g}, {hi:.2g}] "
            f"kernel evaluations, at or above on {above:.0%}, not separated on {1 - below - above:.0%}; "
            f"at {hi:.2g}: SBP {_pm(*_mean_se(a))} vs {other} "
            f"{_pm(*_mean_se(b))}")
    return True if below >= BELOW_SHARE else False if above > 1 - BELOW_SHARE else None, text


def _settle_points(frame: pd.DataFrame) -> np.ndarray:
    """Each run's :func:`~sbpbench.results.curves.settle_point`, in log10 kernel evaluations."""
    return np.log10([settle_point(run) for _, run in frame.groupby("run")])


def _smo_late(res: ExperimentResult) -> tuple[bool | None, str]:
    """Claim: SMO makes little progress until late, then converges rapidly. On Figure 2's axis,
    kernel evaluations: held when SMO's runs' test errors settle
    (:func:`~sbpbench.results.curves.settle_point`, per run) later than SBP's runs', the
    difference of the means over runs of log10 kernel evaluations above 0 by two standard
    errors; did not hold when it is at or below 0 by two; else inconclusive (also with one run
    of each).

    Not fractions of each solver's own log range: SMO stops at its own convergence, so its range
    ends where it settles whatever the kernel evaluations. The settle point, not the point where
    half the error gap is closed: SMO's early error jumps (between 20% and 45% on Adult) make
    any first crossing of a level say little.
    """
    p_smo, p_sbp = _settle_points(_solver(res, "smo")), _settle_points(_solver(res, "sbp"))
    later, se = difference(p_smo, p_sbp)
    m_smo, m_sbp = float(np.mean(p_smo)), float(np.mean(p_sbp))
    return above_zero(later, se), (
        f"runs' test errors settle within {SETTLED_WITHIN:.0%} of their final values at {10 ** m_smo:.3g} kernel "
        f"evaluations, SMO; {10 ** m_sbp:.3g}, SBP; SMO later by {later:+.2f} ± {se:.2f} decades (mean ± standard "
        f"error of log10 kernel evaluations over {len(p_smo)} and {len(p_sbp)} runs)")


def _smo_early_not_advisable(res: ExperimentResult) -> tuple[bool | None, str]:
    """Claim: "unlike the other methods, terminating SMO early in order to obtain a cruder solution
    does not appear to be advisable" (Section 5). Decided on Figure 2's axis, from a common origin:
    over the kernel evaluations both SMO's and SBP's runs cover up to where SMO's test error settles
    (:func:`_settle_points`, the mean over runs of log10 kernel evaluations), SMO stopped early is
    compared with SBP stopped at the same kernel evaluations, at 50 points of a log grid
    (:func:`_common_grid`): SMO is *worse* at a point when its mean error minus SBP's is above 0 by
    two standard errors of the difference, *not worse* when it is at or below 0 by two. Held when
    SMO is worse on at least :data:`BELOW_SHARE` of that stretch; did not hold when it is not worse
    on more than the rest, or when SMO settles before the common range starts (an early stop of SMO
    then loses nothing); else inconclusive.
    """
    smo, sbp = _solver(res, "smo"), _solver(res, "sbp")
    settle = float(10 ** np.mean(_settle_points(smo)))
    common = _common_grid(smo, sbp, upto=settle)
    if common is None:
        return False, f"SMO settles at {settle:.3g} kernel evaluations, before SBP's first checkpoint"
    grid, at_smo, at_sbp = common
    kinds = [above_zero(*difference(at_smo[:, j], at_sbp[:, j])) for j in range(grid.size)]
    worse, not_worse = (float(np.mean([k is want for k in kinds])) for want in (True, False))
    held = True if worse >= BELOW_SHARE else False if not_worse > 1 - BELOW_SHARE else None
    return held, (f"before SMO settles ({settle:.3g} kernel evaluations), on [{grid[0]:.2g}, {grid[-1]:.2g}]: SMO "
                  f"above SBP (by {SPREAD:g} standard errors) on {worse:.0%}, at or below on {not_worse:.0%}; mean "
                  f"error over that stretch SMO {100 * float(at_smo.mean()):.2f}%, SBP "
                  f"{100 * float(at_sbp.mean()):.2f}% ({smo['run'].nunique()} and {sbp['run'].nunique()} runs)")


def _perceptron_close(res: ExperimentResult) -> tuple[bool | None, str]:
    """Claim: the Perceptron is close to SBP in its first epoch: within 0.5 pp, or 10% relative,
    of SBP's test error at equal kernel evaluations at the end of its first epoch.

    The Perceptron's runs' errors at their first checkpoint of epoch 1 or later, SBP's runs'
    errors at the mean kernel evaluations there; the difference of the means and its standard
    error. Held when the difference is within the tolerance with two standard errors to spare,
    did not hold when it is beyond it by two standard errors, else inconclusive.
    """
    per, sbp = _solver(res, "perceptron"), _solver(res, "sbp")
    end1 = first_epoch_end(per)
    if end1 is None:
        return False, "the Perceptron did not finish its first epoch"
    e_p, e_s = _first_epoch_errors(per), run_values_at(sbp, end1)
    gap, se = difference(e_p, e_s)
    tol = max(5e-3, 0.1 * float(np.mean(e_s)))
    held = True if abs(gap) + SPREAD * se <= tol else False if abs(gap) - SPREAD * se > tol else None
    return held, (f"after its first epoch ({end1:.3g} kernel evaluations) Perceptron {_pm(*_mean_se(e_p))} vs SBP "
                  f"{_pm(*_mean_se(e_s))} (mean ± standard error over runs; close: within "
                  f"{100 * tol:.2f} pp)")


def _first_epoch_errors(frame: pd.DataFrame) -> pd.Series:
    """Each run's test error at its first checkpoint with ``epoch >= 1``, by run (runs that
    never finish an epoch are left out)."""
    return frame[frame["epoch"] >= 1].sort_values("checkpoint").groupby("run")["test_error"].first()


def _final_errors(frame: pd.DataFrame) -> pd.Series:
    """Each run's test error at its last checkpoint, by run."""
    return final_rows(frame).set_index("run")["test_error"]


def _mean_se(values: pd.Series | np.ndarray) -> tuple[float, float]:
    """Mean and standard error (in pp) of fractions over runs (:func:`mean_and_se`)."""
    return mean_and_se(100 * np.asarray(values, dtype=float))


def _pm(mean: float, se: float, unit: str = "%") -> str:
    return f"{mean:.2f}{unit} ± {se:.2f}" if not math.isnan(se) else f"{mean:.2f}{unit}"


def _epochs(frame: pd.DataFrame) -> str:
    return f"epoch {final_rows(frame)['epoch'].mean():.3g}"


#: The Perceptron's test error after its first epoch: its mean over the checkpoints of epochs 1 to 2
#: (its second pass).
FIRST_WINDOW = (1.0, 2.0)

#: ... and at its end: its mean over the checkpoints of the last tenth of its epochs (fractions of its last).
LAST_WINDOW = (0.9, 1.0)


def _window_errors(frame: pd.DataFrame, lo: float, hi: float, relative: bool = False) -> pd.Series:
    """Each run's mean test error over its checkpoints with ``lo <= epoch <= hi`` (``relative``:
    ``lo`` and ``hi`` are fractions of the run's last epoch), by run (runs with no checkpoint
    there are left out)."""
    means = {}
    for run, rows in frame.groupby("run"):
        scale = float(rows["epoch"].max()) if relative else 1.0
        inside = rows[rows["epoch"].between(lo * scale, hi * scale)]["test_error"]
        if len(inside):
            means[run] = float(inside.mean())
    return pd.Series(means, dtype=float)


def _perceptron_overfits(res: ExperimentResult) -> tuple[bool | None, str]:
    """Claim: the Perceptron overfits after its first epoch (Section 5, Figure 2 on Adult): its
    test error ends above its value at the end of its first epoch.

    The Perceptron's test error moves by several pp from one checkpoint to the next, so each run's
    error after its first epoch is its mean over its second epoch (:data:`FIRST_WINDOW`), and at
    its end its mean over the last tenth of its epochs (:data:`LAST_WINDOW`): one checkpoint each
    would decide by where the noise was (issue #29: 22.2% to 20.1% at single checkpoints on Adult,
    20.9% to 19.9% over windows). Per run, the second minus the first; over runs, the mean
    change and its standard error. Overfits when the mean change exceeds
    :data:`~sbpbench.results.curves.SPREAD` standard errors above 0; does not when it is at or
    below 0 by as much; otherwise (or with one run) inconclusive. Checkpoints before the first
    epoch play no part.
    """
    per = _solver(res, "perceptron")
    first, final = _window_errors(per, *FIRST_WINDOW), _window_errors(per, *LAST_WINDOW, relative=True)
    runs = first.index.intersection(final.index)
    if not len(runs):
        return False, "the Perceptron did not finish its first epoch"
    change = _mean_se(final[runs] - first[runs])
    return above_zero(*change), (f"Perceptron over its second epoch {_pm(*_mean_se(first[runs]))}, over the last "
                                 f"tenth of its epochs (to {_epochs(per)}) {_pm(*_mean_se(final[runs]))}: change "
                                 f"{_pm(*change, ' pp')} (mean ± standard error over {len(runs)} runs)")


def _sbp_keeps_improving(res: ExperimentResult) -> tuple[bool | None, str]:
    """Claim: after the first epoch, where the Perceptron is similar to SBP, "the SBP continues
    improving over additional passes" (Section 5): SBP's error falls after the Perceptron's first
    epoch and ends below the Perceptron's.

    The origin is the Perceptron's first epoch on the common axis, kernel evaluations
    (:func:`~sbpbench.results.curves.first_epoch_end`, where :func:`_perceptron_close` compares
    the two), not SBP's own first epoch, which costs up to n^2 kernel evaluations. Per run, SBP's
    final error minus its error there (interpolated in log kernel evaluations; paired), and the
    difference of SBP's and the Perceptron's mean final errors (each at the end of its own run),
    each with its standard error. Held when both are below 0 by more than
    :data:`~sbpbench.results.curves.SPREAD` standard errors; did not hold when SBP's change is at
    or above 0 by as much (it stalled) or the Perceptron ends below SBP by as much; otherwise (or
    with one run) inconclusive.
    """
    sbp, per = _solver(res, "sbp"), _solver(res, "perceptron")
    end1 = first_epoch_end(per)
    if end1 is None:
        return False, "the Perceptron did not finish its first epoch"
    final = _final_errors(sbp).sort_index()
    first = pd.Series(run_values_at(sbp, end1), index=final.index)
    change = _mean_se(final - first)
    (m_s, se_s), (m_p, se_p) = _mean_se(final), _mean_se(_final_errors(per))
    gap = (m_s - m_p, math.hypot(se_s, se_p))
    improves, below = above_zero(-change[0], change[1]), above_zero(-gap[0], gap[1])
    held = True if improves and below else False if improves is False or below is False else None
    return held, (f"SBP at the Perceptron's first epoch ({end1:.3g} kernel evaluations) {_pm(*_mean_se(first))}, "
                  f"at its end ({_epochs(sbp)}) {_pm(m_s, se_s)}: change {_pm(*change, ' pp')}; Perceptron at its "
                  f"end ({_epochs(per)}) {_pm(m_p, se_p)}: SBP minus Perceptron {_pm(*gap, ' pp')} (mean ± standard "
                  f"error over {len(final)} and {per['run'].nunique()} runs)")


def _figure2_claims(dataset: str, exp: str) -> ClaimsOn:
    """Section 5's claims about Figure 2, on one panel. Overfitting is claimed on Adult only."""
    on_adult = dataset == "Adult"
    return ClaimsOn(exp, (
        Claim(f"SBP below pegasos at equal kernel evaluations, {dataset}", partial(_sbp_below, other="pegasos"),
              needs=("sbp", "pegasos")),
        Claim(f"SBP below sdca at equal kernel evaluations, {dataset}", partial(_sbp_below, other="sdca"),
              needs=("sbp", "sdca")),
        Claim(f"SMO makes little progress until late, {dataset}", _smo_late, needs=("sbp", "smo")),
        Claim(f"Terminating SMO early is not advisable, unlike SBP (at equal kernel evaluations before SMO "
              f"settles), {dataset}", _smo_early_not_advisable, needs=("sbp", "smo")),
        Claim(f"Perceptron close to SBP in its first epoch, {dataset}", _perceptron_close,
              needs=("sbp", "perceptron")),
        Claim(f"SBP keeps improving after the Perceptron's first epoch and ends below the Perceptron, {dataset}",
              _sbp_keeps_improving, needs=("sbp", "perceptron")),
        Claim(f"Perceptron overfits after its first epoch, {dataset}", _perceptron_overfits,
              paper="yes (on Adult)" if on_adult else "not claimed",
              outcomes=(("overfits: claim held", "does not overfit: claim did not hold") if on_adult
                        else ("overfits", "does not overfit")),
              needs=("sbp", "perceptron")),
    ))


def _sbp_beats_fourier(res: ExperimentResult) -> tuple[bool | None, str]:
    """Appendix A: SBP is preferable to random Fourier features. At the cost (d-dimensional
    inner products) of the largest number of feature pairs run, the Fourier runs' final test
    errors against SBP's runs' errors there: held when the Fourier features' mean is above
    SBP's by two standard errors of the difference, did not hold when it is at or below by
    two, else inconclusive."""
    four = final_rows(_solver(res, "fourier"))
    cost = float(four["inner_products"].mean())
    sbp_err = run_values_at(_solver(res, "sbp"), cost)
    return above_zero(*difference(four["test_error"], sbp_err)), (
        f"at {cost:.3g} inner products ({int(four['pairs'].mean())} pairs): SBP {_pm(*_mean_se(sbp_err))} "
        f"vs Fourier {_pm(*_mean_se(four['test_error']))} (mean ± standard error over runs)")


def _fourier_solves_optimal(res: ExperimentResult) -> tuple[bool | None, str]:
    """Figure 3 plots "the error of the *optimal* classifier" of each linearized problem: held
    when every linear solve of the Fourier runs ended by its solver's stopping rule (LIBLINEAR's
    tolerance), not at its iteration cap; did not hold when one stopped at the cap."""
    four = _solver(res, "fourier")
    cap = _fourier_max_iter(res)
    capped = _capped_solves(res, four)
    worst = four.loc[four["svm_iterations"].idxmax()]
    return capped.empty, (
        f"{len(four) - len(capped)} of {len(four)} solves ended at the solver's tolerance, "
        f"{len(capped)} at the cap of {cap:,.0f} iterations; most iterations: {worst['svm_iterations']:,.0f} "
        f"(k = {worst['pairs']:g})")


def _fourier_claim(dataset: str, exp: str, claimed: bool) -> ClaimsOn:
    """Appendix A's claims on one panel of Figure 3: its points are optima of the linearized
    problems, and SBP is preferable ("at least on Reuters and MNIST")."""
    return ClaimsOn(exp, (
        Claim(f"Each Fourier point is the optimum of its linear SVM (Figure 3), {dataset}", _fourier_solves_optimal,
              needs=("fourier",)),
        Claim(f"SBP preferable to random Fourier features (Figure 3), {dataset}", _sbp_beats_fourier,
              paper="yes" if claimed else "not claimed",
              outcomes=("held", "did not hold") if claimed else ("SBP preferable", "Fourier preferable"),
              needs=("sbp", "fourier")),
    ))


def _libsvm_claim(dataset: str, exp: str, libsvm_error: float, sbp_error: float) -> ClaimsOn:
    """Section 5's runtime claim on one data set: the margin is the paper's own (SBP's error
    minus LIBSVM's), added to LIBSVM's error here."""
    margin = round(sbp_error - libsvm_error, 6)
    return ClaimsOn(exp, (
        Claim(f"SBP reaches LIBSVM's error {margin:+g} pp in 1/4 of LIBSVM's time, {dataset}",
              partial(_reaches, margin=margin), needs=("libsvm", "sbp")),
    ))


FIGURE2_PANELS = (("Reuters", "sbp-figure2-reuters"), ("Adult", "sbp-figure2-adult"), ("MNIST", "sbp-figure2-mnist"),
                  ("MNIST-t10k (substitute)", "sbp-figure2-mnist-t10k"))

CLAIMS = Claims((
    *(_figure2_claims(dataset, exp) for dataset, exp in FIGURE2_PANELS),
    _fourier_claim("Reuters", "sbp-figure3-reuters", claimed=True),
    _fourier_claim("Adult", "sbp-figure3-adult", claimed=False),
    _fourier_claim("MNIST", "sbp-figure3-mnist", claimed=True),
    *(_libsvm_claim(dataset, exp, error, sbp_error) for dataset, exp, error, _, sbp_error in SECTION5),
))

# ----------------------------------------------------------------------------- the figures' captions

#: Where our Figure 2 differs from the paper's (its caption: test error linear, kernel evaluations log).
FIGURE2_DIFFERENCES = (
    "Axes as the paper's caption gives them (test error on a linear axis, kernel evaluations on a log "
    "axis); the paper's text does not give their ranges. Ours: kernel evaluations from where every solver "
    "has begun (n, the cost of one kernel row: the Perceptron's cheaper first checkpoints lie left of it), "
    "the error axis from 0 to just above the constant classifier's test error, where the solvers start; "
    "the second row zooms on the final errors and is not in the paper.",
    "Shaded bands (not in the paper): one standard error over the runs, drawn where at least two runs "
    "cover the point; a line is the mean over the runs covering each point, drawn where at least half do.",
    "SMO's test error swings between the two constant classifiers' errors until its dual solution nears "
    "the optimum: it is drawn as dots (its mean at each checkpoint) until its mean error stays below the "
    "constant classifier's, then as a line. SMO stops at its own tolerance, short of ten epochs (the rows "
    "'epochs of SMO, Figure 2').",
    "The Perceptron is dashed after its first epoch and runs 100 epochs on Adult, as in the paper.",
)

#: Where our Figure 3 differs from the paper's.
FIGURE3_DIFFERENCES = (
    "Axes as the paper's caption gives them (test error linear, d-dimensional inner products log; a "
    "Fourier point costs k n inner products for k pairs, the linear solve ignored); ranges and zoom row "
    "as in Figure 2. Fourier features: one point per k (k = 1, 2, 4, ..., the mean over runs with a "
    "standard-error bar); points above the error axis are drawn as open triangles on its top edge.",
)


def _fourier_max_iter(res: ExperimentResult) -> float:
    """The iteration cap of the Fourier runs' linear solves (their resolved ``max_iter``)."""
    solvers = res.meta.get("resolved", {}).get("solvers", [])
    caps = [s.get("params", {}).get("max_iter") for s in solvers if s.get("name") == "fourier"]
    return float(caps[0]) if caps and caps[0] is not None else math.inf


def _capped_solves(res: ExperimentResult, four: pd.DataFrame) -> pd.DataFrame:
    """The rows of the Fourier runs ``four`` whose linear solve stopped at its iteration cap."""
    return four[four["svm_iterations"] >= _fourier_max_iter(res)]


def _figure3_notes(results: Results) -> tuple[str, ...]:
    """Measured on Figure 3's runs: how far the Fourier features went beside SBP, and which of their
    linear solves stopped at the iteration cap instead of the optimum the paper plots."""
    reach, capped = [], []
    for dataset, exp in FIGURE3_PANELS:
        res = results.get(exp)
        four = _solver(res, "fourier") if res is not None else pd.DataFrame()
        if res is None or four.empty:
            continue
        sbp = _solver(res, "sbp")
        reach.append(f"{dataset} k = {four['pairs'].max():g} ({four['inner_products'].max():.2g} inner products"
                     + (f"; SBP to {sbp['kernel_evals'].max():.2g}" if len(sbp) else "") + ")")
        hit = _capped_solves(res, four).groupby("pairs")["run"].nunique()
        if len(hit):
            runs = four["run"].nunique()
            capped.append(f"{dataset} at k = " + ", ".join(f"{k:g} ({n} of {runs} runs)" for k, n in hit.items()))
    notes = []
    if reach:
        notes.append("Measured: the Fourier runs stop at " + "; ".join(reach) + ": beyond their last point "
                     "there is no Fourier point at equal cost. The paper does not print its largest k; ours is "
                     "the configs' max_pairs. Each doubling of k costs about as much time and memory (2k "
                     "features of every training example) as all before it.")
    if capped:
        notes.append("Linear solves that stopped at their iteration cap, short of the optimum the paper plots: "
                     + "; ".join(capped) + ".")
    return tuple(notes)


FIGURE3_PANELS = (("Reuters", "sbp-figure3-reuters"), ("Adult", "sbp-figure3-adult"), ("MNIST", "sbp-figure3-mnist"))

# ----------------------------------------------------------------------------- the paper

PAPER = Paper(
    key="sbp",
    citation=CITATION,
    experiments=EXPERIMENTS,
    figures=(
        Figure("sbp-figure2", "SBP paper (Cotter, Shalev-Shwartz, Srebro 2012), Figure 2",
               "Test error vs kernel evaluations (Reuters, Adult, MNIST)", "SBP paper, Figure 2",
               ("sbp-figure2-reuters", "sbp-figure2-adult", "sbp-figure2-mnist"),
               ErrorCurves("kernel_evals", zoom=True), {"sbp-figure2-mnist": "sbp-figure2-mnist-t10k"},
               differences=FIGURE2_DIFFERENCES),
        Figure("sbp-figure3", "SBP paper, Figure 3 (Appendix A)",
               "Test error vs d-dimensional inner products: SBP vs random Fourier features", "SBP paper, Figure 3",
               ("sbp-figure3-reuters", "sbp-figure3-adult", "sbp-figure3-mnist"),
               ErrorCurves("inner_products", zoom=True, fit_label=("pairs", "k = {:g}")),
               differences=FIGURE3_DIFFERENCES, notes=_figure3_notes),
    ),
    sections=(
        Section(f"SBP paper, Table 2: nu derived from lambda ({CITATION})", (TABLE2,)),
        Section("SBP paper, Table 2 and the captions of Figures 2 and 3: data sizes and settings, as run",
                (SETTINGS, SMO_EPOCHS)),
        Section("SBP paper, Section 5: LIBSVM vs SBP (with bias)", (LIBSVM,)),
        Section("SBP paper, Section 5 and Appendix A: the claims", (CLAIMS,)),
    ),
    verdict_rules=("nu matches when ours rounds to the printed value at its 3 significant digits (within half a unit "
                   "of the third digit); a gap beyond that differs however small, and is given in units of that digit",
                   "a test error within half a unit of the paper's last printed digit (at least one test point)"),
    shared_runs=SHARED_RUNS,
)

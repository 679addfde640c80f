"""The Pegasos paper: Shalev-Shwartz, Singer, Srebro, *Pegasos: Primal Estimated sub-GrAdient SOlver
for SVM*, ICML 2007.

Reproduced here: Table 1 (Pegasos' training time to within 0.001 of the optimal objective),
Figure 2 (Pegasos against Norma, with and without projection, and against SGD with fixed
learning rates) and Figure 3 (the effect of the mini-batch size k), with every claim Section 5
makes about them, and its data sizes and settings against ours as run. Table 1's configs run
SVM-Perf (:mod:`sbpbench.solvers.svmperf`) beside Pegasos, but its data sets need downloads not
available where the committed results were made: its numbers and claims are declared not run, with
why. Every claim on Figures 2 and 3 is a :class:`~sbpbench.papers.declarations.Posed` comparison
on readers of this module (:class:`FinalOf`, :class:`After`, :class:`IterationsTo`), over a
declared region where the claim is about a range (of iterations, k, or kT).
The paper's figures use astro-ph, which is not publicly obtainable: ours use Reuters (linear
kernel, lambda = 2e-4, as the paper's astro-ph runs).

Norma (Kivinen, Smola, Williamson; :mod:`sbpbench.solvers.primal_sgd`) is SGD on the same
objective with step p/(lambda sqrt(t)) and no projection; k is the number of examples of a
Pegasos iteration (its mini-batch) and T the number of iterations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sbpbench.papers.declarations import (
    NO_RESULTS,
    Cause,
    Claims,
    Figure,
    FinalAgainstParameter,
    NotReproduced,
    NotRun,
    Numbers,
    ObjectiveCurves,
    Paper,
    Posed,
    Results,
    Section,
    needs_download,
    settings,
)
from sbpbench.papers.questions import (
    AllOf,
    Ends,
    Equal,
    Exceeds,
    FinalOf,
    Fraction,
    Match,
    Ratio,
    Resolved,
    RunParam,
    Runs,
    Setting,
)
from sbpbench.results.curves import (
    ReadAt,
    final_rows,
    first_reaching,
)
from sbpbench.results.lookup import ExperimentResult

CITATION = "Shalev-Shwartz, Singer, Srebro, Pegasos, ICML 2007"

#: The paper's astro-ph training examples in Figure 2 (Section 5).
ASTRO_PH_TRAIN = 29_882

#: The experiments (configs) that reproduce the paper, and why their results may be missing.
EXPERIMENTS: dict[str, NotRun] = {
    "pegasos-figure2-norma": NO_RESULTS,
    "pegasos-figure2-sgd": NO_RESULTS,
    "pegasos-figure2-zhang": NO_RESULTS,
    "pegasos-figure3-k": NO_RESULTS,
    "pegasos-table1-ccat": needs_download("RCV1-v2"),
    "pegasos-table1-covertype": needs_download("Forest/Covertype"),
}

#: The paper's accuracy (Section 5, Table 1): an objective within 0.001 of the optimal one.
WITHIN = 1e-3
WITHIN_REASON = f"{WITHIN:g}, the paper's accuracy of an objective"

# ----------------------------------------------------------------------------- Table 1


def _times(pegasos: float, svm_perf: float, svm_light: float) -> str:
    return f"Pegasos {pegasos:g} s (SVM-Perf {svm_perf:g} s, SVM-Light {svm_light:g} s)"


_CCAT_WHY = EXPERIMENTS["pegasos-table1-ccat"].verdict("pegasos-table1-ccat")
_COVERTYPE_WHY = EXPERIMENTS["pegasos-table1-covertype"].verdict("pegasos-table1-covertype")
_ASTRO_PH_WHY = "not run here: astro-ph (Joachims 2006) is not publicly obtainable"

#: Table 1: CPU seconds of Pegasos, SVM-Perf and SVM-Light per data set. Not run here: the
#: configs exist (Pegasos to within 0.001 of the optimum, SVM-Perf beside it), the data do not.
TABLE1 = Numbers((
    NotReproduced("Pegasos training time, CCAT", _times(2, 77, 20075), _CCAT_WHY),
    NotReproduced("Pegasos training time, Covertype", _times(6, 85, 25514), _COVERTYPE_WHY),
    NotReproduced("Pegasos training time, astro-ph", _times(2, 5, 80), _ASTRO_PH_WHY),
))

#: Section 5's claims about Table 1, none of which runs here.
TABLE1_NOT_RUN = Numbers((
    *(NotReproduced(f"Pegasos' objective within {WITHIN:g} of SVM-Perf's, and the same generalization error, {name}",
                    "yes", why, kind="claim")
      for name, why in (("CCAT", _CCAT_WHY), ("Covertype", _COVERTYPE_WHY), ("astro-ph", _ASTRO_PH_WHY))),
    NotReproduced("Pegasos significantly faster than SVM-Perf (all three data sets)", "yes",
                  "not run here: needs the RCV1-v2 and Forest/Covertype downloads (not available offline; the "
                  "Table 1 configs run svmperf beside Pegasos), and astro-ph is not publicly obtainable", kind="claim"),
    NotReproduced("Pegasos' runtime depends on lambda, not on the number of examples: Covertype "
                  "(581,012 examples, lambda 1e-6) slower than CCAT (804,414, lambda 1e-4)", "6 s > 2 s",
                  "not run here: needs the RCV1-v2 and Forest/Covertype downloads (not available offline)",
                  kind="claim"),
))

# ----------------------------------------------------------------------------- Section 5: data sets and settings


#: Figure 2 (right)'s fixed learning rates ("a fixed value from the set {0.001, 0.01, 0.1, 1, 10}").
FIGURE2_ETAS = (0.001, 0.01, 0.1, 1.0, 10.0)

#: Fixed-rate SGD's label prefix; the rest of the label is its eta.
SGD_LABEL = "sgd eta="


@dataclass(frozen=True)
class FixedEtas:
    """The fixed learning rates of a run's fixed-rate SGD solvers (their labels), as one sorted set."""

    def read(self, found: Sequence[ExperimentResult]) -> Setting:
        etas = tuple(sorted(float(label[len(SGD_LABEL):]) for label in dict.fromkeys(found[0].curves["solver"])
                            if label.startswith(SGD_LABEL)))
        return Setting((etas,), f"eta = {', '.join(f'{eta:g}' for eta in etas) or 'none'}")


@dataclass(frozen=True)
class Boosting:
    """The parameters of a run's Pegasos solvers that boost the confidence (Figure 1 run s times
    T/s iterations, one vector picked: a parameter named for boosting or confidence), as one set:
    empty when every Pegasos run is one run to its budget."""

    def read(self, found: Sequence[ExperimentResult]) -> Setting:
        names = tuple(sorted({name for s in found[0].meta.get("resolved", {}).get("solvers", [])
                              if s.get("name") == "pegasos" for name in s.get("params", {})
                              if "boost" in name or "confidence" in name}))
        return Setting((names,), f"Pegasos boosting parameters: {', '.join(names) or 'none (one run of T iterations)'}")


_SIZES = (("CCAT", "pegasos-table1-ccat", 804_414, 47_236), ("Covertype", "pegasos-table1-covertype", 581_012, 54))

#: Where the paper gives its data sets and settings.
SECTION5 = "Section 5"

#: A lambda as run equals the paper's to the rounding of a float (the config's expression evaluated).
LAMBDA_TOLERANCE = (1e-9, "relative 1e-9, the rounding of the config's lambda expression")


def _lambda(what: str, printed: float, experiment: str) -> Posed:
    """lambda as our config ran it against the paper's (printed as ``1e-4``)."""
    return Posed(what, SECTION5, f"{printed:.0e}".replace("e-0", "e-"), Equal(Resolved(("problem.lambda",)), printed,
                                                       rel_tol=LAMBDA_TOLERANCE[0], reason=LAMBDA_TOLERANCE[1]),
                 (experiment,))


#: Section 5's data sets and settings: the paper's numbers, ours as configured and run.
SETTINGS = Numbers(settings(
    *(Posed(f"{name}: {what}", SECTION5, f"{printed:,}", Equal(Resolved(paths, "sum"), printed), (experiment,))
      for name, experiment, examples, features in _SIZES
      for what, printed, paths in (("examples", examples, ("dataset.n_train", "dataset.n_test")),
                                   ("features", features, ("dataset.n_features",)))),
    NotReproduced("CCAT: sparsity", "0.16%", "not run here: needs the RCV1-v2 download; meta.json records no sparsity"),
    NotReproduced("Covertype: sparsity", "22.22%",
                  "not run here: needs the Forest/Covertype download; meta.json records no sparsity"),
    NotReproduced("astro-ph: examples, features, sparsity", "62,369, 99,757, 0.08%",
                  "not run here: astro-ph (Joachims 2006) is not publicly obtainable"),
    _lambda("lambda, CCAT", 1e-4, "pegasos-table1-ccat"),
    _lambda("lambda, Covertype", 1e-6, "pegasos-table1-covertype"),
    _lambda("lambda, astro-ph (ours: its substitute, Reuters)", 2e-4, "pegasos-figure2-norma"),
    Posed("Figure 2: astro-ph training / test examples", SECTION5, "29,882 / 32,487",
          Equal(Resolved(("dataset.n_train", "dataset.n_test")), (ASTRO_PH_TRAIN, 32_487)), ("pegasos-figure2-norma",),
          outcomes=("matches", "differs: cause: data (Reuters stands in for astro-ph, which is not obtainable)")),
    Posed("Figure 2 (left): Norma's optimal p", SECTION5, "in [0.7, 0.716]",
          Equal(RunParam(("norma",), "p"), 0.708, within=0.008, reason="the paper's range [0.7, 0.716]"),
          ("pegasos-figure2-norma",)),
    *(Posed(f"Figure 2 ({side}): iterations", SECTION5, "10^6",
            Equal(Ends("iteration", per="run"), 1e6, rel_tol=0.01, reason="1%"), (experiment,))
      for side, experiment in (("left", "pegasos-figure2-norma"), ("right", "pegasos-figure2-sgd"))),
    Posed("Figure 2 (right): fixed learning rates eta", SECTION5, "0.001, 0.01, 0.1, 1, 10",
          Equal(FixedEtas(), tuple(sorted(FIGURE2_ETAS))), ("pegasos-figure2-sgd",)),
    *(Posed(f"Figure 2 ({side}): k (examples per iteration) of every method", SECTION5, "1",
            Equal(RunParam((), "mini_batch"), 1), (experiment,))
      for side, experiment in (("left", "pegasos-figure2-norma"), ("right", "pegasos-figure2-sgd"))),
    NotReproduced("machine (Table 1's times)", "Pegasos in C++, 2.8 GHz Intel Xeon, 4 GB, Linux",
                  "not run here: Table 1 is not run and no other row compares seconds with the paper's; "
                  "each run's machine is in its meta.json (host)"),
    *(Posed(f"boosting the confidence, {what}", SECTION5, "omitted (Figure 1 as printed)", Equal(Boosting(), ()),
            (experiment,))
      for what, experiment in (("Figure 2 (left)", "pegasos-figure2-norma"),
                               ("Figure 2 (right)", "pegasos-figure2-sgd"), ("Figure 3", "pegasos-figure3-k"))),
    *(Posed(f"bias term, {what}", SECTION5, "none (all experiments)", Equal(Resolved(("problem.bias",)), False),
            (experiment,))
      for what, experiment in (("Table 1, CCAT", "pegasos-table1-ccat"),
                               ("Table 1, Covertype", "pegasos-table1-covertype"),
                               ("Figure 2 (left)", "pegasos-figure2-norma"),
                               ("Figure 2 (right)", "pegasos-figure2-sgd"),
                               ("Figure 3", "pegasos-figure3-k"))),
))

# ----------------------------------------------------------------------------- Figures 2 and 3: claims

#: "Has not converged": a final objective more than this factor above Pegasos'.
NOT_CONVERGED = 1.1
NOT_CONVERGED_REASON = f"{NOT_CONVERGED:g}: not converged, more than 10% above Pegasos'"


def _objective_after(run: pd.DataFrame, examples: float, per: int) -> float:
    """One run's primal objective after ``examples`` examples (``per`` an iteration),
    interpolated in log iterations between its checkpoints (its first or last beyond them)."""
    run = run[run["iteration"] > 0]
    return float(np.interp(np.log(examples / per), np.log(run["iteration"].to_numpy(float)),
                           run["primal_objective"].to_numpy(float)))


@dataclass(frozen=True)
class After:
    """Each run of the solver labelled ``label`` (``solver_name`` ``name``): its primal objective
    after ``examples`` examples processed, ``per`` an iteration (its mini-batch size k; 1: after
    ``examples`` iterations), interpolated in log iterations between its checkpoints."""

    label: str
    name: str
    examples: float
    per: int = 1

    @property
    def solvers(self) -> tuple[str, ...]:
        return (self.name,)

    def read(self, found: Sequence[ExperimentResult]) -> Runs:
        curves = found[0].curves
        runs = curves[curves["solver"] == self.label].sort_values("checkpoint", kind="stable").groupby("run")
        values = np.array([_objective_after(run, self.examples, self.per) for _, run in runs])
        return Runs(values, np.ones(len(values), dtype=bool), f"{self.label} after {self.examples:g} examples")


@dataclass(frozen=True)
class IterationsTo:
    """Each run of the solver labelled ``label`` (``solver_name`` ``name``): the iterations of its
    first checkpoint within :data:`WITHIN` (the paper's accuracy) of Pegasos' mean final objective
    in the same experiment; a run that never gets there is censored at its last checkpoint."""

    label: str
    name: str

    @property
    def solvers(self) -> tuple[str, ...]:
        return (self.name, "pegasos")

    def read(self, found: Sequence[ExperimentResult]) -> Runs:
        c = found[0].curves
        target = float(final_rows(c[c["solver"] == "pegasos"])["primal_objective"].mean()) + WITHIN
        rows = first_reaching(c[c["solver"] == self.label], "primal_objective", target)
        return Runs(rows["iteration"].to_numpy(float), (rows["primal_objective"] <= target).to_numpy(),
                    f"{self.label} iterations to {target:.4g}")


#: Where the projection's effect on Norma is judged: the decades of iterations before the two
#: level off (10^3 and 10^4; Figure 2's range is 10^3 to 10^6). From 10^5 on both approach the
#: same level (issue #29: 0.42 against 0.39, then 0.167 against 0.165) and the converged tail
#: counts neither for nor against: the claim is about the approach.
NORMA_DECADES = (1e3, 1e4)

#: Where Figure 2's "small T" is compared: after this many iterations.
SMALL_T = 100

#: "At about the same rate": within this factor of Pegasos' iterations (0.3 decades on the
#: paper's log axis).
SAME_RATE = 2.0

#: Figure 2 (right): the paper names no eta of its set as the one that converges or the one that
#: fails. Ours: the eta whose runs end lowest in the committed runs (0.01), and the largest (10).
CONVERGING_ETA, FAILING_ETA = "sgd eta=0.01", "sgd eta=10"

#: Zhang (2004)'s eta, "a poor choice", and the smaller eta run beside it (pegasos-figure2-zhang).
ZHANG_ETAS = ("sgd eta=1e-05", "sgd eta=0.0001")

#: Figure 3 (left): the iterations T of the T-fixed runs (their end, where they are judged).
T_FIXED = 1000

#: Figure 3 (left), T fixed (T = 1000, the runs' end): the mini-batch sizes over which "the
#: convergence improves as k gets larger" is judged, each doubling of k by more than the paper's
#: accuracy. Beyond 64 the runs have converged at T = 1000 (k = 128 and 256 end within 0.001 of
#: each other and of the optimum): an improvement smaller than the accuracy is not judged.
K_IMPROVES = (1, 2, 4, 8, 16, 32, 64)

#: Figure 3 (right), kT fixed: the numbers of examples kT at which the objectives of every k are
#: compared (and the figure drawn), from 50 iterations of the largest k (12,800 examples: below,
#: k = 256 has made too few steps for a rate to show) to the runs' end (256,000).
KT_JUDGED = (16_000, 64_000, 256_000)

#: Figure 3 (right): every k of the kT-fixed runs, each compared with k = 1.
K_CONSTANT = (1, 2, 4, 8, 16, 32, 64, 128, 256)

#: "Approximately constant": each k's mean objective within this fraction of k = 1's (a declared
#: margin: 5%, about a third of the spread of the paper's Figure 3 right-hand curves, the smallest
#: change its log axis shows).
CONSTANT_WITHIN = 0.05


#: The record of ``scripts/pegasos_causes.py`` (relative to the results root): per row of Figure 2's
#: claims that it tests (:data:`SGD_ROW`, :data:`NORMA_ROW`), the cause of a difference and its evidence.
CAUSES_RECORD = "analyses/pegasos-causes.json"

#: The record's row of the fixed-rate SGD claim (Figure 2, right).
SGD_ROW = "fixed-rate sgd as fast as pegasos"

#: The record's row of the check of the test hinge loss against Norma's (Figure 2, left, dashed).
NORMA_ROW = "test hinge loss against norma"


def _explained(row: str) -> Cause:
    """Where the cause of claim row ``row`` is recorded: :data:`CAUSES_RECORD`."""
    return Cause(CAUSES_RECORD, row, "pegasos_causes.py")


def as_fast_as_pegasos(label: str) -> tuple[Fraction, Ratio]:
    """Figure 2 (right): the fixed-rate SGD run labelled ``label`` converges about as fast as Pegasos.
    Most of its runs get within :data:`WITHIN` of Pegasos' final objective, and Pegasos' iterations
    to that level over its iterations are at least 1/:data:`SAME_RATE`.

    Parameters
    ----------
    label : str
        The solver's label (``sgd eta=<eta>``).

    Returns
    -------
    tuple of Fraction and Ratio
        The two comparisons, read on one experiment that runs Pegasos beside the solver.
    """
    return (Fraction(IterationsTo(label, "sgd"), 0.5, f"most runs get within {WITHIN:g} of Pegasos' final objective"),
            Ratio(((IterationsTo("pegasos", "pegasos"), 1), (IterationsTo(label, "sgd"), -1)), 1 / SAME_RATE,
                  f"1/{SAME_RATE:g}: within {SAME_RATE:g}x Pegasos' iterations (0.3 decades of the paper's log axis)",
                  f"Pegasos' iterations over {label}'s"))


def _t_fixed(k: int) -> FinalOf:
    return FinalOf(f"T fixed, k={k}", "pegasos")


def _kt_fixed(k: int, kt: float) -> After:
    return After(f"kT fixed, k={k}", "pegasos", kt, k)


CLAIMS = Claims((
    Posed("Pegasos clearly outperforms Norma; Norma has not converged after 10^6 iterations", "Section 5",
          "yes", Ratio(((FinalOf("norma", "norma"), 1), (FinalOf("pegasos", "pegasos"), -1)), NOT_CONVERGED,
                       NOT_CONVERGED_REASON, "Norma's final objective over Pegasos'"), ("pegasos-figure2-norma",)),
    Posed("the projection step improves Norma (before the two level off: 10^3 and 10^4 iterations)", "Section 5",
          "yes", AllOf(tuple(
              Exceeds(After("norma", "norma", t), After("norma (projection)", "norma", t), WITHIN, WITHIN_REASON,
                      f"Norma minus Norma with projection after {t:g} iterations") for t in NORMA_DECADES)),
          ("pegasos-figure2-norma",)),
    Posed("Pegasos still outperforms Norma with projection", "Section 5", "yes",
          Exceeds(FinalOf("norma (projection)", "norma"), FinalOf("pegasos", "pegasos"), WITHIN, WITHIN_REASON,
                  "Norma with projection minus Pegasos, final objective"), ("pegasos-figure2-norma",)),
    Posed("a check of ours: Pegasos ends with a lower test hinge loss than Norma", "Figure 2 (dashed)",
          "not claimed (the dashed curves are drawn; the text says nothing of them)",
          Exceeds(FinalOf("norma", "norma", "test_hinge_loss"), FinalOf("pegasos", "pegasos", "test_hinge_loss"),
                  WITHIN, WITHIN_REASON, "Norma minus Pegasos, final test hinge loss"), ("pegasos-figure2-norma",),
          kind="check", outcomes=("Pegasos lower", "Pegasos not lower"), cause=_explained(NORMA_ROW)),
    Posed("the projection step is important for Pegasos, especially when T is small", "Section 5", "yes", AllOf((
        Ratio(((After("pegasos (no projection)", "pegasos", SMALL_T), 1), (After("pegasos", "pegasos", SMALL_T), -1)),
              1.0, "1: any excess (equal objectives count against)",
              f"objective without projection over Pegasos' at T = {SMALL_T}"),
        Ratio(((After("pegasos (no projection)", "pegasos", SMALL_T), 1), (After("pegasos", "pegasos", SMALL_T), -1),
               (FinalOf("pegasos (no projection)", "pegasos"), -1), (FinalOf("pegasos", "pegasos"), 1)),
              1.0, "1: the excess at T = 100 larger than at the end (equal excesses count against)",
              f"that excess at T = {SMALL_T} over the one at the end"))), ("pegasos-figure2-norma",)),
    Posed(f"fixed-rate SGD: some eta converge about as fast as Pegasos (here: {CONVERGING_ETA}), others fail "
          f"(here: {FAILING_ETA})", "Figure 2 (right)", "yes", AllOf((
              *as_fast_as_pegasos(CONVERGING_ETA),
              Ratio(((FinalOf(FAILING_ETA, "sgd"), 1), (FinalOf("pegasos", "pegasos"), -1)), NOT_CONVERGED,
                    NOT_CONVERGED_REASON, f"{FAILING_ETA}'s final objective over Pegasos'"))),
          ("pegasos-figure2-sgd",), cause=_explained(SGD_ROW)),
    Posed(f"Zhang's eta = 1e-5 is a poor choice: the best eta is substantially larger (here: {CONVERGING_ETA}, "
          "1000 times, ends lower than eta = 1e-5 and 1e-4)", "Section 5", "yes", AllOf(tuple(
              Exceeds(FinalOf(small, "sgd", experiment=1), FinalOf(CONVERGING_ETA, "sgd"), WITHIN, WITHIN_REASON,
                      f"{small} minus {CONVERGING_ETA}, final objective") for small in ZHANG_ETAS)),
          ("pegasos-figure2-sgd",), also=("pegasos-figure2-zhang",)),
    Posed(f"with T fixed, the objective improves as k grows (judged over k = {K_IMPROVES[0]} to {K_IMPROVES[-1]}, "
          "before it levels off)", "Figure 3 (left)", "yes", AllOf(tuple(
              Exceeds(_t_fixed(a), _t_fixed(b), WITHIN, WITHIN_REASON, f"k = {a} minus k = {b}, final objective")
              for a, b in zip(K_IMPROVES, K_IMPROVES[1:]))), ("pegasos-figure3-k",)),
    Posed(f"with kT fixed, the objective is about constant over k (k = 1 to 256, within {CONSTANT_WITHIN:.0%} of "
          f"k = 1's at kT = {', '.join(f'{kt:,}' for kt in KT_JUDGED)})", "Figure 3 (right)", "yes", AllOf(tuple(
              Match(_kt_fixed(k, kt), 0.0, 0.0, f"{CONSTANT_WITHIN:.0%} of k = 1's objective (declared: the "
                    "smallest change the paper's log axis shows)", other=_kt_fixed(1, kt), relative=CONSTANT_WITHIN)
              for kt in KT_JUDGED for k in K_CONSTANT[1:])), ("pegasos-figure3-k",)),
))

# ----------------------------------------------------------------------------- the figures' captions

#: Where our Figure 2 differs from the paper's.
FIGURE2_DIFFERENCES = (
    "Reuters (linear kernel, lambda = 2e-4) stands in for astro-ph, which is not obtainable.",
    "As in the paper, the left plot draws the objective (solid) and the test hinge loss (dashed) in one "
    "plot, the right plot objectives only; the paper's text does not give the axes' scales: ours are "
    "log-log (Norma's objective spans four decades), iterations up to 10^6 as the paper's text says.",
    "Thin grey lines beneath the others, marked 'extra' in the legend: Pegasos without projection and Norma "
    "with projection, which the paper ran but did not draw ('We omit the graphs due to the lack of space'); "
    "where one meets the solver it varies, that solver's line covers it.",
    "Shaded bands (not in the paper): one standard error over the runs.",
)

#: Where our Figure 3 differs from the paper's.
FIGURE3_DIFFERENCES = (
    "Reuters (linear kernel, lambda = 2e-4) stands in for astro-ph, which is not obtainable.",
    "The paper's text does not give its values of T and kT. Ours are those the claims are judged at, read from the "
    "committed runs' checkpoints (interpolated in log iterations between them): left, the objective after "
    f"T = {T_FIXED:,} iterations (T fixed); right, after kT = {', '.join(f'{kt:,}' for kt in KT_JUDGED)} examples "
    "processed, each k read at iteration kT / k (kT fixed); one line per value, mean over runs with "
    "standard-error bars.",
)


def _figure2_epochs(results: Results) -> tuple[str, ...]:
    """Measured: how many epochs of our data Figure 2's iterations are, against the paper's astro-ph."""
    res = results.get("pegasos-figure2-norma")
    if res is None:
        return ()
    rows = res.curves[res.curves["epoch"] > 0]
    n = float((rows["iteration"] / rows["epoch"]).median())
    top = float(res.curves["iteration"].max())
    return (f"Measured: {top:.3g} iterations are {top / n:.0f} epochs of our {n:.0f} training examples (top axis), "
            f"against {top / ASTRO_PH_TRAIN:.0f} of the paper's {ASTRO_PH_TRAIN:,} astro-ph examples.",)


# ----------------------------------------------------------------------------- the paper

PAPER = Paper(
    key="pegasos",
    citation=CITATION,
    experiments=EXPERIMENTS,
    figures=(
        Figure("pegasos-figure2", "Pegasos paper (Shalev-Shwartz, Singer, Srebro 2007), Figure 2",
               "Primal objective (solid) and test hinge loss (dashed, left) vs iterations: Pegasos vs Norma "
               "(left), vs fixed-rate SGD (right)",
               "Pegasos paper, Figure 2", ("pegasos-figure2-norma", "pegasos-figure2-sgd"),
               # "In the left plot, the solid lines designate the objective value and the dashed lines
               # depict the loss on the test set": the right plot shows objectives only
               ObjectiveCurves(dpi=110, test_loss=("pegasos-figure2-norma",),
                               # "We omit the graphs due to the lack of space"
                               extras=("pegasos (no projection)", "norma (projection)"), epochs_axis=True),
               differences=FIGURE2_DIFFERENCES, notes=_figure2_epochs,
               # the caption: "Comparisons of Pegasos to Norma (left) and Pegasos to stochastic gradient
               # descent with a fixed learning rate (right)"
               titles={"pegasos-figure2-norma": "Pegasos vs. Norma",
                       "pegasos-figure2-sgd": "Pegasos vs. SGD with a fixed learning rate"},
               names={"pegasos": "Pegasos", "norma": "Norma", "pegasos (no projection)": "Pegasos without projection",
                      "norma (projection)": "Norma with projection",
                      **{f"{SGD_LABEL}{eta:g}": f"SGD, eta = {eta:g}" for eta in FIGURE2_ETAS}}),
        Figure("pegasos-figure3", "Pegasos paper, Figure 3",
               "Effect of the mini-batch size k: T fixed (left), kT fixed (right)", "Pegasos paper, Figure 3",
               ("pegasos-figure3-k",),
               FinalAgainstParameter("mini_batch", "k (examples per iteration)", dpi=110,
                                     # where the claims are judged: T fixed at the runs' end (T = 1000)
                                     read_at={"T fixed": ReadAt((T_FIXED,), "T"),
                                              "kT fixed": ReadAt(KT_JUDGED, "kT", times_parameter=True)}),
               differences=FIGURE3_DIFFERENCES),
    ),
    sections=(
        Section(f"Pegasos paper, Table 1 ({CITATION})", (TABLE1, TABLE1_NOT_RUN)),
        Section("Pegasos paper, Section 5: data sets and settings (ours: as configured and run)", (SETTINGS,)),
        Section("Pegasos paper, Figures 2 and 3: the claims (on Reuters, linear kernel, lambda = 2e-4: astro-ph "
                "is not obtainable)", (CLAIMS,), figures=("pegasos-figure2", "pegasos-figure3")),
    ),
)

"""The problems runs solve, kept between runs by whoever executes them.

A :class:`ProblemCache` is an object its owner creates and hands on: the sweep builds every
experiment's problem with one to check it before any run (the sequential executor's own
cache, so that its runs solve those same problems and nothing is built twice), and each
thread that executes runs elsewhere (a worker process, a thread of a Dask worker) has one of
its own (:mod:`sbpbench.execution.executors`). Every problem is built by
:func:`sbpbench.experiment.assemble.prepare`, so the client and every worker solve the same one.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from sbpbench.data import Split
from sbpbench.experiment import assemble
from sbpbench.experiment.config import Experiment, SolverSpec


@dataclass
class _Kept:
    """What is kept for one experiment: the problem last asked for and, in a sweep of the
    kernel or the problem, the data its entries' problems are built from (each with its key)."""

    problem: tuple[tuple, assemble.Prepared] | None = None
    splits: tuple[tuple, tuple[Split, Split]] | None = None


class ProblemCache:
    """Prepared problems, each built once while it is kept.

    Per experiment (by name) it keeps the problem last asked for and, when a sweep gives the
    solver entries different problems (``exp.swept``), the experiment's data, so that the
    next entry's problem is built without loading them again. Not shared by two runs at
    once: a problem's kernel counts the evaluations of the one run using it.

    Parameters
    ----------
    experiments : int or None
        How many experiments it keeps at most, the one asked for least recently dropped
        first (before the next problem is built); None: every one until :meth:`release`.
    """

    def __init__(self, experiments: int | None = 1) -> None:
        self.experiments = experiments
        self._kept: OrderedDict[str, _Kept] = OrderedDict()

    def prepared(self, exp: Experiment, spec: SolverSpec | None = None, run: int = 0) -> assemble.Prepared:
        """The prepared problem of ``exp`` (of its solver entry ``spec``, for its run ``run``), built unless kept.

        Parameters
        ----------
        exp : Experiment
            The experiment.
        spec : SolverSpec, optional
            One of its solver entries (in a sweep of the kernel or the problem, each entry
            has its own problem, :meth:`~sbpbench.experiment.config.Experiment.for_solver`).
        run : int
            The run (under k-fold cross-validation, run ``r`` validates on fold ``r``,
            :meth:`~sbpbench.experiment.config.Experiment.for_run`).

        Returns
        -------
        Prepared
            The problem as :func:`~sbpbench.experiment.assemble.prepare` builds it.

        Raises
        ------
        UserError
            What building the problem raises (the data are missing or malformed, it does
            not fit in memory...).
        """
        variant = exp.for_run(spec, run)
        key = assemble.problem_key(variant)
        kept = self._kept.pop(exp.name, None) or _Kept()
        self._kept[exp.name] = kept  # the most recently asked for last
        while self.experiments is not None and len(self._kept) > self.experiments:
            self._kept.popitem(last=False)  # let the others go before a new problem is built
        if not (exp.swept or exp.folds):
            kept.splits = None  # only the entries of a sweep, and the folds, share their data
        if kept.problem is None or kept.problem[0] != key:
            kept.problem = None
            shared = exp.swept or exp.folds
            kept.problem = (key, assemble.prepare(variant, self._splits(kept, exp) if shared else None,
                                                  assemble.reads_nu(exp, spec, run)))
        return kept.problem[1]

    def release(self, exp: Experiment) -> None:
        """Let what is kept for ``exp`` go (its runs are done)."""
        self._kept.pop(exp.name, None)

    @staticmethod
    def _splits(kept: _Kept, exp: Experiment) -> tuple[Split, Split]:
        """The experiment's data, loaded once while its entries' problems are built."""
        key = assemble.data_key(exp)
        if kept.splits is None or kept.splits[0] != key:
            kept.splits = None
            kept.splits = (key, assemble.load_data(exp))
        return kept.splits[1]

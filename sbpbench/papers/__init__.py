"""The three papers: their figures, printed numbers and claims, declared as data.

Each paper module declares one :class:`~sbpbench.papers.declarations.Paper`
(:mod:`~sbpbench.papers.sbp`, :mod:`~sbpbench.papers.pegasos`, :mod:`~sbpbench.papers.sgd`);
:data:`PAPERS` lists them. A figure, a printed number or a claim is one declaration in its
paper's module; ``sbpbench figures`` and ``sbpbench report`` render what is declared.
"""

from __future__ import annotations

from pathlib import Path

from sbpbench.papers import pegasos, sbp, sgd
from sbpbench.papers.declarations import Paper, Results

#: The papers, in the order of REPRODUCTION.md and the figures page.
PAPERS: tuple[Paper, ...] = (sbp.PAPER, pegasos.PAPER, sgd.PAPER)

#: Default results root of ``sbpbench figures`` and ``sbpbench report``: the committed runs.
PAPER_RESULTS = Path("results") / "paper"

#: The experiment configs the papers name: package data (``sbpbench/configs/``, which the checkout's
#: ``configs/`` links to), so that an installed wheel finds them too.
CONFIGS = Path(__file__).resolve().parents[1] / "configs"

#: Runs an experiment takes from another instead of repeating them, of every paper.
SHARED_RUNS = {exp: source for paper in PAPERS for exp, source in paper.shared_runs.items()}

#: The data sets the papers use, against what the papers report (a paragraph of REPRODUCTION.md).
DATA = ("Adult is LIBSVM's a9a/a9a.t (32561 / 16281 rows; the SBP paper reports 31562 / 16282: 32561 with two "
        "digits swapped, and the lines of UCI's adult.test with its header line); Reuters is "
        "LaSVM's money-fx (7770 / 3299 rows; the paper reports 3229 test rows); MNIST is the canonical "
        "60000 / 10000 images; MNIST-t10k (7000 / 3000 of the 10000 test images), the substitute used before "
        "the training images were at hand, stays as rows of its own and is no longer drawn in Figure 2; w8a has "
        "no test file offline, so its 'test error' is on the training set (the SGD paper reports objectives "
        "only). astro-ph (Pegasos paper) is not publicly obtainable: the Pegasos figures use Reuters (linear "
        "kernel) instead.")


def experiments() -> list[str]:
    """Every experiment (config name) that reproduces a paper, in the order of their config files' names."""
    return sorted((name for paper in PAPERS for name in paper.experiments), key=lambda name: f"{name}.yaml")


def results(root: str | Path = PAPER_RESULTS) -> Results:
    """The results of the papers' experiments under ``root``, with their shared runs and why some are missing."""
    not_run = {name: why for paper in PAPERS for name, why in paper.experiments.items()}
    return Results(root, SHARED_RUNS, not_run)

"""Cases of the SGD paper's Table 1 and eps rows for :data:`tests.test_verdicts.CASES` (issue #14).

``CASES`` (made by :func:`cases`) gives, by verdict function of :mod:`sbpbench.papers.sgd`, a synthetic result that
supports the row and ones that contradict it; ``tests/test_verdicts.py`` adds them to its
``CASES`` and runs them with the others. A row whose value is a setting read from a config (an
eps, a data size) is contradicted by a config or data set with another value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.test_verdicts import contradicting, gets_failing, gets_passing, supporting


def cases() -> dict[Callable[..., Any], Any]:
    """The cases, by verdict function (imported here: ``tests/test_verdicts.py`` calls this as it loads)."""
    from sbpbench.papers import sgd
    from tests.test_verdicts import Case, Contradiction, Params, Synthetic, _meta, curve, synthetic

    def sizes(n_train: int, n_features: int) -> Synthetic:
        meta = _meta(n_train)
        meta["resolved"]["dataset"]["n_features"] = n_features
        return synthetic(curve("dcd", {"primal_objective": [1.0]}), meta=meta)

    def size(p: Params, shift: int) -> Synthetic:
        n = {"n_train": 1000, "n_features": 100, p["key"]: p["printed"] + shift}
        return sizes(n["n_train"], n["n_features"])

    def setting(p: Params, value: float | None) -> Synthetic:
        entry = {"name": p["solver"], **({} if value is None else {p["key"]: value})}
        config = {"solvers": [entry, {"name": p["solver"], "label": "optimum", p["key"]: p["printed"]}]}
        return synthetic(curve("dcd", {"primal_objective": [1.0]}), meta=_meta(config=config))

    lam = 1e-4

    def optimum(paper_scale: float, gap: float) -> Synthetic:
        """The optimum's final objective ``paper_scale`` on the paper's scale (ours times 1/lambda)."""
        return synthetic(curve("optimum", {"primal_objective": [2 * paper_scale * lam, paper_scale * lam],
                                           "relative_accuracy": [1e-2, gap]}, name="dcd"),
                         meta=_meta(problem={"lambda": lam}))

    def between(p: Params) -> float:
        return (float(p["J"]) + float(p["L"])) / 2

    return {
        sgd._size: Case(lambda p: size(p, 0), (
            Contradiction("a data set one row or attribute larger", lambda p: size(p, 1)),)),
        sgd._setting: Case(lambda p: setting(p, p["printed"]), (
            Contradiction("a config giving the solver another eps", lambda p: setting(p, 2 * p["printed"])),
            Contradiction("a config giving the solver no eps (only the optimum's)", lambda p: setting(p, None)),
        )),
        sgd._objective: Case(lambda p: optimum(between(p), 1e-8), (
            Contradiction("an optimum 0.1% above the paper's J", lambda p: optimum(1.001 * float(p["J"]), 1e-8)),
            Contradiction("an optimum 0.1% below the paper's L^T", lambda p: optimum(0.999 * float(p["L"]), 1e-8)),
        )),
    }


CASES = cases()


@pytest.mark.parametrize("verdict, build", supporting(CASES))
def test_a_supporting_result_gets_the_passing_verdict(verdict, build, tmp_path):
    assert gets_passing(verdict, build, tmp_path)


@pytest.mark.parametrize("verdict, build", contradicting(CASES))
def test_a_contradicting_result_gets_the_failing_verdict(verdict, build, tmp_path):
    assert gets_failing(verdict, build, tmp_path)

"""Whether two resolved configurations describe the same experiment, portably across machines.

``sbpbench check`` (a run against its reference) and ``--resume`` (a config against the folder
it continues) compare the ``resolved`` section of two ``meta.json`` files that may have been
written on different machines. Words, switches and counts (the dataset's sizes, the number of
runs, the seed, a solver's parameters) are compared exactly. A value *derived* by floating-point
arithmetic is not: its last bits depend on the order in which the CPU's vector units add (an
AMD EPYC and an Intel Xeon of the same machine kind differ there), so it is compared within
the precision its computation certifies:

* ``problem.optimum`` (the exact optimum of the lambda-problem behind ``nu: from_lambda``,
  :mod:`sbpbench.experiment.optimum`) is certified by its duality gap ``g``: its primal and
  dual objectives lie within ``g`` of the true optimum ``J*``, so two records agree when their
  objectives differ by at most ``g_a + g_b``. Since the lambda-problem is lambda-strongly convex
  in ``w``, a primal point within ``g`` of ``J*`` lies within ``sqrt(2 g / lambda)`` of ``w*``,
  which bounds the difference of the norms; the mean hinge loss (objective less
  ``lambda/2 ||w||^2``) and ``nu`` (mean hinge loss over norm) follow by propagating these
  bounds (:func:`optimum_tolerances`). The derived ``problem.nu`` beside it gets ``nu``'s.
  The record's facts of how the solve went (``iterations``, ``kernel_evals``, ``n_support``,
  ``test_error``, ``b``, ``duality_gap``: a tie broken the other way changes them) are not
  compared, like its ``seconds`` (:data:`SOLVE_FACTS`).
* lambda computed from an expression (``1/n``, ``C``) and sigma2 computed from the data (a
  ``sigma2_rule``) are certified to their rounding: relative tolerance :data:`DERIVED_RTOL`.

Every derived value gets at least :data:`DERIVED_RTOL` of its magnitude. A refusal names the
dotted key, both values and the tolerance (:class:`Difference`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sbpbench.solvers import SOLVERS

#: Relative tolerance of a value derived by a few floating-point operations or a reduction
#: over the data (lambda from ``1/n``, sigma2 from a rule): far above any rounding difference
#: between machines (about 1e-15), far below any difference that changes a result.
DERIVED_RTOL = 1e-9

#: Facts of ``resolved.problem.optimum`` (nu from lambda) that depend on the machine, not on
#: the problem: where the optimum is cached, and how long computing it took.
MACHINE_FACTS = ("cache_file", "seconds")

#: Facts of the exact optimum's record that depend on the path the solve took within its
#: precision, not on the problem: left out of the comparison like :data:`MACHINE_FACTS`.
SOLVE_FACTS = ("iterations", "kernel_evals", "n_support", "test_error", "b", "duality_gap")


def comparable(resolved: Any) -> Any:
    """A resolved configuration without :data:`MACHINE_FACTS`, :data:`SOLVE_FACTS` nor the record
    of the data files (``dataset.files``: their paths are the machine's;
    :mod:`sbpbench.results.datafiles` compares their checksums), for comparing two runs' problems.

    So that a run folder made elsewhere (a committed one, a CI reference) can be resumed or
    checked here. The facts go from the top-level problem and from each solver entry's
    (a sweep's entries record their own). A budget's limits that are not set (None) are left out
    too: a limit added to :class:`~sbpbench.solvers.base.Budget` later (``primal_objective``) is
    absent from the folders written before it, which ran without it all the same; so are a solver
    entry's parameters at their declared defaults (:func:`_without_default_params`).
    """
    if not isinstance(resolved, dict):
        return resolved
    out = _without_unset_limits(_without_machine_facts(resolved))
    if isinstance(dataset := resolved.get("dataset"), dict):
        out["dataset"] = {k: v for k, v in dataset.items() if k != "files"}
    if isinstance(solvers := resolved.get("solvers"), list):
        out["solvers"] = [_without_default_params(_without_unset_limits(_without_machine_facts(s)))
                          if isinstance(s, dict) else s for s in solvers]
    return out


def _without_default_params(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` (a resolved solver entry) with the parameters at their solver's declared default
    left out: a parameter added to a solver later (SVMperf's ``qp_precision``), whose default keeps
    the earlier behaviour, is absent from the folders written before it, which ran with that
    default all the same. A value off its default still differs from an absent one."""
    params, name = entry.get("params"), entry.get("name")
    if not isinstance(params, dict) or not isinstance(name, str) or name not in SOLVERS:
        return entry
    defaults = SOLVERS[name].Params()
    return {**entry, "params": {k: v for k, v in params.items() if getattr(defaults, k, _ABSENT) != v}}


#: No declared default: a parameter the solver does not declare is always compared.
_ABSENT = object()


def _without_unset_limits(holder: dict[str, Any]) -> dict[str, Any]:
    """``holder`` with the limits of its ``budget`` that are None left out."""
    budget = holder.get("budget")
    if not isinstance(budget, dict):
        return holder
    return {**holder, "budget": {k: v for k, v in budget.items() if v is not None}}


def _without_machine_facts(holder: dict[str, Any]) -> dict[str, Any]:
    """``holder`` with :data:`MACHINE_FACTS` and :data:`SOLVE_FACTS` left out of its ``problem.optimum``."""
    problem = holder.get("problem")
    if not isinstance(problem, dict) or not isinstance(problem.get("optimum"), dict):
        return dict(holder)
    optimum = {k: v for k, v in problem["optimum"].items() if k not in MACHINE_FACTS + SOLVE_FACTS}
    return {**holder, "problem": {**problem, "optimum": optimum}}


@dataclass(frozen=True)
class Difference:
    """The first place where two resolved configurations disagree.

    Attributes
    ----------
    key : str
        Dotted key below ``resolved`` (``problem.nu``, ``solvers[1].problem.optimum.norm``).
    old, new : Any
        The two values (``None`` where one side lacks the key).
    tolerance : float or None
        The absolute tolerance the values were compared within; None when compared exactly.
    """

    key: str
    old: Any
    new: Any
    tolerance: float | None = None

    def describe(self, old_name: str, new_name: str) -> str:
        """``"key 'resolved.problem.nu' differs: 0.06 in the reference, 0.07 in the run (...)"``."""
        within = (f"; they may differ by {self.tolerance:.3g}, the precision their computation certifies"
                  if self.tolerance is not None else "")
        return (f"key 'resolved.{self.key}' differs: {self.old!r} in {old_name}, {self.new!r} in {new_name}"
                f"{within}")


def optimum_tolerances(old: dict[str, Any], new: dict[str, Any], lam: float) -> dict[str, float]:
    """Absolute tolerances of an exact optimum's values, from the two records' duality gaps.

    Parameters
    ----------
    old, new : dict
        Two ``problem.optimum`` records (``objective``, ``dual_objective``, ``norm``,
        ``mean_hinge``, ``nu``, ``duality_gap``).
    lam : float
        The problem's lambda (its strong convexity).

    Returns
    -------
    dict
        Per key, the largest difference two optima certified to these gaps can have (module
        docstring); empty when a record lacks a gap or a norm, or lambda is not positive.
    """
    try:
        gaps = [max(float(old["duality_gap"]), 0.0), max(float(new["duality_gap"]), 0.0)]
        norms = [float(old["norm"]), float(new["norm"])]
        nus = [abs(float(old["nu"])), abs(float(new["nu"]))]
    except (KeyError, TypeError, ValueError):
        return {}
    if not (lam > 0 and min(norms) > 0 and all(map(math.isfinite, gaps + norms + nus))):
        return {}
    objective = sum(gaps)
    norm = sum(math.sqrt(2.0 * g / lam) for g in gaps)
    hinge = objective + lam / 2.0 * norm * sum(norms)
    nu = (hinge + max(nus) * norm) / min(norms)
    return {"objective": objective, "dual_objective": objective, "norm": norm, "mean_hinge": hinge, "nu": nu}


def tolerances(old: dict[str, Any], new: dict[str, Any]) -> dict[str, float]:
    """Absolute tolerances of the derived values of two resolved configurations, by dotted key.

    Looks at the top level and at each solver entry (a sweep's entries record their own kernel
    and problem). Keys not listed are compared exactly.
    """
    found = _holder_tolerances(old, new, "")
    old_entries, new_entries = old.get("solvers"), new.get("solvers")
    if isinstance(old_entries, list) and isinstance(new_entries, list):
        for i, (a, b) in enumerate(zip(old_entries, new_entries)):
            if isinstance(a, dict) and isinstance(b, dict):
                found.update(_holder_tolerances(a, b, f"solvers[{i}]."))
    return found


def _holder_tolerances(old: dict[str, Any], new: dict[str, Any], prefix: str) -> dict[str, float]:
    """The tolerances of one holder of a kernel and a problem (the top level or a solver entry)."""
    found: dict[str, float] = {}
    kernels, problems = _dicts(old, new, "kernel"), _dicts(old, new, "problem")
    if kernels and kernels[0].get("sigma2_rule") and kernels[0].get("sigma2_rule") == kernels[1].get("sigma2_rule"):
        found[f"{prefix}kernel.sigma2"] = 0.0
    if not problems:
        return found
    a, b = problems
    if isinstance(a.get("lambda_expression"), str):
        found[f"{prefix}problem.lambda"] = 0.0
    optima = _dicts(a, b, "optimum")
    if optima and isinstance(lam := a.get("lambda"), (int, float)):
        for key, tol in optimum_tolerances(*optima, float(lam)).items():
            found[f"{prefix}problem.optimum.{key}"] = tol
            if key == "nu" and a.get("nu_expression") == b.get("nu_expression") == "from_lambda":
                found[f"{prefix}problem.nu"] = tol
    return found


def _dicts(old: dict[str, Any], new: dict[str, Any], key: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``(old[key], new[key])`` when both are mappings, else None."""
    a, b = old.get(key), new.get(key)
    return (a, b) if isinstance(a, dict) and isinstance(b, dict) else None


def first_difference(old: Any, new: Any, tolerance: dict[str, float] | None = None, key: str = "") -> Difference | None:
    """The first place two JSON-like values differ beyond their tolerance, or None.

    Parameters
    ----------
    old, new : Any
        Two JSON-like values (two resolved configurations).
    tolerance : dict, optional
        Absolute tolerances by dotted key (:func:`tolerances`): a number there is compared
        within ``max(tolerance, DERIVED_RTOL * magnitude)``. Every other value exactly.
    key : str
        The dotted key of ``old`` and ``new`` themselves (for the recursion).
    """
    tolerance = tolerance or {}
    if isinstance(old, dict) and isinstance(new, dict):
        for k in list(old) + [k for k in new if k not in old]:
            sub = f"{key}.{k}" if key else str(k)
            if k not in old or k not in new:
                return Difference(sub, old.get(k), new.get(k))
            if (found := first_difference(old[k], new[k], tolerance, sub)) is not None:
                return found
        return None
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return Difference(key, old, new)
        for i, (a, b) in enumerate(zip(old, new)):
            if (found := first_difference(a, b, tolerance, f"{key}[{i}]")) is not None:
                return found
        return None
    if key in tolerance and _number(old) and _number(new):
        allowed = max(tolerance[key], DERIVED_RTOL * max(abs(old), abs(new)))
        return None if abs(old - new) <= allowed else Difference(key, old, new, allowed)
    return None if old == new else Difference(key, old, new)


def _number(value: Any) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def resolved_difference(old: Any, new: Any) -> Difference | None:
    """The first difference between two resolved configurations as ``meta.json`` holds them.

    Both are made :func:`comparable` first; derived values are compared within the precision
    their computation certifies (:func:`tolerances`, from the full records: the duality gap is
    one of the :data:`SOLVE_FACTS`), everything else exactly.
    """
    found = tolerances(old, new) if isinstance(old, dict) and isinstance(new, dict) else {}
    return first_difference(comparable(old), comparable(new), found)

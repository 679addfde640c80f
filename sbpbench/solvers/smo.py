"""SMO with second-order working-set selection (Fan, Chen and Lin 2005), as LIBSVM does it.

SMO minimizes the C-form dual of Problem 2.2 (see :mod:`sbpbench.solvers.dual`),
``f(alpha) = 1/2 alpha' Q alpha - e' alpha`` over ``0 <= alpha_i <= C = 1/(lambda n)``, with
``Q_ij = y_i y_j K_ij``, starting from ``alpha = 0`` and keeping the whole gradient
``G = Q alpha - e`` (so ``Q alpha = G + 1`` gives the primal objective for free).

With bias (``problem.bias``; LIBSVM's C-SVC, constraint ``y' alpha = 0``), each iteration is
LIBSVM's ``Solver::select_working_set`` (WSS2) and two-variable update of ``Solver::Solve``:

* ``i = argmax {-y_t G_t : t in I_up}``, ``I_up = {t : y_t = +1, alpha_t < C} u {t : y_t = -1, alpha_t > 0}``;
* ``m = -y_i G_i``, ``M = min {-y_t G_t : t in I_low}`` (``I_low`` the mirror set); stop when
  ``m - M < eps``;
* ``j = argmin {-b_it^2 / a_it : t in I_low, b_it = m + y_t G_t > 0}`` with
  ``a_it = K_ii + K_tt - 2 K_it`` (``TAU = 1e-12`` when ``a_it <= 0``);
* the analytic update of ``(alpha_i, alpha_j)`` clipped to the box along ``y' alpha = 0``, exactly
  LIBSVM's case analysis, and ``G += Q_i d_i + Q_j d_j``.

Kernel rows are float64 (LIBSVM caches float32 rows), so iterates agree with LIBSVM's up to
rounding, not bit for bit. Tie rules are LIBSVM's: the last index wins both arg-max (``>=``)
and arg-min (``<=``). The bias is LIBSVM's ``-rho`` (``Solver::calculate_rho``: the mean of
``y_t G_t`` over free variables, else the midpoint of its bounds), so
``f(x) = sum_t alpha_t y_t K(x_t, x) + b``.

Without bias there is no equality constraint, so the working set is one coordinate, chosen by the
same second-order rule. Moving ``alpha_t`` by ``d`` changes ``f`` by ``G_t d + a_t d^2 / 2`` with
``a_t = Q_tt = K_tt`` (``TAU`` when ``<= 0``); the best feasible step is the clipped Newton step
``d_t = clip(alpha_t - G_t / a_t, 0, C) - alpha_t``, with decrease (gain)
``g_t = -(G_t d_t + a_t d_t^2 / 2)``, which equals ``G_t^2 / (2 a_t)`` when the box does not clip
and is smaller when it does. We pick ``i = argmax_t g_t`` (last index wins) and take ``d_i``. The
stopping rule is the one-variable form of LIBSVM's ``m - M < eps`` with ``b = 0``:
``max(0, max {-G_t : alpha_t < C}) + max(0, max {G_t : alpha_t > 0}) < eps`` (the largest violation
of each sign of the KKT conditions; both parts vanish exactly at the optimum).

Shrinking (``shrinking``, default False; LIBSVM's ``-h 1``), as in LIBSVM's ``Solver::Solve``,
``do_shrinking``, ``be_shrunk`` and ``reconstruct_gradient``. The solver keeps an active set
(initially all variables) and ``G_bar = sum_{t: alpha_t = C} C Q_t``; ``G`` and the working-set
selection are kept on the active set only. Every ``min(n, 1000)`` iterations (counted from the
start; the first time after ``min(n, 1000)`` iterations):

* ``Gmax1``, ``Gmax2`` are the two halves of the violation on the active set (with bias ``m`` and
  ``-M``; without bias ``up`` and ``down`` below);
* once per run, when ``Gmax1 + Gmax2 <= 10 eps``, the gradient of the shrunk variables is
  reconstructed and all variables become active again ("unshrink");
* every variable at a bound whose gradient points out of the box by more than the violation on
  the other side is removed: with bias LIBSVM's ``be_shrunk`` (at a bound that only allows moving
  up in ``-y G`` when ``y_t G_t > Gmax2``, only down when ``-y_t G_t > Gmax1``); without bias the
  same rule with all ``y_t = +1`` and ``b = 0``: ``alpha_t = 0`` is shrunk when ``G_t > down``,
  ``alpha_t = C`` when ``-G_t > up``. This is the one-variable analogue: ``up`` and ``down`` are
  LIBSVM's ``Gmax1`` and ``Gmax2`` for the problem whose only "other variable" is the fixed bias
  ``0``, which is why both are at least ``0``; so a shrunk variable satisfies its KKT condition
  strictly (``G_t > 0`` at ``0``, ``G_t < 0`` at ``C``) by more than the current violation.

When the active set satisfies the stopping rule, the whole gradient is reconstructed, all
variables become active, and the rule is checked again on all of them: the run stops only if
it holds on the full set (else shrinking runs again at the next iteration). So the final
``kkt_violation`` is over all variables. The active set is kept in increasing index order
(LIBSVM permutes its arrays by ``swap_index``), so the tie rules stay "last index wins" in the
original order. Reconstruction: ``G_t = G_bar_t - 1 + sum_{free s} alpha_s Q_ts`` for the shrunk
``t``; with ``a`` active and ``f`` free (active) variables LIBSVM uses the rows of the ``n - a``
shrunk variables restricted to the active set when ``f n > 2 a (n - a)``, else the full rows of
the ``f`` free variables.

Cost model (kernel evaluations, counted by the kernel as if uncached). Without shrinking: with
bias, exactly ``2 n`` per iteration (rows ``i`` and ``j``); without bias, exactly ``n`` per
iteration (row ``i``). The stopping test uses only ``G``, so the final check costs nothing
(LIBSVM fetches row ``i`` once more before it sees that it is done). With shrinking, with ``a``
the active-set size at that iteration:

* ``2 a`` per iteration with bias, ``a`` without (rows ``i`` and ``j``, or ``i``, restricted to
  the active set; a full row when ``a = n``);
* plus ``n`` each time an updated variable enters or leaves the upper bound ``C`` while ``a < n``
  (its full row, for ``G_bar``; when ``a = n`` the row just fetched is used, so nothing more);
* plus, at each reconstruction with ``a < n`` (the unshrink and each time the active set
  satisfies the stopping rule), ``(n - a) a`` if ``f n > 2 a (n - a)`` else ``f n``.

Rows come through the kernel's LRU row cache (``cache_mb`` of the kernel spec, LIBSVM's ``-m``);
``kernel_evals_computed`` counts what the cache did not hold. A row restricted to the active set
(:meth:`~sbpbench.kernels.Kernel.entries`) is read from the cached full row when there is one, or
from a cached row on an earlier (larger) active set, else only its ``a`` entries are computed;
either way it is cached on the active set, as LIBSVM caches the first ``a`` entries of a row in
its permuted order (``get_Q(i, a)``). So ``kernel_evals`` (rows as the algorithm requests them)
does not depend on the cache, while ``kernel_evals_computed`` is close to what LIBSVM's cache
computes (float64 rows here, so a cache of the same size holds half LIBSVM's float32 rows).
A snapshot taken while variables are shrunk rebuilds their ``Q alpha`` from
``G_bar`` and the free variables for measurement only (``eval_kernel_evals``); it does not
change the iterate.

One iteration is one working-set update; ``advance`` returns True once the stopping rule holds.
Iterations run in compiled batches (:func:`_pair_iterations`, :func:`_single_iterations`) that
return to Python only for a kernel row they do not hold, at a limit, or at the stopping rule; with
shrinking a step is one iteration (shrinking and ``G_bar`` are done between them), without it a
step does as many as the limits allow, up to :data:`STEP_ENTRIES` row entries' worth. Without
shrinking, when the kernel's row cache holds all ``n`` rows (and they fit in :data:`HELD_ENTRIES`
entries), SMO keeps a copy of each row it fetched and reads it again from there: the kernel
would serve it from its cache, never evicting a row, and each row read is counted in
``kernel_evals`` as a row the kernel serves (:meth:`~sbpbench.kernels.Kernel.count`), so the
counts, the cache's contents and the iterates are those of fetching every row from the kernel
(only the cache's LRU order, which decides nothing when nothing is evicted, is not refreshed).
Snapshot columns besides the objectives (:func:`~sbpbench.solvers.dual.dual_snapshot`):
``dual_objective``, ``duality_gap``, ``kkt_violation`` (``m - M`` at the last selection, over the
active set) and, with shrinking, ``active_size``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from numba import types
from numba.extending import overload

from sbpbench.params import param, positive
from sbpbench.problem import Problem
from sbpbench.solvers.base import Snapshot, Solver, SolverParams, register
from sbpbench.solvers.dual import TAU, box_bounds, dual_snapshot

#: LIBSVM shrinks every ``min(n, SHRINK_INTERVAL)`` iterations.
SHRINK_INTERVAL = 1000
#: Kernel-row entries (``n`` or ``2 n`` per iteration) a step without shrinking reads at most: it
#: does that many iterations' worth unless a limit comes first (``advance`` checks the deadline
#: between steps: a step takes a few milliseconds at most).
STEP_ENTRIES = 2**20
#: Entries of the kernel rows SMO keeps itself (64 MiB of float64), at most: it keeps the rows it
#: reads only when all ``n`` rows of ``n`` entries fit in this and in the kernel's row cache.
HELD_ENTRIES = 2**23


# ----------------------------------------------------------------------------- the active set


def _size(act, n):
    """The number of active variables: ``len(act)``, or ``n`` when ``act`` is None (all active)."""
    return n if act is None else act.shape[0]


def _at(act, r):
    """The variable at position ``r`` of the active set: ``act[r]``, or ``r`` when ``act`` is None."""
    return r if act is None else act[r]


@overload(_size, inline="always")
def _size_compiled(act, n):
    """:func:`_size` in compiled code, chosen by the type of ``act`` when compiling: without shrinking
    the passes get None and read every array in order, without the indirection through ``act``."""
    if isinstance(act, types.NoneType):
        return lambda act, n: n
    return lambda act, n: act.shape[0]


@overload(_at, inline="always")
def _at_compiled(act, r):
    """:func:`_at` in compiled code (as :func:`_size_compiled`)."""
    if isinstance(act, types.NoneType):
        return lambda act, r: r
    return lambda act, r: act[r]


# ----------------------------------------------------------------------------- with bias (pairs)


@numba.njit(cache=True)
def _candidate(t, yt, g, at, C, imax, gmax, gmax2):
    """WSS2's first-index rule for one variable ``t`` (``y_t = +-1``, ``G_t``, ``alpha_t``): the
    running ``(i, m, -M)`` after it (last index wins ties).

    Written without data-dependent branches but the rare improvement of ``m`` (labels and
    bounds in random order would mispredict about every other variable): ``t`` is in ``I_up``
    when ``alpha_t < C`` (``y_t > 0``) or ``alpha_t > 0`` (``y_t < 0``), in ``I_low`` in the
    mirror case, and ``-y_t G_t`` is exactly ``-G_t`` or ``G_t``.
    """
    yp = yt > 0
    below = at < C
    above = at > 0
    v = -yt * g
    in_up = below if yp else above
    in_low = above if yp else below
    if in_up & (v >= gmax):
        gmax = v
        imax = t
    gmax2 = max(gmax2, -v if in_low else -np.inf)
    return imax, gmax, gmax2


@numba.njit(cache=True)
def _select_i(y, G, alpha, C, act):
    """WSS2 first index over the active set ``act``: ``i = argmax_{I_up} -y G`` and ``m``; also
    ``-M = max_{I_low} y G``."""
    imax, gmax, gmax2 = -1, -np.inf, -np.inf
    for r in range(_size(act, G.shape[0])):
        t = _at(act, r)
        imax, gmax, gmax2 = _candidate(t, y[t], G[t], alpha[t], C[t], imax, gmax, gmax2)
    return imax, gmax, gmax2


@numba.njit(cache=True)
def _select_j(y, G, alpha, C, diag, i, K_i, gmax, act):
    """WSS2 second index: the position ``r`` in ``act`` of the ``t = act[r]`` in ``I_low`` with the
    largest second-order decrease (``K_i[r] = K(x_i, x_act[r])``); branch-free as :func:`_candidate`
    (``m + y_t G_t`` is exactly ``m + G_t`` or ``m - G_t``)."""
    jmin = -1
    best = np.inf
    for r in range(_size(act, G.shape[0])):
        t = _at(act, r)
        at = alpha[t]
        in_low = (at > 0) if y[t] > 0 else (at < C[t])
        grad_diff = gmax + y[t] * G[t]
        quad = diag[i] + diag[t] - 2.0 * K_i[r]
        quad = TAU if quad <= 0 else quad
        obj_diff = -(grad_diff * grad_diff) / quad
        if in_low & (grad_diff > 0) & (obj_diff <= best):
            best = obj_diff
            jmin = r
    return jmin


@numba.njit(cache=True)
def _pair_step(yi, yj, ai, aj, Gi, Gj, Kii, Kjj, Kij, Ci, Cj):
    """LIBSVM's analytic two-variable update clipped to the box ``[0, Ci] x [0, Cj]`` (its
    ``get_C``: with equal bounds, the same branches and arithmetic as the equal-box form)."""
    quad = Kii + Kjj - 2.0 * Kij
    if quad <= 0:
        quad = TAU
    if yi != yj:
        delta = (-Gi - Gj) / quad
        diff = ai - aj
        ai += delta
        aj += delta
        if diff > 0:
            if aj < 0:
                aj = 0.0
                ai = diff
        elif ai < 0:
            ai = 0.0
            aj = -diff
        if diff > Ci - Cj:
            if ai > Ci:
                ai = Ci
                aj = Ci - diff
        elif aj > Cj:
            aj = Cj
            ai = Cj + diff
    else:
        delta = (Gi - Gj) / quad
        total = ai + aj
        ai -= delta
        aj += delta
        if total > Ci:
            if ai > Ci:
                ai = Ci
                aj = total - Ci
        elif aj < 0:
            aj = 0.0
            ai = total
        if total > Cj:
            if aj > Cj:
                aj = Cj
                ai = total - Cj
        elif ai < 0:
            ai = 0.0
            aj = total
    return ai, aj


@numba.njit(cache=True)
def _add_pair_select_i(G, y, alpha, C, K_i, ci, K_j, cj, act):
    """``G_t += y_t (ci K_it + cj K_jt)`` for ``t = act[r]`` (rows indexed by ``r``), i.e.
    ``G += Q_i d_i + Q_j d_j`` on the active set with ``c = y d``, fused with the next
    iteration's :func:`_select_i` (``alpha`` already updated): one pass over the active set
    instead of two, with the same ``G`` and ``(i, m, -M)`` bit for bit."""
    imax, gmax, gmax2 = -1, -np.inf, -np.inf
    for r in range(_size(act, G.shape[0])):
        t = _at(act, r)
        g = G[t] + y[t] * (ci * K_i[r] + cj * K_j[r])
        G[t] = g
        imax, gmax, gmax2 = _candidate(t, y[t], g, alpha[t], C[t], imax, gmax, gmax2)
    return imax, gmax, gmax2


@numba.njit(cache=True)
def _rho(y, G, alpha, C):
    """LIBSVM's ``Solver::calculate_rho`` (the bias is ``-rho``)."""
    ub = np.inf
    lb = -np.inf
    free = 0
    total = 0.0
    for t in range(G.shape[0]):
        yG = y[t] * G[t]
        if alpha[t] >= C[t]:
            if y[t] < 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif alpha[t] <= 0:
            if y[t] > 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            free += 1
            total += yG
    if free > 0:
        return total / free
    return (ub + lb) / 2.0


# ----------------------------------------------------------------------------- without bias (single)


@numba.njit(cache=True, inline="always")
def _single_candidate(t, g, at, Ct, dt, found):
    """:func:`_select_single`'s rule for one variable ``t`` (``G_t``, ``alpha_t``, ``C_t``,
    ``K_tt``): the running ``(i, new, up, down, best)`` after it."""
    imax, new, up, down, best = found
    if at < Ct and -g > up:
        up = -g
    if at > 0 and g > down:
        down = g
    if (g < 0 and at < Ct) or (g > 0 and at > 0):
        a = dt if dt > 0 else TAU
        target = min(max(at - g / a, 0.0), Ct)
        d = target - at
        gain = -(g * d + 0.5 * a * d * d)
        if gain >= best:
            best = gain
            imax = t
            new = target
    return imax, new, up, down, best


@numba.njit(cache=True)
def _select_single(G, alpha, C, diag, act):
    """Over the active set ``act``: the coordinate with the largest clipped second-order gain, its
    new value, and the two one-sided violations ``up = max(0, max {-G_t : alpha_t < C_t})`` and
    ``down = max(0, max {G_t : alpha_t > 0})``."""
    found = (-1, 0.0, 0.0, 0.0, 0.0)
    for r in range(_size(act, G.shape[0])):
        t = _at(act, r)
        found = _single_candidate(t, G[t], alpha[t], C[t], diag[t], found)
    return found[0], found[1], found[2], found[3]


@numba.njit(cache=True)
def _add_single_select(G, y, alpha, C, diag, K_i, ci, act):
    """:func:`_add_single` fused with the next iteration's :func:`_select_single` (``alpha``
    already updated): one pass over the active set instead of two, the same ``G`` and selection
    bit for bit (as :func:`_add_pair_select_i` with a bias)."""
    found = (-1, 0.0, 0.0, 0.0, 0.0)
    for r in range(_size(act, G.shape[0])):
        t = _at(act, r)
        g = G[t] + y[t] * ci * K_i[r]
        G[t] = g
        found = _single_candidate(t, g, alpha[t], C[t], diag[t], found)
    return found[0], found[1], found[2], found[3]


@numba.njit(cache=True)
def _add_single(G, y, K_i, ci, act):
    """``G_t += y_t ci K_it`` for ``t = act[r]`` (row indexed by ``r``), i.e. ``G += Q_i d_i`` on
    the active set with ``ci = y_i d_i``."""
    for r in range(_size(act, G.shape[0])):
        t = _at(act, r)
        G[t] += y[t] * ci * K_i[r]


# ----------------------------------------------------------------------------- shrinking


@numba.njit(cache=True)
def _shrink(y, G, alpha, C, act, gmax1, gmax2):
    """The active set without the variables LIBSVM's ``Solver::be_shrunk`` removes (order kept).

    A variable at a bound that can only move up in ``-y G`` (``I_up`` only) is shrunk when
    ``y_t G_t > gmax2``; one that can only move down (``I_low`` only) when ``-y_t G_t > gmax1``;
    free variables stay.
    """
    keep = np.empty(act.shape[0], dtype=np.int64)
    k = 0
    for r in range(act.shape[0]):
        t = act[r]
        yG = y[t] * G[t]
        if alpha[t] >= C[t]:
            out = -yG > gmax1 if y[t] > 0 else yG > gmax2
        elif alpha[t] <= 0:
            out = yG > gmax2 if y[t] > 0 else -yG > gmax1
        else:
            out = False
        if not out:
            keep[k] = t
            k += 1
    return keep[:k].copy()


# ----------------------------------------------------------------------------- batches of iterations

#: How a batch of iterations (:func:`_pair_iterations`, :func:`_single_iterations`) ended: at its
#: iteration limit, at the stopping rule, or at a kernel row it does not hold (the caller puts the
#: row in the batch's row buffer and calls again: the iteration goes on where it stopped).
LIMIT, CONVERGED, NEED_ROW = 0, 1, 2


@numba.njit(cache=True)
def _pair_iterations(y, G, alpha, C, diag, act, rows, slot, keep, found, r, eps, limit):
    """Up to ``limit`` iterations with bias on the active set ``act``, each exactly the iteration
    of the module docstring: the stopping rule on ``found = (i, m, -M)``, :func:`_select_j`,
    :func:`_pair_step` and :func:`_add_pair_select_i` (the next ``found``).

    The kernel rows come from ``rows``: row ``t`` (on ``act``) is ``rows[slot[t]]``, held when
    ``slot[t] >= 0``. A row not held ends the batch with ``NEED_ROW`` before anything of the
    iteration changes; ``r`` (-1, or the position of ``j`` in ``act`` when ``j``'s row was
    missing) lets the call that resumes skip :func:`_select_j`. Without ``keep`` the slots of
    ``i`` and ``j`` are emptied after each iteration (every row comes from the kernel again).

    Returns ``(status, iterations done, found, violation, r, (i, j, old alpha_i, old alpha_j))``:
    the violation ``m - M`` of the last selection made and the last completed iteration's working
    set and old values (for the shrinking's ``G_bar``); with ``NEED_ROW``, row ``i`` is missing
    when ``r < 0``, else row ``act[r]``.
    """
    i, gmax, gmax2 = found
    done, violation = 0, gmax + gmax2
    last = (-1, -1, 0.0, 0.0)
    while done < limit:
        violation = gmax + gmax2
        if violation < eps:
            return CONVERGED, done, (i, gmax, gmax2), violation, -1, last
        if slot[i] < 0:
            return NEED_ROW, done, (i, gmax, gmax2), violation, -1, last
        K_i = rows[slot[i]]
        if r < 0:
            r = _select_j(y, G, alpha, C, diag, i, K_i, gmax, act)
        j = _at(act, r)
        if slot[j] < 0:
            return NEED_ROW, done, (i, gmax, gmax2), violation, r, last
        K_j = rows[slot[j]]
        old_i, old_j = alpha[i], alpha[j]
        alpha[i], alpha[j] = _pair_step(y[i], y[j], old_i, old_j, G[i], G[j], diag[i], diag[j], K_i[r], C[i], C[j])
        i_next, gmax, gmax2 = _add_pair_select_i(G, y, alpha, C, K_i, y[i] * (alpha[i] - old_i),
                                                 K_j, y[j] * (alpha[j] - old_j), act)
        if not keep:
            slot[i] = -1
            slot[j] = -1
        last = (i, j, old_i, old_j)
        i, r = i_next, -1
        done += 1
    return LIMIT, done, (i, gmax, gmax2), violation, -1, last


@numba.njit(cache=True)
def _single_iterations(y, G, alpha, C, diag, act, rows, slot, keep, found, r, eps, limit):
    """:func:`_pair_iterations` without bias: the stopping rule on ``found = (i, new alpha_i, up,
    down)``, then ``alpha_i`` set and :func:`_add_single_select` (the next ``found``); one row per
    iteration, so ``r`` stays -1 and the last working set is ``(i, -1, old alpha_i, 0)``."""
    i, new, up, down = found
    done, violation = 0, up + down
    last = (-1, -1, 0.0, 0.0)
    while done < limit:
        violation = up + down
        if violation < eps:
            return CONVERGED, done, (i, new, up, down), violation, r, last
        if slot[i] < 0:
            return NEED_ROW, done, (i, new, up, down), violation, r, last
        old = alpha[i]
        alpha[i] = new
        i_next, new, up, down = _add_single_select(G, y, alpha, C, diag, rows[slot[i]], y[i] * (new - old), act)
        if not keep:
            slot[i] = -1
        last = (i, -1, old, 0.0)
        i = i_next
        done += 1
    return LIMIT, done, (i, new, up, down), violation, r, last


# ----------------------------------------------------------------------------- the solver


@dataclass(frozen=True)
class SMOParams(SolverParams):
    """Parameters of :class:`SMO`."""

    eps: float = param(1e-3, "stopping tolerance on the maximal KKT violation (LIBSVM's -e)", check=positive)
    shrinking: bool = param(False, "LIBSVM's shrinking heuristic (-h 1)")


@register
class SMO(Solver[SMOParams]):
    """SMO with WSS2 (LIBSVM), optionally with LIBSVM's shrinking; cost model in the module docstring."""

    name = "smo"
    deterministic = True
    Params = SMOParams
    needs = frozenset({"lambda"})
    supports_bias = True
    supports_weights = True
    swings_before_settling = True  # the SBP paper's Figure 2: "little progress until a critical point"

    def __init__(self, problem: Problem, rng: np.random.Generator, params: SMOParams | None = None):
        super().__init__(problem, rng, params)
        self.y = problem.y
        self.bias = problem.bias
        self.C = box_bounds(problem)  # C_i of each example (LIBSVM's get_C)
        self.diag = self.kernel.diag()
        self.alpha = np.zeros(self.n)
        self.G = -np.ones(self.n)
        self.violation = np.inf  # m - M at the last selection (over the active set)
        #: With bias: ``(i, m, -M)`` on the current active set, found by the last update's pass.
        #: Without bias: ``(i, new, up, down)`` likewise.
        self._next_i: tuple[Any, ...] | None = None
        self._all = np.arange(self.n, dtype=np.int64)
        #: Indices of the active (not shrunk) variables, increasing; all of them without shrinking.
        self.active = self._all
        # the operations the cost model counts: active-set sizes summed over the iterations,
        # and the full rows fetched for G_bar while variables are shrunk
        self.active_total = 0
        self.bound_rows = 0
        #: ``(active size, free active variables)`` at every gradient reconstruction with work.
        self.reconstructions: list[tuple[int, int]] = []
        #: Whether rows stay in ``_rows`` once fetched: without shrinking, when the kernel's row cache
        #: holds every row (so it never evicts one) and they are at most :data:`HELD_ENTRIES` entries.
        self._keep = (not self.params.shrinking
                      and self.n * self.n <= min(self.kernel.cache_entries, HELD_ENTRIES))
        #: The batch's row buffer: row ``t`` (on the active set) is ``_rows[_slot[t]]`` when
        #: ``_slot[t] >= 0``; kept, at ``_slot[t] = t``, else rows ``i`` and ``j`` of one iteration
        #: in slots 0 and 1 (``np.empty``: memory is taken as rows are written).
        self._rows = np.empty((self.n if self._keep else 2, self.n))
        self._slot = np.full(self.n, -1, dtype=np.int64)
        #: ``(i, j, old alpha_i, old alpha_j)`` of the last iteration (``j = -1`` without bias).
        self._last: tuple[int, int, float, float] = (-1, -1, 0.0, 0.0)
        if self.params.shrinking:
            self.G_bar = np.zeros(self.n)  # sum of C Q_t over the t at the upper bound
            self._sign = self.y if self.bias else np.ones(self.n)  # be_shrunk's y (all +1 without bias)
            self._counter = min(self.n, SHRINK_INTERVAL) + 1
            self._unshrunk = False

    @classmethod
    def memory_needs(cls, params: SMOParams, n: int, d: int) -> dict[str, float]:
        """The base's vectors and, without shrinking, the kernel rows SMO may keep (at most all
        ``n`` rows, when they fit in :data:`HELD_ENTRIES` entries)."""
        needs = super().memory_needs(params, n, d)
        if not params.shrinking and n * n <= HELD_ENTRIES:
            needs["smo's copies of kernel rows"] = 8.0 * n * n
        return needs

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """Iterations (one with shrinking), or the stopping rule's verdict (True: converged)."""
        if not self.params.shrinking:
            return self._iterate(self._allowed(iterations, kernel_evals)) == CONVERGED
        self._counter -= 1
        if self._counter == 0:
            self._counter = min(self.n, SHRINK_INTERVAL)
            self._do_shrinking()
        if self._iterate(1) == CONVERGED:
            if self.active.size == self.n:
                return True
            self._reconstruct_gradient()  # optimal on the active set: check them all
            self.active, self._next_i = self._all, None
            if self._iterate(1) == CONVERGED:
                return True
            self._counter = 1  # shrink again at the next iteration
        i, j, old_i, old_j = self._last
        self._update_G_bar(i, old_i, self._rows[0])  # without keeping rows, row i is in slot 0, row j in 1
        if self.bias:
            self._update_G_bar(j, old_j, self._rows[1])
        return False

    # -- iterations -----------------------------------------------------------------------------
    def _allowed(self, iterations: float, kernel_evals: float) -> int:
        """Iterations a step without shrinking does: those the limits allow (an iteration starts
        while fewer than ``kernel_evals`` are spent, at ``rows n`` each), at most
        :data:`STEP_ENTRIES` row entries' worth, at least one."""
        per = (2 if self.bias else 1) * self.n
        allowed = max(1, STEP_ENTRIES // per)
        if iterations < allowed:
            allowed = math.ceil(iterations)
        if kernel_evals < allowed * per:
            allowed = -(-math.ceil(kernel_evals) // per)
        return allowed

    def _iterate(self, limit: int) -> int:
        """Up to ``limit`` iterations on the active set by the compiled batch, fetching the kernel
        rows it does not hold; returns how it ended (``LIMIT`` or ``CONVERGED``).

        The first selection comes from a pass of its own when the active set changed (``_next_i``
        None), then from each update's fused pass. ``violation`` is that of the last selection,
        as the batch returns it. Each row the batch reads is counted as the kernel counts a row
        it serves (``kernel.row`` or ``kernel.entries``): the rows fetched here by the kernel itself,
        the rows read again from ``_rows`` (only when all the kernel's rows fit its cache, so
        that the kernel would have served them from there) by ``kernel.count``.
        """
        act = self.active
        over = act if self.params.shrinking else None  # None: all, read in order (see _size)
        if self._next_i is None:
            self._next_i = (_select_i(self.y, self.G, self.alpha, self.C, over) if self.bias
                            else _select_single(self.G, self.alpha, self.C, self.diag, over))
        batch = _pair_iterations if self.bias else _single_iterations
        state = (self.y, self.G, self.alpha, self.C, self.diag, over, self._rows, self._slot, self._keep)
        rows, eps, keep = self._rows, self.params.eps, self._keep
        done = fetched = 0
        r = -1
        while True:
            status, d, self._next_i, self.violation, r, last = batch(*state, self._next_i, r, eps, limit - done)
            done += d
            if d:
                self._last = last
            if status != NEED_ROW:
                break
            t = self._next_i[0] if r < 0 else int(act[r])
            slot = t if keep else int(r >= 0)
            if keep:
                rows[slot] = self.kernel.row(t)  # all active
            else:
                rows[slot, :act.size] = self._active_row(t)
            self._slot[t] = slot
            fetched += 1
        served = (2 if self.bias else 1) * done - fetched  # rows read from _rows, fetched in an earlier batch
        if served:
            self.kernel.count(served * act.size)
        self.iteration += done
        self.active_total += done * act.size
        return status

    def _active_row(self, i: int) -> np.ndarray:
        """``K(x_i, x_t)`` for the active ``t``: the (cached) full row when all are active."""
        if self.active.size == self.n:
            return self.kernel.row(i)
        return self.kernel.entries(i, self.active)

    def warm_up_rare_paths(self) -> None:
        """With shrinking: a shrinking step (the first comes after ``min(n, 1000)`` iterations),
        the active rows' entries it then reads (:meth:`_active_row` on a shrunk active set, the
        kernel's row loop on an index array) and the ``G_bar`` update's :func:`_add_single`,
        called only when a variable enters or leaves the upper bound, on both kinds of row it
        takes: a kernel row (read-only; while variables are shrunk) and a row of the batch's
        buffer (while all are active)."""
        if self.params.shrinking:
            self._do_shrinking()
            self.kernel.entries(0, self.active[:1].copy())
            self._rows[0] = self.kernel.row(0)
            _add_single(self.G_bar, self.y, self.kernel.row(0), 0.0, self._all)
            _add_single(self.G_bar, self.y, self._rows[0], 0.0, self._all)

    # -- shrinking (LIBSVM's Solver::do_shrinking, reconstruct_gradient and the G_bar update) -----
    def _update_G_bar(self, t: int, old: float, K_t: np.ndarray) -> None:
        """Keep ``G_bar = sum_{alpha_s = C} C Q_s`` when ``alpha_t`` enters or leaves the upper bound."""
        was_upper, is_upper = old >= self.C[t], self.alpha[t] >= self.C[t]
        if was_upper == is_upper:
            return
        if self.active.size == self.n:
            K_full = K_t
        else:
            K_full = self.kernel.row(t)
            self.bound_rows += 1
        sign = 1.0 if is_upper else -1.0
        _add_single(self.G_bar, self.y, K_full, sign * self.C[t] * self.y[t], self._all)

    def _do_shrinking(self) -> None:
        """Unshrink once when the violation is within ``10 eps``, then drop what ``be_shrunk`` says."""
        if self.bias:
            _, gmax1, gmax2 = _select_i(self.y, self.G, self.alpha, self.C, self.active)
        else:
            _, _, gmax1, gmax2 = _select_single(self.G, self.alpha, self.C, self.diag, self.active)
        if not self._unshrunk and gmax1 + gmax2 <= 10 * self.params.eps:
            self._unshrunk = True
            self._reconstruct_gradient()
            self.active = self._all
        self.active = _shrink(self._sign, self.G, self.alpha, self.C, self.active, gmax1, gmax2)
        self._next_i = None  # found on the old active set

    def _inactive(self) -> np.ndarray:
        """Indices of the shrunk variables, increasing."""
        mask = np.ones(self.n, dtype=bool)
        mask[self.active] = False
        return np.flatnonzero(mask)

    def _free_active(self) -> np.ndarray:
        """Boolean mask over ``active``: the free variables (``0 < alpha < C``), all of them active."""
        a = self.alpha[self.active]
        return (a > 0) & (a < self.C[self.active])

    def _reconstruct_gradient(self) -> None:
        """LIBSVM's ``reconstruct_gradient``: the exact ``G`` of the shrunk variables.

        ``G_t = G_bar_t - 1 + sum_{free s} alpha_s Q_ts`` (free variables are all active). With
        ``a`` active and ``f`` free variables, LIBSVM computes the rows of the ``n - a`` shrunk
        variables restricted to the active set when ``f n > 2 a (n - a)``, else the full rows
        of the ``f`` free variables.
        """
        act = self.active
        n, a = self.n, act.size
        if a == n:
            return
        y, G, alpha = self.y, self.G, self.alpha
        inactive = self._inactive()
        G[inactive] = self.G_bar[inactive] - 1.0
        is_free = self._free_active()
        free = act[is_free]
        self.reconstructions.append((a, free.size))
        if free.size * n > 2 * a * (n - a):
            coef = np.where(is_free, alpha[act] * y[act], 0.0)
            for t in inactive:
                G[t] += y[t] * float(self.kernel.entries(t, act) @ coef)
        else:
            y_in = y[inactive]
            for s in free:
                G[inactive] += (alpha[s] * y[s]) * y_in * self.kernel.row(s)[inactive]

    # -- output ---------------------------------------------------------------------------------
    def solution(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(alpha, Q alpha, b)`` of the current iterate (``b = -rho`` with bias, else 0).

        While variables are shrunk their ``Q alpha`` is rebuilt from ``G_bar`` and the free
        variables through :meth:`~sbpbench.kernels.Kernel.decision_at` (measurement only:
        ``eval_kernel_evals``, never the training counts); the iterate is not changed.
        """
        q = self.G + 1.0
        if self.active.size < self.n:
            act, alpha, y = self.active, self.alpha, self.y
            inactive = self._inactive()
            free = act[self._free_active()]
            k = self.kernel
            q[inactive] = self.G_bar[inactive] + y[inactive] * k.decision_at(inactive, free, alpha[free] * y[free])
        b = -_rho(self.y, q - 1.0, self.alpha, self.C) if self.bias else 0.0
        return self.alpha.copy(), q, float(b)

    def snapshot(self) -> Snapshot:
        alpha, q, b = self.solution()
        extra = {"kkt_violation": float(self.violation)} if np.isfinite(self.violation) else {}
        if self.params.shrinking:
            extra["active_size"] = float(self.active.size)
        return dual_snapshot(self.problem, alpha, q, b, extra)

    def expected_kernel_evals(self) -> float:
        """The cost model of the module docstring, from the counted operations.

        ``rows`` (2 with bias, 1 without) times the active-set sizes summed over the
        iterations, plus ``n`` per full row fetched for ``G_bar`` while shrunk, plus each
        reconstruction's ``(n - a) a`` or ``f n``.
        """
        n = self.n
        rebuilt = sum((n - a) * a if f * n > 2 * a * (n - a) else f * n for a, f in self.reconstructions)
        return float((2 if self.bias else 1) * self.active_total + n * self.bound_rows + rebuilt)

"""The Stochastic Batch Perceptron (SBP), Algorithm 1 of the kernelized SBP paper.

SBP maximizes the slack-constrained objective of Problem 2.3 over ``||w|| <= 1`` by
stochastic supergradient ascent. Each iteration ``t``:

1. finds the water level ``gamma`` of the responses ``c_i = y_i <w, Phi(x_i)>`` for a
   volume ``n nu`` (:mod:`sbpbench.solvers.waterlevel`);
2. samples ``i`` uniformly from ``{j : c_j < gamma}`` (the minimax-optimal ``p*``);
3. adds ``eta_t y_i Phi(x_i)`` to ``w`` with ``eta_t = eta_0 / sqrt(t)``,
   ``eta_0 = 1 / sqrt(max_i K(x_i, x_i))``, updating all responses with one kernel row;
4. projects onto the unit ball by rescaling ``alpha`` and ``c`` when ``||w|| > 1``.

The output is the averaged iterate ``alpha_bar = (1/T) sum_t alpha^(t)``, divided by the
water level ``gamma_bar`` of its averaged responses ``c_bar`` (Algorithm 1, line 14).

With an unregularized bias (``problem.bias``, Section 3.6 and Appendix B) the objective is
Equation 3.9: the responses entering the water level are ``c_i + y_i b`` with the bias
``b`` maximizing the level, found with it by the two-basin water filling
(:func:`~sbpbench.solvers.waterlevel.water_level_bias`, Algorithm 3). A minimax-optimal
``p*`` must then put mass 1/2 on each class (Appendix B); the optimal ``b`` submerges the
same number ``k`` of points in each basin, and we sample uniformly from the ``k`` lowest
responses of each class, i.e. ``p*_i = 1 / (2k)`` there. This ``p*`` is a best response
to the level (it is supported on points at or below the water level in their basin and is
constant, ``1/(2k)``, on every point strictly below it, where the slack is) and ``(b, xi)``
is a best response to it (``sum_i p*_i y_i = 0``), so it is minimax optimal and
``y_i Phi(x_i)``, ``i ~ p*``, is an unbiased supergradient (Lemma 3.1). Ties at the
``k``-th response of a class are broken by index (any choice among them is optimal).
The output's bias is chosen from the averaged responses: ``b_bar`` of the water filling of
``c_bar``, and the predictor is ``(<w_bar, Phi(x)> + b_bar) / gamma_bar``, at the end and
at every checkpoint.

Implementation (same arithmetic as Algorithm 1, fewer passes over ``n``): ``alpha`` and
``c`` are stored unscaled with a global scale factor ``s`` (``alpha = s a``, ``c = s c~``),
so the projection is O(1); the averages are kept as running sums
``sum_t s_t a^(t) = P_T a^(T) - sum_u P_(u-1) delta_u`` with ``P_t = sum_(tau<=t) s_tau``,
so a checkpoint costs no kernel evaluations. The response update and both running sums are
one fused compiled pass; without a bias and a row cache, bit-set rows are computed in it a
block at a time (:meth:`Kernel.row_blocks <sbpbench.kernels.kernel.Kernel.row_blocks>`),
never written out and read back. Since ``s`` only shrinks, ``P_T a^(T)`` and the running sum grow
like ``1/s`` while their difference stays of order ``T``; to keep that difference exact to
rounding, the state is rebased (``s := 1``, the sum so far moved into the running sum)
whenever ``s`` falls below :data:`REBASE_BELOW`, an O(n) step without kernel evaluations.
The same pass gathers the responses in a window around the last water level (with a bias:
around each class's last ``k``-th response moved by the mean update of the class's responses
that the last window gathered), so the next level is found among those few
(:mod:`sbpbench.solvers.waterlevel`: Newton's method without a bias, a selection with
one); only when the level left the window does one more pass
(a bracket from the window's counts, or wider windows) or, failing that, the full selection
run. Sampling counts a block at a time (without a bias, from the gathering pass's counts
when the level is in its window) and scans one block. The sampled set is the full
selection's and the sampled index the ``u``-th of it in index order for the same draw ``u``;
the windowed sums are added in another (vectorized) order than the full selection's, so the
level may differ in its last bits, which changes the sample only if a response lies within
those bits of the level (the tests compare the level and its set at every iteration of a
real trajectory, and the whole trajectory bitwise; on full Adult the iterates equal those
of the full selection bit for bit over 20000 iterations, without and with a bias, and
those of the selection in the window that Newton's method replaced).

Against issvm, the authors' C++ (``scripts/authors_sbp.py``, ``results/paper/analyses/authors-sbp.md``):
its biased SBP starts from zero, finds the same two-basin water level for the volume ``nu n``,
samples from the same set (the ``k`` lowest responses of each class), averages the iterates
uniformly and takes the output's bias from the water level of the averaged responses, as here.
One difference remains: each issvm iteration updates one positive *and* one negative example,
each with the step ``0.5 / sqrt(max K t)``, where ours draws one example from ``p*`` (mass 1/2
per class) with the step ``1 / sqrt(max K t)``: the same expected step, with less variance and
two kernel rows per iteration instead of one. On full Adult (sigma^2 = 100, ``nu`` = 0.001367,
bias, no row cache; three runs of 15000 iterations each) issvm reached LIBSVM's error + 0.1 pp
after 2500, 8500 and 11000 iterations (5000 to 22000 kernel rows), ours after 5500 and 9500
(as many rows) and not within 15000 in the third: the runs spread more than the two differ, and
the report's rows on issvm (at equal iterations and at equal kernel rows, Gehan's rule) decide
neither at three runs. We keep Algorithm 3's one-example step: it is the paper's algorithm and
its cost model (``n`` kernel evaluations per iteration).

Cost model: exactly ``n`` kernel evaluations per iteration (one kernel row), with or
without a bias.
Tie rule: Algorithm 1 samples from ``c_j < gamma`` strictly; with ``nu = 0`` that set is
empty and we sample from ``c_j <= gamma`` (Section 3.2 allows any distribution on the
minimizers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from sbpbench.errors import UserError
from sbpbench.params import non_negative, param
from sbpbench.problem import Problem
from sbpbench.solvers.base import Snapshot, Solver, SolverParams, register, required
from sbpbench.solvers.responses import (
    BLOCK,
    add_row_and_sum,
    update_and_class_windows,
    update_and_window,
    update_and_window_parallel,
    window_blocks,
)
from sbpbench.solvers.sampling import UniformIndex
from sbpbench.solvers.waterlevel import (
    bracket_level,
    class_window_centers,
    count_below,
    level_from_window,
    level_from_windows,
    nth_lowest_in_class,
    sample_below,
    water_level,
    water_level_bias,
    water_level_bias_near,
    water_level_near,
)
from sbpbench.threads import FasterOfTwo

#: Rebase the lazy scale once it falls below this (bounds the cancellation to ~4 digits).
REBASE_BELOW = 1e-4
#: The water level's search window (see ``SBP._sample_plain``): first half-width relative to
#: the level, growth factor when the level leaves it, and the fraction of responses above
#: which it narrows.
WINDOW_START = 1e-2
WINDOW_GROWTH = 2.0
WINDOW_SHRINK = 0.8
WINDOW_MAX_FRACTION = 1 / 16
#: With a bias, the half-width of the second try, relative to the window that missed.
WINDOW_RETRY = 4.0
#: Responses from which the unbiased update pass may be split over numba's threads (32 blocks).
PARALLEL_PASS_MIN = 32 * BLOCK


@dataclass(frozen=True)
class SBPParams(SolverParams):
    """Parameters of :class:`SBP`."""

    average: bool = param(True, "output the averaged iterate (Algorithm 1) instead of the last")
    eta0: float = param(0.0, "initial step size; 0 means 1/sqrt(max_i K(x_i, x_i)) as in Algorithm 1",
                        check=non_negative)


@register
class SBP(Solver[SBPParams]):
    """Stochastic Batch Perceptron (Algorithm 1; with a bias, Algorithm 3). Cost: n kernel evaluations per iteration."""

    name = "sbp"
    maximizes_objective = True
    Params = SBPParams
    needs = frozenset({"nu"})
    supports_bias = True

    def __init__(self, problem: Problem, rng: np.random.Generator, params: SBPParams | None = None):
        super().__init__(problem, rng, params)
        n = self.n
        self.y = problem.y
        self.volume = n * required(problem.nu, "nu")
        diag = self.kernel.diag()
        self.k_diag = diag
        # eta_0, the initial step size: the parameter, or Algorithm 1's when it is 0
        self.eta0 = float(self.params.eta0 if self.params.eta0 > 0 else 1.0 / np.sqrt(diag.max()))
        self.a = np.zeros(n)  # alpha / s
        self.ct = np.zeros(n)  # c / s
        self.s = 1.0
        self.norm2 = 0.0  # ||w||^2 = r_t^2 of Algorithm 1
        self.P = 0.0  # sum of s over finished iterations
        self.acc_a = np.zeros(n)  # sum_u P_(u-1) delta_u for alpha
        self.acc_c = np.zeros(n)  # the same for the responses
        self._buf = np.empty(n)  # the responses gathered by the update for the next iteration's level
        self._snapshot_buf = np.empty(n)  # scratch of snapshot(), which must not touch _buf
        self._where = np.empty(n, dtype=np.int64)  # with a bias: the indices of the gathered responses
        self._flags = np.empty(BLOCK, dtype=np.uint8)  # scratch of the biased update's pass
        self._blocks, self._sums = window_blocks(n)  # without a bias: its per-block counts and sums
        self._pass: Any = None if problem.bias else self._update_pass(n)  # the unbiased update pass
        self._positions = np.empty(BLOCK, dtype=np.int64)  # the same, with a bias
        self._level = 0.0  # the last water level, in units of ct
        self._tops = np.zeros(2)  # with a bias: each class's last k-th response
        self._gathered = np.zeros(2, dtype=np.int64)  # and how many of its responses the last window gathered
        self._centers = np.zeros(2)  # and where the update moved its k-th (the windows' centres)
        self._windows: Any = None  # what the last update gathered near the level (None: nothing)
        self._npos = int(np.count_nonzero(self.y > 0))
        self._labels = self.y.astype(np.int8)  # y for the update's pass: a ninth of the bytes, the same products
        self._width = 0.0  # half-width of the search window (0: none yet)
        self.bias = bool(problem.bias)
        if self.bias and np.unique(self.y).size < 2:
            raise UserError("sbp with bias: the training set needs examples of both classes")
        self._sample = self._sample_bias if self.bias else self._sample_plain
        self._draw = UniformIndex(self.rng)  # rng.integers(m)'s numbers, without its 4 microseconds a call

    @staticmethod
    def _update_pass(n: int) -> Any:
        """The unbiased update pass: split over numba's threads when there are several and
        :data:`PARALLEL_PASS_MIN` responses or more, whenever that is faster now
        (:class:`~sbpbench.threads.FasterOfTwo`; the same numbers either way)."""
        threads = numba.get_num_threads()
        if threads < 2 or n < PARALLEL_PASS_MIN:
            return update_and_window
        return FasterOfTwo(lambda *args: update_and_window_parallel(*args, threads),  # type: ignore[call-arg]
                           update_and_window)

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """One iteration of Algorithm 1: sample below the water level, add a row, project."""
        self.iteration += 1
        eta = self.eta0 / math.sqrt(self.iteration)  # Python floats: numpy's scalars cost microseconds
        i = self._sample()
        c_i = self.s * float(self.ct[i])
        row = self.kernel.row(i) if self.bias else self.kernel.row_blocks(i)
        self.norm2 += 2.0 * eta * c_i + eta * eta * float(self.k_diag[i])
        step = eta / self.s
        self.a[i] += step
        self.acc_a[i] += self.P * step
        self._update(row, step * float(self.y[i]))
        if self.norm2 > 1.0:
            self.s /= math.sqrt(self.norm2)
            self.norm2 = 1.0
        self.P += self.s
        if self.s < REBASE_BELOW:
            self._rebase()
        return False

    def _update(self, row: Any, step: float) -> None:
        """``c~ += step * y * row`` and its running sum, in one pass over ``n``.

        Once there is a search window, the same pass gathers the responses near the level
        for the next iteration's (:func:`update_and_window`: around the last level; with a
        bias, :func:`update_and_class_windows`: around where each class's ``k``-th moves,
        :func:`class_window_centers`), so an iteration reads its responses once. Without a
        bias the row may be the kernel's block source (:meth:`Kernel.row_blocks
        <sbpbench.kernels.kernel.Kernel.row_blocks>`): each block of the row is then computed
        in the pass, just before it is added (with a bias, the windows' centres need the row
        first).
        """
        y, ct, width = self._labels, self.ct, self._width
        if not self.bias:
            # before the first window: an empty one, below every response
            low, high = (self._level - width, self._level + width) if width > 0.0 else (-np.inf, -np.inf)
            window = self._pass(ct, self.acc_c, y, row, step, self.P, low, high, self._buf, self._blocks, self._sums)
            self._windows = (low, high, window) if width > 0.0 else None
        elif width == 0.0:
            add_row_and_sum(ct, self.acc_c, y, row, step, self.P)
            self._windows = None
        else:
            self._centers = class_window_centers(row, step, y, self._tops, self._where, self._npos, self._gathered)
            self._windows = update_and_class_windows(ct, self.acc_c, y, row, step, self.P, self._centers, width,
                                                     self._npos, self._buf, self._where, self._flags,
                                                     self._positions)

    def _rebase(self) -> None:
        """Fold the scale into the state: ``s := 1``, the sums so far kept in ``acc``.

        ``P a - acc`` is ``sum_t s_t a^(t)`` (a true sum, independent of the current scale);
        with ``acc := acc - P a``, ``a := s a`` and ``P := 0`` it goes on giving that sum
        (the same for the responses).
        """
        for state, acc in ((self.a, self.acc_a), (self.ct, self.acc_c)):
            acc -= self.P * state  # -(sum so far), already in unscaled units
            state *= self.s
        self.P = 0.0
        self.s = 1.0
        self._width = 0.0  # the level's units changed
        self._windows = None

    def _sample_plain(self) -> int:
        """Draw ``i ~ p*``, uniform below the water level (Algorithm 1, lines 5-6).

        The level is selected among the responses that the last update gathered near the
        last level (:meth:`_update`, :func:`level_from_window`). When it left that window,
        one more pass gathers the bracket that the window's counts give
        (:func:`bracket_level`, :func:`water_level_near`), and only if that fails too does
        the full selection run. The window widens when the level left it and narrows while
        it holds many responses.
        """
        volume = self.volume / self.s
        inside = -1
        if self._windows is not None:
            low, high, window = self._windows
            gamma, below, inside = level_from_window(volume, low, high, window, self._buf)
            if inside < 0:
                self._width *= WINDOW_GROWTH
                guess, width = bracket_level(volume, low, high, window)
                if width > 0:
                    gamma, below, inside = water_level_near(self.ct, volume, guess, width, self._buf, self._blocks,
                                                            self._sums)
            elif inside > self.n * WINDOW_MAX_FRACTION:
                self._width *= WINDOW_SHRINK
        gathered = (self._buf, self._blocks) if inside >= 0 else None
        if inside < 0:
            gamma, below = water_level(self.ct, volume, self._buf)
            if self._width == 0.0:
                self._width = abs(gamma) * WINDOW_START
        self._level = gamma
        return sample_below(self.ct, gamma, below, self._draw, gathered)

    def _sample_bias(self) -> int:
        """Draw ``i ~ p*`` of the two-basin water filling: ``1/(2k)`` on the ``k`` lowest of each class.

        Each class's ``k``-th response is searched (:func:`level_from_windows`) among the
        responses that the last update gathered (:meth:`_update`) near where it moved (the
        bias moves the two classes' responses apart by about a step per iteration, so the
        last values themselves are poor guesses), with the window rule of
        :meth:`_sample_plain`; when ``k*`` left a window, one more pass searches windows
        :data:`WINDOW_RETRY` times as wide around the same centres
        (:func:`water_level_bias_near`) before the full selection. The windowed search also
        counts each class's responses below its ``k``-th, which sampling needs.
        """
        volume = self.volume / self.s
        found = None
        if self._windows is not None:
            found = level_from_windows(self.ct, volume, self._windows, self._npos, self._buf, self._where)
            if found[5] < 0:
                found = water_level_bias_near(self.y, self.ct, volume, self._centers[0], self._centers[1],
                                              WINDOW_RETRY * self._width, self._npos, self._buf, self._where)
                self._width *= WINDOW_GROWTH
            elif found[5] > self.n * WINDOW_MAX_FRACTION:
                self._width *= WINDOW_SHRINK
        if found is None or found[5] < 0:
            gamma, b, k, top_pos, top_neg = water_level_bias(self.y, self.ct, volume, self._buf)
            found = (gamma, b, k, top_pos, top_neg, 0, count_below(self.ct, self.y, 1.0, top_pos),
                     count_below(self.ct, self.y, -1.0, top_neg), 0, 0)
            if self._width == 0.0:
                self._width = max(abs(top_pos), abs(top_neg)) * WINDOW_START
        _, _, k, top_pos, top_neg, _, below_pos, below_neg, self._gathered[0], self._gathered[1] = found
        self._tops[0], self._tops[1] = top_pos, top_neg
        u = self._draw(2 * k)
        if u < k:
            return int(nth_lowest_in_class(self.ct, self.y, 1.0, top_pos, u, below_pos))
        return int(nth_lowest_in_class(self.ct, self.y, -1.0, top_neg, u - k, below_neg))

    def warm_up_rare_paths(self) -> None:
        """Call the second try after a missed window (its gathering pass reads without updating),
        and the update passes that a small problem does not reach: with a kernel's block source
        (its rows may be cached) or a cached row, on one thread and split over threads."""
        volume = self.volume / self.s
        source = self.kernel.store.block_source(0)
        if not self.bias:
            cached = self.k_diag.copy()  # a row as the kernel hands it out: read-only
            cached.flags.writeable = False
            for row in (source, cached) if source is not None else (cached,):
                args = (self.ct, self.acc_c, self._labels, row, 0.0, 0.0, 0.0, 0.0, self._buf, self._blocks, self._sums)
                update_and_window(*args)
                update_and_window_parallel(*args, 2)
        if self.bias:
            water_level_bias_near(self.y, self.ct, volume, 0.0, 0.0, 1.0, self._npos, self._buf, self._where)
        else:
            bracket_level(volume, 0.0, 1.0, (0, 0.0, 0, 0.0))
            water_level_near(self.ct, volume, 0.0, 1.0, self._buf, self._blocks, self._sums)

    def _iterate(self) -> tuple[np.ndarray, np.ndarray]:
        """``(alpha, c)`` of the output iterate: the average, or the last one."""
        if not self.params.average:
            return self.s * self.a, self.s * self.ct
        T = max(self.iteration, 1)
        return (self.P * self.a - self.acc_a) / T, (self.P * self.ct - self.acc_c) / T

    def snapshot(self) -> Snapshot:
        alpha, c = self._iterate()
        norm2 = float(alpha @ c)  # ||w_bar||^2 = sum_i alpha_i c_i
        bias = 0.0
        if self.bias:
            gamma, bias, _, _, _ = water_level_bias(self.y, c, self.volume, self._snapshot_buf)
            c = c + self.y * bias
        else:
            gamma, _ = water_level(c, self.volume, self._snapshot_buf)
        # Algorithm 1 returns alpha / gamma; while gamma <= 0 (early on) rescaling would flip
        # the sign of the predictor, so we keep the scale (the test error is unaffected)
        scale = 1.0 / gamma if gamma > 0 else 1.0
        support = np.flatnonzero(alpha)
        return Snapshot(
            support=support,
            coef=alpha[support] * self.y[support] * scale,
            bias=float(bias * scale),
            objective=float(gamma),
            primal_objective=self.problem.hinge_objective(c * scale, norm2 * scale * scale),
        )

    def expected_kernel_evals(self) -> float:
        """``n`` per iteration (one kernel row)."""
        return float(self.n * self.iteration)

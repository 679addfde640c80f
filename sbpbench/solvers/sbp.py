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

Without a bias, an iteration is one compiled call besides its kernel row
(:func:`_plain_iteration`: the step size, the fused pass, the projection and rebase, then the
next iteration's level and draw), and a step does up to :data:`STEP_RESPONSES` responses' worth
of iterations: on a few hundred points (an estimator's pairs of classes) the Python and numba
dispatch around an iteration cost several times its arithmetic. Its draws are those of
:func:`~sbpbench.solvers.sampling.draw_index` from the generator's raw outputs, so it needs a
PCG64 generator (every run's and estimator's); with a bias the iteration is Python around
compiled calls, as is any other generator's draw.

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
from sbpbench.solvers.sampling import NEED_RAW, UniformIndex
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
#: The water level's search window (see :func:`_sample_plain`): first half-width relative to
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
#: Responses a step updates at most: a step does ``max(1, STEP_RESPONSES // n)`` iterations
#: (fewer at a limit), so that the Python loop of :meth:`Solver.advance
#: <sbpbench.solvers.base.Solver.advance>` and its clock run once per many iterations of a
#: small problem, and the clock is still read after at most ``max(n, 2^16)`` kernel evaluations.
STEP_RESPONSES = 1 << 16
#: What :func:`_plain_iteration` returns when no next index was asked for.
NO_SAMPLE = -2

# The state the compiled iteration reads and writes, in three arrays (numba's dispatch costs
# about 0.1 microsecond an argument, more than the arithmetic of an iteration's scalars).
#: Rows of ``SBP._vectors`` (shape (6, n)): ``alpha / s``, ``c / s``, their running sums
#: (``acc``, see the module docstring), the gathered responses and ``K(x_i, x_i)``.
A, CT, ACC_A, ACC_C, BUF, DIAG = range(6)
#: Entries of ``SBP._scalars``: the scale ``s``, ``||w||^2``, ``P``, the last water level, the
#: window's half-width (0: none yet), ``eta_0``, the volume ``n nu``, :data:`WINDOW_START` and
#: :data:`REBASE_BELOW` (read when the solver is made), and the last window of the unbiased
#: update: its edges, the sum below it and the sum inside it.
S, NORM2, P, LEVEL, WIDTH, ETA0, VOLUME, START, REBASE, LOW, HIGH, COVERED, INSIDE_SUM = range(13)
#: Entries of ``SBP._ints``: iterations done, the sampled index, iterations left in the step,
#: whether the last unbiased update gathered a window, its count below and inside, the level's
#: count below and whether it lies in the gathered window (for a draw that is called again
#: after :meth:`UniformIndex.refill <sbpbench.solvers.sampling.UniformIndex.refill>`), and how
#: often the unbiased level was found in the window, by the second pass, by the full selection.
(ITERATION, INDEX, LEFT, WINDOW, WINDOW_BELOW, INSIDE, BELOW, GATHERED,
 FOUND_IN_WINDOW, FOUND_NEAR, FOUND_FULL) = range(11)


@numba.njit(cache=True)
def _begin(vectors, labels, scalars, ints):
    """Algorithm 1 for the sampled ``i = ints[INDEX]`` up to the response update: ``t += 1``,
    ``eta_t = eta_0 / sqrt(t)``, ``||w||^2`` and ``alpha_i`` (with its running sum); returns the
    update's step ``eta_t y_i / s``."""
    i = ints[INDEX]
    t = ints[ITERATION] + 1
    ints[ITERATION] = t
    eta = scalars[ETA0] / np.sqrt(np.float64(t))
    s = scalars[S]
    c_i = s * vectors[CT, i]
    scalars[NORM2] += 2.0 * eta * c_i + eta * eta * vectors[DIAG, i]
    step = eta / s
    vectors[A, i] += step
    vectors[ACC_A, i] += scalars[P] * step
    return step * labels[i]


@numba.njit(cache=True)
def _finish(vectors, scalars, ints):
    """Algorithm 1 after the response update: the projection onto the unit ball (``s``), ``P``, and
    the rebase when ``s`` fell below ``scalars[REBASE]`` (module docstring); returns whether it rebased.

    The rebase folds the scale into the state: ``s := 1``, the sums so far kept in ``acc``.
    ``P a - acc`` is ``sum_t s_t a^(t)`` (a true sum, independent of the current scale); with
    ``acc := acc - P a``, ``a := s a`` and ``P := 0`` it goes on giving that sum (the same for
    the responses). The level's units change, so the window is dropped.
    """
    if scalars[NORM2] > 1.0:
        scalars[S] /= np.sqrt(scalars[NORM2])
        scalars[NORM2] = 1.0
    scalars[P] += scalars[S]
    s = scalars[S]
    if s >= scalars[REBASE]:
        return False
    weight = scalars[P]
    for state, acc in ((A, ACC_A), (CT, ACC_C)):
        for j in range(vectors.shape[1]):
            vectors[acc, j] -= weight * vectors[state, j]  # -(sum so far), already in unscaled units
            vectors[state, j] *= s
    scalars[P] = 0.0
    scalars[S] = 1.0
    scalars[WIDTH] = 0.0
    ints[WINDOW] = 0
    return True


@numba.njit(cache=True)
def _sample_plain(vectors, blocks, sums, scalars, ints, raw, draws):
    """Draw ``i ~ p*``, uniform below the water level (Algorithm 1, lines 5-6), into ``ints[INDEX]``.

    The level is selected among the responses that the last update gathered near the last
    level (:func:`_plain_iteration`, :func:`level_from_window`). When it left that window,
    one more pass gathers the bracket that the window's counts give (:func:`bracket_level`,
    :func:`water_level_near`), and only if that fails too does the full selection run. The
    window widens when the level left it and narrows while it holds many responses. The draw
    is :func:`_redraw`'s.

    Returns
    -------
    int
        The index, or :data:`~sbpbench.solvers.sampling.NEED_RAW` (the draw ran out of raw
        outputs: refill and call :func:`_redraw`).
    """
    ct, buf = vectors[CT], vectors[BUF]
    volume = scalars[VOLUME] / scalars[S]
    gamma, below, inside = 0.0, 0, -1
    if ints[WINDOW]:
        low, high = scalars[LOW], scalars[HIGH]
        window = (ints[WINDOW_BELOW], scalars[COVERED], ints[INSIDE], scalars[INSIDE_SUM])
        gamma, below, inside = level_from_window(volume, low, high, window, buf)
        if inside < 0:
            scalars[WIDTH] *= WINDOW_GROWTH
            guess, width = bracket_level(volume, low, high, window)
            if width > 0:
                gamma, below, inside = water_level_near(ct, volume, guess, width, buf, blocks, sums)
                ints[FOUND_NEAR] += inside >= 0
        else:
            ints[FOUND_IN_WINDOW] += 1
            if inside > ct.shape[0] * WINDOW_MAX_FRACTION:
                scalars[WIDTH] *= WINDOW_SHRINK
    ints[GATHERED] = inside >= 0
    if inside < 0:
        gamma, below = water_level(ct, volume, buf)
        ints[FOUND_FULL] += 1
        if scalars[WIDTH] == 0.0:
            scalars[WIDTH] = abs(gamma) * scalars[START]
    scalars[LEVEL] = gamma
    ints[BELOW] = below
    return _redraw(vectors, blocks, scalars, ints, raw, draws)


@numba.njit(cache=True)
def _redraw(vectors, blocks, scalars, ints, raw, draws):
    """The draw of :func:`_sample_plain` below the level it found (:func:`sample_below`); called
    again after a refill when it ran out of raw outputs."""
    i = sample_below(vectors[CT], scalars[LEVEL], ints[BELOW], ints[GATHERED] != 0, vectors[BUF], blocks, raw, draws)
    if i >= 0:
        ints[INDEX] = i
    return i


@numba.njit(cache=True)
def _plain_iteration(vectors, labels, row, blocks, sums, scalars, ints, raw, draws, threads):
    """An unbiased iteration for the sampled ``ints[INDEX]`` with its kernel row (or block source)
    ``row``, then, unless it was the step's last (``ints[LEFT]``), the next sample.

    ``c~ += step * y * row`` and its running sum in one pass over ``n`` (:func:`update_and_window`,
    over ``threads`` threads when more than one: :func:`update_and_window_parallel`, the same
    numbers), which also gathers the responses near the last level for the next iteration's
    (before the first window: an empty one, below every response), so an iteration reads its
    responses once. Each block of a block source is computed in that pass, just before it is added.

    Returns
    -------
    int
        The next index; :data:`NO_SAMPLE` after the step's last iteration; or
        :data:`~sbpbench.solvers.sampling.NEED_RAW` as :func:`_sample_plain`.
    """
    step, low, high = _pass_start(vectors, labels, scalars, ints)
    ct, acc_c, buf, weight = vectors[CT], vectors[ACC_C], vectors[BUF], scalars[P]
    if threads > 1:
        window = update_and_window_parallel(ct, acc_c, labels, row, step, weight, low, high, buf, blocks, sums, threads)
    else:
        window = update_and_window(ct, acc_c, labels, row, step, weight, low, high, buf, blocks, sums)
    return _pass_end(vectors, blocks, sums, scalars, ints, raw, draws, low, high, window)


@numba.njit(cache=True)
def _serial_iteration(vectors, labels, row, blocks, sums, scalars, ints, raw, draws):
    """:func:`_plain_iteration` on one thread (an argument less to dispatch, every iteration). It
    calls :func:`update_and_window` itself, so that compiling it never compiles the threaded pass
    (a constant ``threads`` would not keep numba from typing, and compiling, both branches)."""
    step, low, high = _pass_start(vectors, labels, scalars, ints)
    window = update_and_window(vectors[CT], vectors[ACC_C], labels, row, step, scalars[P], low, high, vectors[BUF],
                               blocks, sums)
    return _pass_end(vectors, blocks, sums, scalars, ints, raw, draws, low, high, window)


@numba.njit(cache=True)
def _pass_start(vectors, labels, scalars, ints):
    """The step size (:func:`_begin`) and the window ``(low, high)`` of an unbiased iteration's pass
    around the last level (before the first window: an empty one, below every response)."""
    step = _begin(vectors, labels, scalars, ints)
    width, level = scalars[WIDTH], scalars[LEVEL]
    low, high = (level - width, level + width) if width > 0.0 else (-np.inf, -np.inf)
    return step, low, high


@numba.njit(cache=True)
def _pass_end(vectors, blocks, sums, scalars, ints, raw, draws, low, high, window):
    """After an unbiased iteration's pass: record its window, :func:`_finish`, and the next sample
    (:func:`_sample_plain`) unless it was the step's last iteration (:data:`NO_SAMPLE`)."""
    ints[WINDOW] = scalars[WIDTH] > 0.0
    scalars[LOW], scalars[HIGH] = low, high
    ints[WINDOW_BELOW], scalars[COVERED], ints[INSIDE], scalars[INSIDE_SUM] = window
    _finish(vectors, scalars, ints)
    ints[LEFT] -= 1
    if ints[LEFT] <= 0:
        return NO_SAMPLE
    return _sample_plain(vectors, blocks, sums, scalars, ints, raw, draws)


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
        self.bias = bool(problem.bias)
        if self.bias and np.unique(self.y).size < 2:
            raise UserError("sbp with bias: the training set needs examples of both classes")
        self._draw = UniformIndex(self.rng)  # rng.integers(m)'s numbers, without its 4 microseconds a call
        if not (self.bias or self._draw.exact):
            raise ValueError("sbp draws from a PCG64 generator (numpy's default_rng), as every run's")
        diag = self.kernel.diag()
        self._vectors = np.zeros((DIAG + 1, n))  # rows A to DIAG
        self._vectors[DIAG] = diag
        self.a, self.ct, self.acc_a, self.acc_c = (self._vectors[r] for r in (A, CT, ACC_A, ACC_C))
        self._buf = self._vectors[BUF]  # the responses gathered by the update for the next iteration's level
        self._scalars = np.zeros(INSIDE_SUM + 1)
        self._scalars[[S, VOLUME, START, REBASE]] = 1.0, self.volume, WINDOW_START, REBASE_BELOW
        # eta_0, the initial step size: the parameter, or Algorithm 1's when it is 0
        self.eta0 = float(self.params.eta0 if self.params.eta0 > 0 else 1.0 / np.sqrt(diag.max()))
        self._ints = np.zeros(FOUND_FULL + 1, dtype=np.int64)
        self._snapshot_buf = np.empty(n)  # scratch of snapshot(), which must not touch _buf
        self._where = np.empty(n, dtype=np.int64)  # with a bias: the indices of the gathered responses
        self._flags = np.empty(BLOCK, dtype=np.uint8)  # scratch of the biased update's pass
        self._blocks, self._sums = window_blocks(n)  # without a bias: its per-block counts and sums
        self._pass: Any = None if problem.bias else self._update_pass(n)  # the unbiased iteration
        self._positions = np.empty(BLOCK, dtype=np.int64)  # the same, with a bias
        self._tops = np.zeros(2)  # with a bias: each class's last k-th response
        self._gathered = np.zeros(2, dtype=np.int64)  # and how many of its responses the last window gathered
        self._centers = np.zeros(2)  # and where the update moved its k-th (the windows' centres)
        self._windows: Any = None  # with a bias: what the last update gathered near the level (None: nothing)
        self._npos = int(np.count_nonzero(self.y > 0))
        self._labels = self.y.astype(np.int8)  # y for the update's pass: a ninth of the bytes, the same products

    @property
    def eta0(self) -> float:
        """The initial step size ``eta_0``."""
        return float(self._scalars[ETA0])

    @eta0.setter
    def eta0(self, value: float) -> None:
        self._scalars[ETA0] = value

    @property
    def s(self) -> float:
        """The global scale: ``alpha = s a``, ``c = s c~``."""
        return float(self._scalars[S])

    @property
    def P(self) -> float:  # noqa: N802 (the module docstring's name)
        """``sum`` of ``s`` over the finished iterations since the last rebase."""
        return float(self._scalars[P])

    @property
    def norm2(self) -> float:
        """``||w||^2 = r_t^2`` of Algorithm 1."""
        return float(self._scalars[NORM2])

    @staticmethod
    def _update_pass(n: int) -> Any:
        """The unbiased iteration: :func:`_serial_iteration`, or with its pass split over numba's
        threads when there are several and :data:`PARALLEL_PASS_MIN` responses or more, whenever
        that is faster now (:class:`~sbpbench.threads.FasterOfTwo`; the same numbers either way)."""
        threads = numba.get_num_threads()
        if threads < 2 or n < PARALLEL_PASS_MIN:
            return _serial_iteration
        return FasterOfTwo(lambda *args: _plain_iteration(*args, threads), _serial_iteration)  # type: ignore[call-arg]

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """Iterations of Algorithm 1 (sample below the water level, add a row, project): up to
        :data:`STEP_RESPONSES` responses' worth, within the limits.

        Without a bias each iteration is one compiled call (:func:`_plain_iteration`, the first
        sample :func:`_sample_plain`) besides its kernel row; with one, :meth:`_iterate_bias`.
        """
        count = math.ceil(min(iterations, kernel_evals / self.n, max(1, STEP_RESPONSES // self.n)))
        if self.bias:
            for _ in range(count):
                self._iterate_bias()
            return False
        vectors, labels, blocks, sums, scalars, ints = (self._vectors, self._labels, self._blocks, self._sums,
                                                        self._scalars, self._ints)
        draw, row_blocks, iterate = self._draw, self.kernel.row_blocks, self._pass
        raw, draws = draw.raw, draw.state
        ints[LEFT] = count
        i = _sample_plain(vectors, blocks, sums, scalars, ints, raw, draws)
        for _ in range(count):
            while i == NEED_RAW:
                draw.refill()
                raw = draw.raw
                i = _redraw(vectors, blocks, scalars, ints, raw, draws)
            i = iterate(vectors, labels, row_blocks(i), blocks, sums, scalars, ints, raw, draws)
        self.iteration += count
        return False

    def _iterate_bias(self) -> None:
        """One iteration with a bias (Algorithm 3): :meth:`_sample_bias`, a row, :meth:`_update_bias`."""
        self._ints[INDEX] = self._sample_bias()
        row = self.kernel.row(int(self._ints[INDEX]))
        self._update_bias(row, _begin(self._vectors, self._labels, self._scalars, self._ints))
        if _finish(self._vectors, self._scalars, self._ints):
            self._windows = None
        self.iteration += 1

    def _update_bias(self, row: np.ndarray, step: float) -> None:
        """``c~ += step * y * row`` and its running sum, in one pass over ``n``.

        Once there is a search window, the same pass gathers the responses near the level
        for the next iteration's (:func:`update_and_class_windows`: around where each class's
        ``k``-th moves, :func:`class_window_centers`), so an iteration reads its responses once.
        """
        y, ct, width, weight = self._labels, self.ct, float(self._scalars[WIDTH]), float(self._scalars[P])
        if width == 0.0:
            add_row_and_sum(ct, self.acc_c, y, row, step, weight)
            self._windows = None
        else:
            self._centers = class_window_centers(row, step, y, self._tops, self._where, self._npos, self._gathered)
            self._windows = update_and_class_windows(ct, self.acc_c, y, row, step, weight, self._centers, width,
                                                     self._npos, self._buf, self._where, self._flags,
                                                     self._positions)

    def _sample_bias(self) -> int:
        """Draw ``i ~ p*`` of the two-basin water filling: ``1/(2k)`` on the ``k`` lowest of each class.

        Each class's ``k``-th response is searched (:func:`level_from_windows`) among the
        responses that the last update gathered (:meth:`_update_bias`) near where it moved (the
        bias moves the two classes' responses apart by about a step per iteration, so the
        last values themselves are poor guesses), with the window rule of
        :func:`_sample_plain`; when ``k*`` left a window, one more pass searches windows
        :data:`WINDOW_RETRY` times as wide around the same centres
        (:func:`water_level_bias_near`) before the full selection. The windowed search also
        counts each class's responses below its ``k``-th, which sampling needs.
        """
        volume = self.volume / self.s
        width = float(self._scalars[WIDTH])  # Python floats: inf, not a warning, when it keeps growing
        found = None
        if self._windows is not None:
            found = level_from_windows(self.ct, volume, self._windows, self._npos, self._buf, self._where)
            if found[5] < 0:
                found = water_level_bias_near(self.y, self.ct, volume, self._centers[0], self._centers[1],
                                              WINDOW_RETRY * width, self._npos, self._buf, self._where)
                width *= WINDOW_GROWTH
            elif found[5] > self.n * WINDOW_MAX_FRACTION:
                width *= WINDOW_SHRINK
        if found is None or found[5] < 0:
            gamma, b, k, top_pos, top_neg = water_level_bias(self.y, self.ct, volume, self._buf)
            found = (gamma, b, k, top_pos, top_neg, 0, count_below(self.ct, self.y, 1.0, top_pos),
                     count_below(self.ct, self.y, -1.0, top_neg), 0, 0)
            if width == 0.0:
                width = max(abs(top_pos), abs(top_neg)) * float(self._scalars[START])
        self._scalars[WIDTH] = width
        _, _, k, top_pos, top_neg, _, below_pos, below_neg, self._gathered[0], self._gathered[1] = found
        self._tops[0], self._tops[1] = top_pos, top_neg
        u = self._draw(2 * k)
        if u < k:
            return int(nth_lowest_in_class(self.ct, self.y, 1.0, top_pos, u, below_pos))
        return int(nth_lowest_in_class(self.ct, self.y, -1.0, top_neg, u - k, below_neg))

    def warm_up_rare_paths(self) -> None:
        """Call the second try after a missed window (with a bias: its gathering pass reads without
        updating), and, without a bias, the iteration with what a small problem does not reach
        but the run (of :attr:`~sbpbench.kernels.kernel.Kernel.run_n` points) does: the kernel's
        block sources, when it serves them instead of rows, and the pass split over threads, when
        :meth:`_update_pass` chooses it. Nothing else: each form compiles for seconds."""
        if self.bias:
            volume = self.volume / self.s
            water_level_bias_near(self.y, self.ct, volume, 0.0, 0.0, 1.0, self._npos, self._buf, self._where)
            return
        row: Any
        if self.kernel.serves_blocks:
            row = self.kernel.store.block_source(0)
        else:
            row = self.k_diag.copy()  # a row as the kernel hands it out: read-only
            row.flags.writeable = False
        ints = self._ints.copy()  # on copies of the state: the solver is left as it was
        ints[INDEX], ints[LEFT] = 0, 1
        state = (self._scalars, ints, self._draw.raw, self._draw.state)
        _serial_iteration(self._vectors.copy(), self._labels, row, *window_blocks(self.n), *(a.copy() for a in state))
        if self._update_pass(self.kernel.run_n) is not _serial_iteration:
            _plain_iteration(self._vectors.copy(), self._labels, row, *window_blocks(self.n),  # type: ignore[call-arg]
                             *(a.copy() for a in state), numba.get_num_threads())

    @property
    def k_diag(self) -> np.ndarray:
        """``K(x_i, x_i)`` for every training point."""
        return self._vectors[DIAG]

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

"""The scikit-learn estimators (sbpbench.estimators): scikit-learn's own checks, and the solvers' answers.

Every estimator passes ``parametrize_with_checks``, but for the two checks that fitting with
integer sample weights gives the fit on repeated rows to 7 digits, declared expected failures for
the weighted estimators as scikit-learn declares them for SVC (SMO stops at ``eps``, SDCA draws at
random: the same optimum, other iterates); ``test_integer_weights_are_repeated_rows`` checks
that equivalence to the solvers' accuracy instead. On real data (Adult rows, MNIST digits) the
estimator's predictor is the snapshot of the solver run directly with the same seed, its
``kernel_evals_`` the kernel's count, and one-vs-rest, sparse input, the budgets, the parameter
errors and the example of docs/estimators.md are checked.
The defaults are a scikit-learn user's: ``sigma2='scale'`` and ``C = 1`` are SVC's, and each
estimator's default fit scores within 1 percentage point of ``SVC()``'s on scikit-learn's bundled data.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import pickle
import re
import warnings

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.metrics import log_loss
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score, train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.multiclass import _ovr_decision_function
from threadpoolctl import threadpool_info

from sbpbench import estimators
from sbpbench.data.sources.mnist import read_idx
from sbpbench.data.split import Split
from sbpbench.estimators import (
    ESTIMATORS,
    KernelClassifier,
    PegasosClassifier,
    PerceptronClassifier,
    SBPClassifier,
    SDCAClassifier,
    SMOClassifier,
)
from sbpbench.kernels import Kernel, KernelSpec
from sbpbench.kernels.bandwidth import median_sigma2
from sbpbench.problem import Problem
from sbpbench.solvers import SOLVERS
from tests.docs_pages import section as docs_section
from tests.problems import SHARED

SIGMA2 = 10.0  # Table 2 of the SBP paper for Adult
SEED = 5

pytestmark = pytest.mark.usefixtures("one_numba_thread")


# ----------------------------------------------------------------------------- scikit-learn's checks


def expected_failures(estimator):
    """The checks a weighted estimator fails as SVC does (scikit-learn's own list for SVC): integer
    weights against repeated rows to rtol 1e-7 (see the module docstring)."""
    if not estimator.weighted:
        return {}
    why = "sample_weight is not equivalent to repeated rows to 7 digits (SMO stops at eps, SDCA draws)"
    return {"check_sample_weight_equivalence_on_dense_data": why, "check_sample_weight_equivalence_on_sparse_data": why}


# SMO's default budget (one epoch) stops it before eps on some of the checks' data; that warning
# is tested in test_budgets
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks([cls() for cls in ESTIMATORS] + [SBPClassifier(bias=True), SMOClassifier(bias=True),
                                                          PegasosClassifier(kernel="linear")],
                         expected_failed_checks=expected_failures)
def test_scikit_learn_checks(estimator, check):
    check(estimator)


def test_constructor_arguments_are_the_declared_parameters():
    """Each estimator takes exactly its declared parameters (the solver's own included), with their
    defaults, plus random_state where the solver draws; its docstring lists them all."""
    solvers = [cls.solver for cls in ESTIMATORS]
    assert len(set(solvers)) == len(solvers) and set(solvers) <= set(SOLVERS)  # one estimator per solver
    for cls in ESTIMATORS:
        signature = inspect.signature(cls.__init__).parameters
        declared = cls.declared()
        assert set(SOLVERS[cls.solver].Params.declared()) <= set(declared)
        expected = [*declared, *(["random_state"] if cls.draws else []), *(["class_weight"] if cls.weighted else []),
                    "probability", "multi_class", "decision_function_shape"]
        assert list(signature)[1:] == expected, cls.__name__
        assert {name: signature[name].default for name in declared} == {n: p.default for n, p in declared.items()}
        assert (signature["multi_class"].default, signature["decision_function_shape"].default) == (
            cls.default_multi_class, "ovr")
        assert all(f"\n{name} : " in (cls.__doc__ or "") for name in expected), cls.__name__


# ----------------------------------------------------------------------------- the solver's answer


#: (estimator, the problem it poses: lambda as a function of n, nu, bias; the solver's parameters;
#: epochs to run it directly, None: to convergence)
CASES = {
    "sbp": (SBPClassifier(sigma2=SIGMA2, nu=0.05, epochs=2, random_state=SEED),
            lambda n: None, 0.05, False, {}, 2),
    "sbp-bias-last": (SBPClassifier(sigma2=SIGMA2, nu=0.05, bias=True, average=False, eta0=0.5, epochs=1.5,
                                    random_state=SEED), lambda n: None, 0.05, True,
                      {"average": False, "eta0": 0.5}, 1.5),
    "pegasos": (PegasosClassifier(sigma2=SIGMA2, C=2.0, mini_batch=2, epochs=2, random_state=SEED),
                lambda n: 1.0 / (2.0 * n), None, False, {"mini_batch": 2}, 2),
    "sdca": (SDCAClassifier(sigma2=SIGMA2, lam=1e-3, epochs=3, random_state=SEED), lambda n: 1e-3, None, False, {}, 3),
    "smo": (SMOClassifier(sigma2=SIGMA2, bias=True, eps=1e-4, epochs=None), lambda n: 1.0 / n, None, True,
            {"eps": 1e-4}, None),
    "perceptron": (PerceptronClassifier(sigma2=SIGMA2, epochs=3, random_state=SEED), lambda n: None, None, False, {},
                   3),
}


def run_directly(solver, train, test, lam, nu, bias, params, epochs, k=0, sigma2=SIGMA2):
    """The solver on the problem, made and advanced through the solver API as the runner does, with
    the generator of binary problem ``k``."""
    problem = Problem.build(train, test, KernelSpec("gaussian", sigma2), lam, nu, bias)
    cls = SOLVERS[solver]
    run = cls.create(problem, np.random.default_rng([SEED, k]), cls.Params(**params))
    finished = run.advance(np.inf if epochs is None else round(epochs * problem.n), np.inf, np.inf)
    assert finished or epochs is not None
    return problem, run, run.snapshot()


def test_every_estimator_has_a_case():
    """CONTRIBUTING, "Add a solver", step 5: an estimator is compared with its solver run directly."""
    assert {type(estimator) for estimator, *_ in CASES.values()} == set(ESTIMATORS)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_predictor_is_the_solvers_snapshot(adult_small, case):
    estimator, lam, nu, bias, params, epochs = CASES[case]
    train, test = adult_small
    est = clone(estimator).fit(train.X, train.y)
    problem, run, snap = run_directly(estimator.solver, train, test, lam(train.n), nu, bias, params, epochs)

    np.testing.assert_array_equal(est.classes_, [-1.0, 1.0])
    np.testing.assert_array_equal(est.support_, np.sort(snap.support))
    np.testing.assert_array_equal(est.dual_coef_[0, np.searchsorted(est.support_, snap.support)], snap.coef)
    np.testing.assert_array_equal(est.intercept_, [snap.bias])
    assert (est.intercept_[0] != 0.0) == bias
    assert sp.issparse(est.support_vectors_) and (est.support_vectors_ != train.X[est.support_]).nnz == 0
    assert est.n_iter_.tolist() == [run.iteration] and est.n_features_in_ == train.X.shape[1]
    assert est.kernel_evals_ == problem.kernel.kernel_evals == run.expected_kernel_evals() > 0

    scores = problem.kernel.decision(problem.test_X, snap.support, snap.coef, snap.bias)
    if case == "perceptron":  # its support is in order of arrival: the same sum in another order
        np.testing.assert_allclose(est.decision_function(test.X), scores, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(est.decision_function(test.X), scores)
    np.testing.assert_array_equal(est.predict(test.X), np.where(est.decision_function(test.X) > 0, 1.0, -1.0))
    assert est.score(test.X, test.y) == pytest.approx(1.0 - snap.test_error(problem))

    counted = est.kernel_evals_
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.decision_function(test.X), est.decision_function(test.X))
    assert est.kernel_evals_ == again.kernel_evals_ == counted  # predicting counts nothing
    assert not any(isinstance(value, Kernel) for value in vars(again).values())


def test_smo_estimator_agrees_with_libsvm(adult_small):
    """An independent answer: C is LIBSVM's C, and with bias SMO solves SVC's problem."""
    train, test = adult_small
    ours = SMOClassifier(sigma2=SIGMA2, C=2.0, bias=True, eps=1e-6, epochs=None).fit(train.X, train.y)
    libsvm = SVC(C=2.0, gamma=1.0 / (2.0 * SIGMA2), tol=1e-6, shrinking=False).fit(train.X.toarray(), train.y)
    np.testing.assert_allclose(ours.decision_function(test.X), libsvm.decision_function(test.X.toarray()), atol=1e-4)
    coef = np.zeros((2, train.n))  # y_i alpha_i of every training example, ours and LIBSVM's
    coef[0, ours.support_], coef[1, libsvm.support_] = ours.dual_coef_[0], libsvm.dual_coef_[0]
    np.testing.assert_allclose(coef[0], coef[1], atol=1e-4)
    assert np.abs(coef).max() == pytest.approx(2.0)  # some alpha at its bound C


def test_sparse_and_dense_input_give_the_same_fit(adult_small):
    train, test = adult_small
    sparse = SBPClassifier(sigma2=SIGMA2, bias=True, random_state=1).fit(train.X, train.y)
    dense = SBPClassifier(sigma2=SIGMA2, bias=True, random_state=1).fit(train.X.toarray(), train.y)
    assert sp.issparse(sparse.support_vectors_) and isinstance(dense.support_vectors_, np.ndarray)
    np.testing.assert_array_equal(sparse.support_, dense.support_)
    assert sparse.kernel_evals_ == dense.kernel_evals_
    for Z in (test.X, test.X.toarray()):
        np.testing.assert_allclose(dense.decision_function(Z), sparse.decision_function(test.X), rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_array_equal(dense.predict(Z), sparse.predict(test.X))


# ----------------------------------------------------------------------------- more classes: MNIST digits


@pytest.fixture(scope="module")
def digits():
    """600 training and 400 test images of MNIST's t10k set, all ten digits (pixels / 255, CSR)."""
    images, labels = SHARED / "mnist" / "t10k-images-idx3-ubyte.gz", SHARED / "mnist" / "t10k-labels-idx1-ubyte.gz"
    if not images.is_file():
        pytest.skip(f"real data {images} not available")
    X = sp.csr_matrix(read_idx(images, 2051).reshape(10000, -1).astype(np.float64) / 255.0)
    y = read_idx(labels, 2049).astype(np.int64)
    return Split(X[:600], y[:600]), Split(X[9600:], y[9600:])


def test_one_vs_rest_on_mnist_digits_is_one_binary_run_per_class(digits):
    train, test = digits
    est = SBPClassifier(sigma2=25.0, nu=0.005, epochs=2, random_state=SEED, multi_class="ovr").fit(train.X, train.y)
    np.testing.assert_array_equal(est.classes_, np.arange(10))
    scores = est.decision_function(test.X)
    assert scores.shape == (test.n, 10) and est.dual_coef_.shape == (10, est.support_.size)
    np.testing.assert_array_equal(est.predict(test.X), np.argmax(scores, axis=1))
    assert est.score(test.X, test.y) > 0.75  # LIBSVM's SVC (C = 10, the same kernel) has 0.81 on these images

    evals = 0
    for digit in range(10):
        binary = Split(train.X, np.where(train.y == digit, 1.0, -1.0))
        problem, run, snap = run_directly("sbp", binary, Split(test.X, test.y), None, 0.005, False, {}, 2, k=digit,
                                       sigma2=25.0)
        np.testing.assert_array_equal(scores[:, digit], problem.kernel.decision(problem.test_X, snap.support,
                                                                                 snap.coef, snap.bias))
        assert est.n_iter_[digit] == run.iteration
        evals += problem.kernel.kernel_evals
    assert est.kernel_evals_ == evals


def test_one_vs_rest_classes_share_rows_counted_per_class():
    """Kernel.reset(keep_cache=True), between the classes: a cached row is counted, not computed."""
    kernel = Kernel(np.random.default_rng(0).random((20, 3)), KernelSpec("gaussian", 1.0))
    first = kernel.row(4)
    assert (kernel.kernel_evals, kernel.kernel_evals_computed) == (20, 20)
    kernel.reset(keep_cache=True)
    assert kernel.row(4) is first and (kernel.kernel_evals, kernel.kernel_evals_computed) == (20, 0)
    kernel.reset()
    assert kernel.row(4) is not first and (kernel.kernel_evals, kernel.kernel_evals_computed) == (20, 20)


def test_one_vs_rest_equals_scikit_learns_wrapper(digits):
    """SMO draws nothing, so scikit-learn's OneVsRestClassifier over it gives our one-vs-rest exactly."""
    train, test = digits
    ours = SMOClassifier(sigma2=25.0, C=10.0, bias=True, epochs=3, multi_class="ovr").fit(train.X, train.y)
    theirs = OneVsRestClassifier(SMOClassifier(sigma2=25.0, C=10.0, bias=True, epochs=3)).fit(train.X, train.y)
    np.testing.assert_array_equal(ours.decision_function(test.X), theirs.decision_function(test.X))
    assert ours.kernel_evals_ == sum(e.kernel_evals_ for e in theirs.estimators_)


def test_one_vs_one_on_mnist_digits_is_one_binary_run_per_pair(digits):
    """Pair (i, j) is the binary problem on the two digits' examples, digit i +1, with the generator
    and the budget (2 epochs of its own examples) of problem k; the columns of the 'ovo' shape are
    its decision values, kernel_evals_ the sum of the pairs' kernels' counts."""
    train, test = digits
    est = SBPClassifier(sigma2=25.0, nu=0.005, epochs=2, random_state=SEED, decision_function_shape="ovo").fit(
        train.X, train.y)
    scores = est.decision_function(test.X)
    assert scores.shape == (test.n, 45) and est.dual_coef_.shape == (45, est.support_.size)
    evals = 0
    for k, (i, j) in enumerate(itertools.combinations(range(10), 2)):
        rows = np.flatnonzero((train.y == i) | (train.y == j))
        pair = Split(train.X[rows], np.where(train.y[rows] == i, 1.0, -1.0))
        problem, run, snap = run_directly("sbp", pair, Split(test.X, test.y), None, 0.005, False, {}, 2, k=k,
                                          sigma2=25.0)
        np.testing.assert_allclose(scores[:, k], problem.kernel.decision(problem.test_X, snap.support, snap.coef,
                                                                         snap.bias), rtol=1e-12, atol=1e-12)
        assert est.n_iter_[k] == run.iteration == round(2 * rows.size)
        np.testing.assert_array_equal(np.flatnonzero(est.dual_coef_[k]),
                                      np.searchsorted(est.support_, rows[snap.support]))
        evals += problem.kernel.kernel_evals
    assert est.kernel_evals_ == evals
    by_class = est.set_params(decision_function_shape="ovr").decision_function(test.X)
    assert by_class.shape == (test.n, 10)
    np.testing.assert_array_equal(est.predict(test.X), np.argmax(by_class, axis=1))
    assert est.score(test.X, test.y) > 0.75


@pytest.mark.parametrize("shape", ["ovo", "ovr"])
def test_one_vs_one_smo_with_bias_is_svc(shape):
    """An independent exact answer: SMO with a bias solves each of SVC's pair problems, with the same
    weights, so both decision shapes are SVC's (votes and confidences of scikit-learn's
    _ovr_decision_function for 'ovr'), and the fitted attributes give them; predict is SVC's with
    break_ties=True (LIBSVM's own predict breaks a tie of votes by the lower class)."""
    X, y = load_digits(n_class=4, return_X_y=True)
    X = MinMaxScaler().fit_transform(X)
    weights = np.random.default_rng(0).integers(1, 4, size=y.size)
    train, test = slice(0, 400), slice(400, None)
    ours = SMOClassifier(bias=True, eps=1e-6, class_weight={0: 2.0}, decision_function_shape=shape).fit(
        X[train], y[train], sample_weight=weights[train])
    svc = SVC(tol=1e-6, class_weight={0: 2.0}, decision_function_shape=shape).fit(X[train], y[train],
                                                                                   sample_weight=weights[train])
    values = ours.decision_function(X[test])
    assert values.shape == (y[test].size, 6 if shape == "ovo" else 4)
    np.testing.assert_allclose(values, svc.decision_function(X[test]), atol=1e-4)
    np.testing.assert_allclose(ours.intercept_, svc.intercept_, atol=1e-4)
    np.testing.assert_array_equal(ours.support_, np.sort(svc.support_))
    np.testing.assert_array_equal(ours.n_iter_.shape, svc.n_iter_.shape)
    kernel = np.exp(-np.square(X[test, None, :] - ours.support_vectors_[None]).sum(axis=2) / (2.0 * ours.sigma2_))
    pairs = kernel @ ours.dual_coef_.T + ours.intercept_  # each pair's f_k from the fitted attributes
    np.testing.assert_allclose(values, pairs if shape == "ovo" else _ovr_decision_function(pairs < 0, -pairs, 4),
                               atol=1e-9)
    ties_broken = svc.set_params(decision_function_shape="ovr", break_ties=True)  # the most votes, then confidence
    np.testing.assert_array_equal(ours.predict(X[test]), ties_broken.predict(X[test]))


def test_one_vs_one_and_rest_of_the_same_data():
    """The two schemes: a column per class from either, predict its largest column; the pairs' shape
    of a one-vs-rest fit is refused, as are values other than 'ovo' and 'ovr'."""
    X, y = load_digits(n_class=3, return_X_y=True)
    for scheme in ("ovo", "ovr"):
        est = SDCAClassifier(multi_class=scheme, random_state=0).fit(X, y)
        scores = est.decision_function(X)
        assert scores.shape == (y.size, 3) and est.dual_coef_.shape == (3, est.support_.size)
        np.testing.assert_array_equal(est.predict(X), est.classes_[np.argmax(scores, axis=1)])
        assert est.score(X, y) > 0.95
    assert est.n_iter_.tolist() == [3 * y.size] * 3  # one-vs-rest: 3 epochs of all the examples each
    with pytest.raises(ValueError, match=re.escape("SDCAClassifier: parameter 'decision_function_shape'='ovo' needs "
                                                   "multi_class='ovo'")):
        est.set_params(decision_function_shape="ovo").decision_function(X)
    with pytest.raises(ValueError, match=re.escape("SDCAClassifier: parameter 'decision_function_shape'='ovo' needs")):
        SDCAClassifier(multi_class="ovr", decision_function_shape="ovo").fit(X, y)
    with pytest.raises(ValueError, match=re.escape("SMOClassifier: parameter 'multi_class': expected 'ovo' or 'ovr', "
                                                   "got 'crammer_singer'")):
        SMOClassifier(multi_class="crammer_singer").fit(X, y)
    binary = SMOClassifier(decision_function_shape="ovo").fit(X[y < 2], y[y < 2])  # two classes: one problem
    assert binary.decision_function(X).shape == (y.size,)


# ----------------------------------------------------------------------------- budgets and errors


def test_budgets(adult_small):
    train, _ = adult_small
    n = train.n
    est = SBPClassifier(sigma2=SIGMA2, epochs=None, kernel_evals=10.5 * n, random_state=0).fit(train.X, train.y)
    assert est.n_iter_.tolist() == [11] and est.kernel_evals_ == 11 * n  # n per iteration, to the boundary after
    est = PegasosClassifier(sigma2=SIGMA2, epochs=0.5, random_state=0).fit(train.X, train.y)
    assert est.n_iter_.tolist() == [round(0.5 * n)]
    # a deadline already past when training starts: no iteration, the zero predictor
    est = SDCAClassifier(sigma2=SIGMA2, epochs=None, seconds=1e-300, random_state=0).fit(train.X, train.y)
    assert est.n_iter_.tolist() == [0] and est.kernel_evals_ == 0 and est.support_.size == 0
    assert set(est.predict(train.X)) == {-1.0}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        converged = SMOClassifier(sigma2=SIGMA2, epochs=None).fit(train.X, train.y)
    assert converged.n_iter_[0] > n  # more than the default epoch: it ran to eps
    with pytest.warns(ConvergenceWarning, match=r"the budget stopped 1 of 1 binary problems before solver 'smo'"):
        SMOClassifier(sigma2=SIGMA2, epochs=0.5).fit(train.X, train.y)


@pytest.mark.parametrize("limit", [{"epochs": 1e308}, {"epochs": 2.0**53}, {"kernel_evals": 1e300}])
def test_a_budget_past_2_to_the_53_is_one_value_error_naming_the_parameter(limit):
    X, y = load_breast_cancer(return_X_y=True)
    name = next(iter(limit))
    with pytest.raises(ValueError, match=rf"^PegasosClassifier: parameter '{name}': .*more than 2\*\*53"):
        PegasosClassifier(**{"epochs": None, **limit}).fit(X, y)


def test_random_state_selects_the_stream(adult_small):
    train, _ = adult_small
    fit = [SDCAClassifier(sigma2=SIGMA2, random_state=s).fit(train.X, train.y).dual_coef_ for s in (3, 3, 4)]
    assert np.array_equal(fit[0], fit[1]) and not np.array_equal(fit[0], fit[2])
    from_states = [SDCAClassifier(sigma2=SIGMA2, random_state=np.random.RandomState(0)).fit(train.X, train.y).dual_coef_
                   for _ in range(2)]  # a seed drawn from each RandomState: the same draw
    assert np.array_equal(from_states[0], from_states[1])


@pytest.mark.parametrize("estimator, message", [
    (SBPClassifier(nu=-1.0), "SBPClassifier: parameter 'nu'=-1.0: must be in [0, 1]"),
    (SBPClassifier(nu=5.0), "SBPClassifier: parameter 'nu'=5.0: must be in [0, 1]"),
    (SBPClassifier(nu=None), "SBPClassifier: parameter 'nu': expected a finite number, got None"),
    (PegasosClassifier(C=1e308), "PegasosClassifier: parameter 'C'=1e+308: gives lambda = 0.0 at n = "),
    (SBPClassifier(cache_mb=-1.0), "parameter 'cache_mb'=-1.0: must be >= 0"),
    (PerceptronClassifier(seconds=-1.0), "parameter 'seconds'=-1.0: must be positive"),
    (SBPClassifier(sigma2=0), "parameter 'sigma2'=0.0: must be positive"),
    (SBPClassifier(sigma2=float("nan")),
     "parameter 'sigma2': expected a finite number or 'scale' or 'median', got nan"),
    (SBPClassifier(sigma2="auto"), "parameter 'sigma2': expected a finite number or 'scale' or 'median', got 'auto'"),
    (SBPClassifier(epochs="all"), "parameter 'epochs': expected a finite number or None, got 'all'"),
    (PegasosClassifier(C=None), "parameter 'C': expected a finite number, got None"),
    (SBPClassifier(eta0="big"), "parameter 'eta0': expected a finite number, got 'big'"),
    (SBPClassifier(average=1), "parameter 'average': expected True or False, got 1"),
    (SBPClassifier(kernel="poly"), "parameter 'kernel'='poly': 'poly' is not one of: gaussian, linear"),
    (PegasosClassifier(mini_batch=1.5), "parameter 'mini_batch': expected an integer of at most 9223372036854775807"),
    (PegasosClassifier(C=2.0, lam=0.1), "give parameter 'C' or 'lam', not both"),
    (SDCAClassifier(lam=-2.0), "parameter 'lam'=-2.0: must be positive"),
    (SMOClassifier(eps=0.0), "parameter 'eps'=0.0: must be positive"),
    (PerceptronClassifier(epochs=None), "solver 'perceptron' does not stop by itself: give at least one of the "
                                        "parameters 'epochs', 'kernel_evals', 'seconds'"),
    (PerceptronClassifier(kernel_evals=0), "parameter 'kernel_evals'=0.0: must be positive"),
    (PerceptronClassifier(random_state=-3), "parameter 'random_state': expected None, an integer >= 0"),
    (PegasosClassifier(representation="primal"), "PegasosClassifier: solver 'pegasos': representation 'primal' "
                                                 "needs kernel.name linear, not 'gaussian'"),
])
def test_bad_parameters_end_fit_with_a_value_error_naming_them(adult_small, estimator, message):
    train, _ = adult_small
    with pytest.raises(ValueError, match=re.escape(message)):
        estimator.fit(train.X, train.y)


def test_one_class_is_refused_and_leaves_the_estimator_unfitted(adult_small):
    train, _ = adult_small
    est = SBPClassifier()
    with pytest.raises(ValueError, match="needs samples of at least 2 classes; got 1 class"):
        est.fit(train.X, np.ones(train.n))
    with pytest.raises(NotFittedError):
        est.predict(train.X)


def test_the_linear_kernel_and_pegasos_primal_form(adult_small):
    """Pegasos on the linear kernel runs its primal form (no kernel evaluation); its expansion over the
    support vectors predicts as its own primal w does."""
    train, test = adult_small
    est = PegasosClassifier(kernel="linear", epochs=2, random_state=SEED).fit(train.X, train.y)
    problem = Problem.build(train, test, KernelSpec("linear"), 1.0 / train.n, None, False)
    run = SOLVERS["pegasos"].create(problem, np.random.default_rng([SEED, 0]), None)
    run.advance(2 * train.n, np.inf, np.inf)
    snap = run.snapshot()
    assert snap.predict is not None and est.kernel_evals_ == 0
    np.testing.assert_allclose(est.decision_function(test.X), snap.predict(problem.test_X), rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------- the defaults: SVC's


def breast_cancer():
    """scikit-learn's breast-cancer data: 569 examples of 30 features, two classes."""
    return load_breast_cancer(return_X_y=True)


def digits_even_odd():
    """scikit-learn's 8x8 digits (1797 examples of 64 features), even digits against odd ones."""
    X, y = load_digits(return_X_y=True)
    return X, y % 2


#: The protocol: 5-fold cross-validation, shuffled and stratified with a fixed seed, of the estimator
#: behind a MinMaxScaler, against SVC() in the same pipeline on the same folds.
FOLDS = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
#: How far below SVC()'s mean accuracy a default fit may score.
TOLERANCE = 0.01


def accuracy(estimator, data) -> float:
    """The protocol's mean accuracy of ``estimator`` on ``data``."""
    X, y = data()
    return float(cross_val_score(make_pipeline(MinMaxScaler(), estimator), X, y, cv=FOLDS).mean())


@functools.cache
def svc_accuracy(data) -> float:
    return accuracy(SVC(), data)


@pytest.mark.parametrize("data", [breast_cancer, digits_even_odd])
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_the_default_fit_scores_within_one_point_of_svc(cls, data):
    """A scikit-learn user's first try: the estimator with its defaults (the seed fixed) in a pipeline."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # SMO's default runs to eps
        ours = accuracy(cls(random_state=0) if cls.draws else cls(), data)
    theirs = svc_accuracy(data)
    assert theirs > 0.97
    assert ours >= theirs - TOLERANCE, f"{cls.__name__}: {ours:.4f} against SVC()'s {theirs:.4f}"


@functools.cache
def ten_digits():
    """scikit-learn's 10 digits, a stratified quarter held out (seed 0)."""
    X, y = load_digits(return_X_y=True)
    return train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)


@functools.cache
def svc_ten_digits() -> float:
    X_train, X_test, y_train, y_test = ten_digits()
    return float(make_pipeline(MinMaxScaler(), SVC()).fit(X_train, y_train).score(X_test, y_test))


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_the_default_fit_on_ten_digits_scores_within_one_point_of_svc(cls):
    """The default scheme over 10 classes (one-vs-one, the Perceptron's one-vs-rest) against SVC()'s
    one-vs-one, behind a MinMaxScaler, on the same held-out quarter."""
    X_train, X_test, y_train, y_test = ten_digits()
    pipe = make_pipeline(MinMaxScaler(), cls(random_state=0) if cls.draws else cls())
    ours = pipe.fit(X_train, y_train).score(X_test, y_test)
    theirs = svc_ten_digits()
    assert theirs > 0.98
    assert ours >= theirs - TOLERANCE, f"{cls.__name__}: {ours:.4f} against SVC()'s {theirs:.4f}"


@pytest.mark.parametrize("sparse", [False, True])
def test_sigma2_scale_and_C_are_those_of_svc(sparse):
    """SMO with a bias solves SVC's problem; with both left at their defaults, the same kernel and C."""
    X, y = breast_cancer()
    X = MinMaxScaler().fit_transform(X)
    train, test = (sp.csr_matrix(X[:400]), X[400:]) if sparse else (X[:400], X[400:])
    ours = SMOClassifier(bias=True, eps=1e-6).fit(train, y[:400])
    svc = SVC(tol=1e-6).fit(X[:400], y[:400])
    gamma = 1.0 / (X.shape[1] * X[:400].var())  # scikit-learn's gamma='scale'
    assert ours.sigma2_ == pytest.approx(1.0 / (2.0 * gamma), rel=1e-12)
    np.testing.assert_allclose(ours.decision_function(test), svc.decision_function(test), atol=1e-4)


def test_sigma2_scale_of_constant_data_and_of_data_too_spread():
    assert PegasosClassifier(epochs=0.1).fit(np.ones((4, 3)), [0, 1, 0, 1]).sigma2_ == 0.5  # SVC's gamma 1
    with pytest.raises(ValueError, match=re.escape("PegasosClassifier: the inner products of the training "
                                                   "examples overflow")):  # before sigma2 = inf would be said
        PegasosClassifier().fit([[1e200], [-1e200]], [0, 1])


def test_sigma2_median_is_the_configs_rule_and_a_grid_of_both_words_fits():
    """'median' is a config's kernel.sigma2: median (sbpbench/kernels/bandwidth.py), on the fit's data."""
    X, y, _ = small_breast_cancer()
    est = SBPClassifier(sigma2="median", epochs=0.2, random_state=0).fit(X, y)
    assert est.sigma2_ == pytest.approx(median_sigma2(X), rel=1e-12) and est.get_params()["sigma2"] == "median"
    search = GridSearchCV(PegasosClassifier(epochs=0.5, random_state=0), {"sigma2": ["median", "scale", 1.0]},
                          cv=3, error_score="raise").fit(X, y)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_lam_replaces_C_at_its_default(adult_small):
    train, _ = adult_small
    lam = 1.0 / (4.0 * train.n)
    by_lam = SDCAClassifier(sigma2=SIGMA2, lam=lam, epochs=2, random_state=0).fit(train.X, train.y)
    by_C = SDCAClassifier(sigma2=SIGMA2, C=4.0, epochs=2, random_state=0).fit(train.X, train.y)
    np.testing.assert_allclose(by_lam.dual_coef_, by_C.dual_coef_, rtol=1e-12)


# ----------------------------------------------------------------------------- the docs' example


def test_the_docs_table_lists_each_estimators_parameters_and_defaults():
    """A row per estimator naming its parameters besides the kernel's and the budget's, and any default it
    gives as the declaration's."""
    section = docs_section("Python (scikit-learn) API")
    rows = dict(re.findall(r"^\| `(\w+Classifier)` \| `\w+` \| (.*) \|$", section, flags=re.M))
    assert set(rows) == {cls.__name__ for cls in ESTIMATORS}
    for cls in ESTIMATORS:
        declared = cls.declared()
        own = [name for name in declared if name not in {"kernel", "sigma2", "cache_mb", "epochs", "kernel_evals",
                                                           "seconds"}]
        assert re.findall(r"`(\w+)`", rows[cls.__name__]) == own + (["random_state"] if cls.draws else [])
        for name, default in re.findall(r"`(\w+)` \(default ([^),]+)", rows[cls.__name__]):
            assert float(default) == declared[name].default, (cls.__name__, name)


def test_the_docs_example_runs_as_written(capsys):
    section = docs_section("Python (scikit-learn) API")
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None, "the scikit-learn page has no python block"
    namespace: dict = {}
    exec(compile(code.group(1), "docs/estimators.md", "exec"), namespace)
    search = namespace["search"]
    assert isinstance(search.best_estimator_["svm"], KernelClassifier) and search.best_score_ > 0.75
    out = capsys.readouterr().out
    assert re.search(r"test accuracy 0\.[89]\d\d \d+ support vectors, \d+ kernel evaluations", out), out


# ----------------------------------------------------------------------------- probabilities


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_predict_proba_is_platt_scaling_as_svc(cls):
    """probability=True: probabilities that sum to 1, agree with predict where confident, and score
    (log-loss) near SVC(probability=True)'s (deprecated in scikit-learn 1.9 for this equivalent)
    on breast-cancer; with probability=False there is none."""
    X, y = load_breast_cancer(return_X_y=True)
    X = MinMaxScaler().fit_transform(X)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    make = (lambda **kw: cls(random_state=0, **kw)) if cls.draws else cls
    assert not hasattr(make().fit(X_train, y_train), "predict_proba")
    est = make(probability=True).fit(X_train, y_train)
    proba = est.predict_proba(X_test)
    assert proba.shape == (y_test.size, 2) and np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    confident = np.abs(proba[:, 1] - 0.5) > 0.25
    assert np.array_equal(est.classes_[np.argmax(proba[confident], axis=1)], est.predict(X_test[confident]))
    svc = CalibratedClassifierCV(SVC(), ensemble=False).fit(X_train, y_train).predict_proba(X_test)  # SVC's Platt
    assert log_loss(y_test, proba) < log_loss(y_test, svc) + 0.05


def test_predict_proba_of_ten_classes_and_a_bad_value():
    X_train, X_test, y_train, _ = ten_digits()
    proba = make_pipeline(MinMaxScaler(), SDCAClassifier(probability=True, random_state=0,
                                                         decision_function_shape="ovo")).fit(
        X_train, y_train).predict_proba(X_test)  # the calibration reads a column per class whatever the shape
    assert proba.shape == (X_test.shape[0], 10)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="parameter 'probability': expected True or False"):
        SDCAClassifier(probability="yes").fit(X_train, y_train)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_predict_proba_without_probability_says_how_to_get_it(cls):
    """As SVC: no attribute (hasattr is False, so meta-estimators see it), the cause saying what to set."""
    est = cls()
    assert not hasattr(est, "predict_proba") and hasattr(cls(probability=True), "predict_proba")
    with pytest.raises(AttributeError) as info:
        est.predict_proba(np.zeros((1, 2)))
    assert str(info.value.__cause__) == (f"{cls.__name__}.predict_proba is not available when probability=False: "
                                         "set probability=True (Platt scaling, about six plain fits' time) and "
                                         "fit again")


# ----------------------------------------------------------------------------- example weights


def small_breast_cancer(n=150):
    """The first ``n`` breast-cancer rows scaled to [0, 1], and integer weights 1 to 3 (seed 0)."""
    X, y = breast_cancer()
    X = MinMaxScaler().fit_transform(X)[:n]
    return X, y[:n], np.random.default_rng(0).integers(1, 4, size=n)


@pytest.mark.parametrize("shrinking", [False, True])
def test_weighted_smo_with_bias_is_svc_with_the_same_weights(shrinking):
    """An independent exact answer: SVC's C_i = C class_weight[y_i] sample_weight_i is SMO's box."""
    X, y, weights = small_breast_cancer()
    class_weight = {0: 2.5, 1: 0.5}
    ours = SMOClassifier(bias=True, eps=1e-6, shrinking=shrinking, class_weight=class_weight).fit(
        X, y, sample_weight=weights)
    svc = SVC(tol=1e-6, shrinking=shrinking, class_weight=class_weight).fit(X, y, sample_weight=weights)
    Z = breast_cancer()[0][150:250] / breast_cancer()[0].max(axis=0)
    np.testing.assert_allclose(ours.decision_function(Z), svc.decision_function(Z), atol=1e-4)
    np.testing.assert_array_equal(ours.support_, np.sort(svc.support_))
    bound = np.where(y == 0, 2.5, 0.5) * weights  # C = 1
    at_bound = np.isclose(np.abs(ours.dual_coef_[0]), bound[ours.support_])
    assert at_bound.any() and not at_bound.all()  # some boxes bind: their C_i, weighted, decide


@pytest.mark.parametrize("cls, options", [(SMOClassifier, {"eps": 1e-7}), (SMOClassifier, {"bias": True, "eps": 1e-7}),
                                          (SDCAClassifier, {"epochs": 300, "random_state": 0})],
                         ids=["smo", "smo-bias", "sdca"])
def test_integer_weights_are_repeated_rows(cls, options):
    """Weight k is the row k times: the same optimum (C-form: each copy's box is C), to the solver's accuracy."""
    X, y, weights = small_breast_cancer(100)
    rows = np.repeat(np.arange(y.size), weights)
    weighted = cls(sigma2=1.0, **options).fit(X, y, sample_weight=weights)
    repeated = cls(sigma2=1.0, **options).fit(X[rows], y[rows])
    np.testing.assert_allclose(weighted.decision_function(X), repeated.decision_function(X), atol=2e-3)


@pytest.mark.parametrize("cls", [SDCAClassifier, SMOClassifier], ids=lambda cls: cls.__name__)
def test_weights_of_one_are_no_weights_and_balanced_is_its_sample_weight(cls):
    X, y, _ = small_breast_cancer()
    seed = {"random_state": 0} if cls.draws else {}
    plain = cls(**seed).fit(X, y)
    ones = cls(**seed).fit(X, y, sample_weight=np.ones(y.size))
    np.testing.assert_array_equal(ones.dual_coef_, plain.dual_coef_)  # the same numbers
    balanced = cls(class_weight="balanced", **seed).fit(X, y)
    by_hand = cls(**seed).fit(X, y, sample_weight=y.size / (2.0 * np.bincount(y)[y]))
    np.testing.assert_array_equal(balanced.dual_coef_, by_hand.dual_coef_)
    assert not np.array_equal(balanced.dual_coef_, plain.dual_coef_)
    weights = np.linspace(0.5, 2.0, y.size)
    platt = cls(probability=True, **seed).fit(X, y, sample_weight=weights)
    refitted = platt._platt.calibrated_classifiers_[0].estimator  # Platt's model, refitted on all of X
    np.testing.assert_array_equal(refitted.dual_coef_, platt.dual_coef_)  # with the same weights
    assert not np.array_equal(platt.dual_coef_, plain.dual_coef_)
    np.testing.assert_allclose(platt.predict_proba(X).sum(axis=1), 1.0)


@pytest.mark.parametrize("estimator, weights, message", [
    (SMOClassifier(class_weight="heavy"), None, r"parameter 'class_weight': expected None, 'balanced' or a dict"),
    (SDCAClassifier(), -1.0, "Negative values in data passed to `sample_weight`"),
    (SDCAClassifier(), np.inf, "sample_weight contains infinity"),
    (SMOClassifier(), 0.0, "Sample weights must contain at least one non-zero number"),
    (SMOClassifier(class_weight={0: 0.0, 1: 0.0}), None, r"the example weights \(sample_weight times class_weight\) "
                                                          "must be finite, and not all zero"),
    (SMOClassifier(bias=True, class_weight={0: 0.0, 1: 1.0}), None, "the examples of positive weight "
                                                                    r"\(sample_weight times class_weight\) must belong "
                                                                    "to at least 2 classes"),
])
def test_bad_weights_end_fit_with_a_value_error(estimator, weights, message):
    X, y, _ = small_breast_cancer()
    with pytest.raises(ValueError, match=message):
        estimator.fit(X, y, sample_weight=None if weights is None else np.full(y.size, weights))
    assert not hasattr(estimator, "classes_")


def test_the_other_estimators_and_solvers_take_no_weights():
    """SBP, Pegasos and the Perceptron have no sample_weight (module docstring: why); their solvers
    refuse a weighted problem, SDCA and SMO solve it."""
    X, y, weights = small_breast_cancer()
    for cls in ESTIMATORS:
        takes = "sample_weight" in inspect.signature(cls.fit).parameters
        assert takes == cls.weighted == (cls in (SDCAClassifier, SMOClassifier)) == SOLVERS[cls.solver].supports_weights
    kernel = Kernel(X, KernelSpec("gaussian", 1.0))
    for name in ("sbp", "pegasos", "perceptron"):
        problem = Problem(kernel, np.where(y == 1, 1.0, -1.0), X[:0], np.empty(0), 0.01, 0.1, False,
                          weights=weights.astype(float))
        with pytest.raises(ValueError, match=f"solver '{name}' takes no example weights"):
            SOLVERS[name].create(problem, np.random.default_rng(0))


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_a_refused_fit_argument_is_a_type_error_naming_the_estimator(cls):
    """sample_weight: why this solver takes none and which estimators do; sample_weight=None is none."""
    X, y, weights = small_breast_cancer(60)
    make = (lambda: cls(epochs=0.2, random_state=0)) if cls.draws else cls
    with pytest.raises(TypeError, match=re.escape(f"{cls.__name__}.fit() got unexpected keyword arguments: 'weights'")):
        make().fit(X, y, weights=weights)
    if cls.weighted:
        return
    expected = (f"{cls.__name__}.fit() takes no sample_weight: solver '{cls.solver}' {cls.unweighted_because} "
                "(SDCAClassifier and SMOClassifier take sample_weight and class_weight)")
    assert cls.unweighted_because
    with pytest.raises(TypeError, match=re.escape(expected)):
        make().fit(X, y, sample_weight=weights)
    np.testing.assert_array_equal(make().fit(X, y, sample_weight=None).dual_coef_, make().fit(X, y).dual_coef_)


# ----------------------------------------------------------------------------- fixed costs


def _blas_threads() -> int:
    return max((info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"), default=1)


@pytest.mark.skipif(_blas_threads() < 2, reason="the BLAS runs on one thread here")
def test_small_data_is_scored_on_one_blas_thread(monkeypatch):
    """Below ONE_THREAD_BELOW values the scores' inner products run on one BLAS thread (its
    threads cost more than they save on small blocks and spin after each call, which made the
    next fit 2x slower), with the same values; the BLAS's thread count is restored after."""
    seen = []
    decision = Kernel.decision

    def recording(self, *args, **kwargs):
        seen.append(_blas_threads())
        return decision(self, *args, **kwargs)

    X, y, _ = small_breast_cancer()
    model = SDCAClassifier(random_state=0).fit(X, y)
    before = _blas_threads()
    monkeypatch.setattr(Kernel, "decision", recording)
    small = model.decision_function(X)
    assert seen == [1] and _blas_threads() == before
    monkeypatch.setattr(estimators, "ONE_THREAD_BELOW", 1)
    threaded = model.decision_function(X)
    assert seen == [1, before]
    np.testing.assert_array_equal(threaded, small)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_small_data_is_fitted_on_one_numba_thread(monkeypatch):
    """Below ONE_THREAD_BELOW values the fit runs on one numba thread (a threaded row waits for a
    busy core), with the same numbers; numba's thread count is restored after."""
    seen = []

    class Recording(Kernel):
        def __init__(self, *args, **kwargs):
            seen.append(numba.get_num_threads())
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(estimators, "Kernel", Recording)
    X, y, _ = small_breast_cancer()
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        small = SDCAClassifier(random_state=0).fit(X, y)
        assert seen == [1] and numba.get_num_threads() == 2
        monkeypatch.setattr(estimators, "ONE_THREAD_BELOW", X.size)
        threaded = SDCAClassifier(random_state=0).fit(X, y)
        assert seen == [1, 2] and numba.get_num_threads() == 2
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(threaded.dual_coef_, small.dual_coef_)

"""Parameters from the data: ``kernel.sigma2: scale`` (SVC's gamma='scale') and ``median`` (half
the median squared distance), resolved when the problem is built and recorded in ``meta.json``."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import pdist
from sklearn.datasets import dump_svmlight_file, load_breast_cancer
from sklearn.svm import SVC

from sbpbench.errors import UserError
from sbpbench.experiment import assemble, config
from sbpbench.kernels import bandwidth
from tests.cli_runner import one_error_line, sbpbench


@pytest.fixture(scope="module")
def cancer_files(tmp_path_factory):
    """scikit-learn's breast-cancer data as two LIBSVM files (one-based): 300 training, 269 test rows."""
    folder = tmp_path_factory.mktemp("cancer")
    X, y = load_breast_cancer(return_X_y=True)
    order = np.random.default_rng(0).permutation(y.size)
    for name, rows in (("train.svm", order[:300]), ("test.svm", order[300:])):
        dump_svmlight_file(X[rows], y[rows], str(folder / name), zero_based=False)
    return folder


def write(folder, text: str, name: str = "exp.yaml"):
    path = folder / name
    path.write_text("dataset: {path: train.svm, test_path: test.svm}\nproblem: {C: 1}\n" + text)
    return path


def test_scale_is_svcs_gamma_scale():
    X, y = load_breast_cancer(return_X_y=True)
    gamma = SVC(gamma="scale").fit(X, y)._gamma
    assert 1 / (2 * bandwidth.scale_sigma2(X)) == pytest.approx(gamma, rel=1e-12)
    assert bandwidth.scale_sigma2(sp.csr_matrix(X)) == pytest.approx(bandwidth.scale_sigma2(X), rel=1e-9)


def test_median_is_half_the_median_squared_distance_of_every_pair_when_the_data_are_few():
    X = np.random.default_rng(3).normal(size=(200, 5))
    assert bandwidth.median_sigma2(X) == pytest.approx(np.median(pdist(X, "sqeuclidean")) / 2, rel=1e-9)
    assert bandwidth.median_sigma2(sp.csr_matrix(X)) == pytest.approx(bandwidth.median_sigma2(X), rel=1e-9)


def test_median_samples_a_fixed_sample_of_many_data():
    X = np.random.default_rng(4).normal(size=(3000, 4)) * np.array([1, 2, 3, 4])
    rows = np.sort(np.random.default_rng(bandwidth.MEDIAN_SEED).choice(3000, bandwidth.MEDIAN_SAMPLE, replace=False))
    expected = np.median(pdist(X[rows], "sqeuclidean")) / 2
    assert bandwidth.median_sigma2(X) == pytest.approx(expected, rel=1e-9) == bandwidth.median_sigma2(X.copy())
    assert bandwidth.median_sigma2(X) != pytest.approx(np.median(pdist(X, "sqeuclidean")) / 2, rel=1e-6)


def test_a_rule_giving_no_positive_sigma2_is_refused_naming_the_rule():
    with pytest.raises(ValueError, match="'median' gives sigma2 = 0.0 on these training examples; give a number"):
        bandwidth.sigma2_from_data("median", np.ones((10, 3)))


def test_sigma2_from_the_data_is_resolved_when_the_problem_is_built_and_recorded(cancer_files):
    exp = config.load(write(cancer_files, "kernel: {sigma2: scale}\nsolvers: [smo]\n"))
    assert exp.sigma2_rule == "scale" and not exp.swept
    train, _ = assemble.load_data(exp)
    prep = assemble.prepare(exp)
    assert prep.problem.kernel.spec.sigma2 == bandwidth.scale_sigma2(train.X) > 1000  # raw features: large
    assert prep.kernel == {"name": "gaussian", "sigma2": bandwidth.scale_sigma2(train.X), "cache_mb": 256.0,
                           "sigma2_rule": "scale"}
    assert assemble.resolved_config(exp, prep)["kernel"] == prep.kernel
    numbers = config.load(write(cancer_files, "kernel: {sigma2: 2.5}\nsolvers: [smo]\n"))
    assert "sigma2_rule" not in assemble.prepare(numbers).kernel  # a number is recorded as before


def test_a_sweep_may_mix_rules_and_numbers_and_each_entry_records_its_sigma2(cancer_files, tmp_path, monkeypatch):
    path = write(cancer_files, "kernel: {sigma2: [scale, median, 3]}\nsolvers: [smo]\nbudget: {epochs: 1}\n")
    exp = config.load(path)
    assert [s.label for s in exp.solvers] == ["smo[sigma2=scale]", "smo[sigma2=median]", "smo[sigma2=3]"]
    assert [exp.for_solver(s).sigma2_rule for s in exp.solvers] == ["scale", "median", None]
    assert sbpbench(monkeypatch, "run", path, "--results", tmp_path, "--no-plot", "-q") == 0
    (run,) = (tmp_path / "exp").iterdir()
    kernels = [e["kernel"] for e in json.loads((run / "meta.json").read_text())["resolved"]["solvers"]]
    train, _ = assemble.load_data(exp)
    assert [k.get("sigma2_rule") for k in kernels] == ["scale", "median", None]
    assert [k["sigma2"] for k in kernels] == [bandwidth.scale_sigma2(train.X), bandwidth.median_sigma2(train.X), 3.0]


@pytest.mark.parametrize(("kernel", "needles"), [
    ("{sigma2: wide}", ["key 'kernel.sigma2': expected a positive number or one of scale, median (computed from "
                        "the training data), got 'wide'"]),
    ("{sigma2: [1, widest]}", ["key 'kernel.sigma2[1]': expected a positive number or one of scale, median"]),
    ("{name: linear, sigma2: median}", ["key 'kernel.sigma2': 'median' needs kernel.name gaussian"]),
    ("{sigma2: [scale, scale]}", ["key 'kernel.sigma2[1]': repeats the value 'scale'"]),
])
def test_a_sigma2_that_is_neither_a_number_nor_a_rule_is_one_line(cancer_files, monkeypatch, capsys, kernel, needles):
    path = write(cancer_files, f"kernel: {kernel}\nsolvers: [smo]\n", "bad.yaml")
    assert sbpbench(monkeypatch, "validate", path) == 2
    one_error_line(capsys.readouterr().err, str(path), *needles)


def test_a_rule_the_data_defeat_is_one_line_at_validation(tmp_path, monkeypatch, capsys):
    X, y = np.ones((20, 3)), np.repeat([-1.0, 1.0], 10)
    for name in ("train.svm", "test.svm"):
        dump_svmlight_file(X, y, str(tmp_path / name), zero_based=False)
    path = write(tmp_path, "kernel: {sigma2: median}\nsolvers: [smo]\n")
    assert sbpbench(monkeypatch, "validate", path) == 2
    one_error_line(capsys.readouterr().err, f"{path}: key 'kernel.sigma2': 'median' gives sigma2 = 0.0")
    with pytest.raises(UserError, match="'median' gives sigma2 = 0.0"):
        assemble.prepare(config.load(path))

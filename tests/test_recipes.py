"""The code of docs/recipes.md does what the page says it does."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sbpbench.experiment import assemble, config
from tests.docs_pages import python_block, section

RECIPE = python_block(section("Reproducing the validation split in scikit-learn"))


def _row_numbers(X) -> np.ndarray:
    """The 0-based file row of each example, which the test file writes as its first feature (row + 1)."""
    column = X[:, 0]
    return np.asarray(column.toarray() if sp.issparse(column) else column).ravel().astype(int) - 1


@pytest.mark.parametrize("n,seed,fraction", [(37, 0, 0.2), (50, 7, 0.5), (5, 3, 0.01), (10, 1, 0.95)])
def test_the_recipes_numpy_code_holds_out_the_examples_sbpbench_holds_out(tmp_path, monkeypatch, n, seed, fraction):
    (tmp_path / "train.svm").write_text("".join(f"{1 if i % 3 else -1} 1:{i + 1} 2:{i % 5}\n" for i in range(n)))
    (tmp_path / "test.svm").write_text("1 1:1\n-1 2:1\n")
    exp = config.parse({"dataset": {"path": "train.svm", "test_path": "test.svm", "validation": fraction},
                        "kernel": "linear", "problem": {"C": 1}, "solvers": ["dcd"], "seed": seed},
                       str(tmp_path / "exp.yaml"), tmp_path)
    kept, validation = assemble.hold_out(exp, assemble.load_data(exp)[0])
    assert validation is not None
    code = RECIPE.replace("seed, fraction = 0, 0.2", f"seed, fraction = {seed}, {fraction}")
    assert code != RECIPE or (seed, fraction) == (0, 0.2)
    monkeypatch.chdir(tmp_path)
    names: dict = {}
    exec(compile(code, "docs/recipes.md", "exec"), names)  # the page's own code
    assert np.array_equal(names["train_idx"], _row_numbers(kept.X))
    assert np.array_equal(names["validation_idx"], _row_numbers(validation.X))
    assert np.array_equal(_row_numbers(names["X_val"]), names["validation_idx"])

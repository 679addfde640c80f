"""scripts/duplicate_rows.py counts repeated rows; the report quotes the counts in a data-size row."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sbpbench.errors import UserError
from sbpbench.papers import sbp
from tests.test_verdicts import _meta, _write, curve, synthetic

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))  # the scripts import their helper module by name

import duplicate_rows  # noqa: E402


def test_rows_repeat_only_when_label_indices_and_values_are_equal(adult_small):
    train, _ = adult_small
    X, y = sp.csr_matrix(train.X), train.y
    keys = duplicate_rows.row_keys(X, y)
    brute = sum(any(np.array_equal(X[i].toarray(), X[j].toarray()) and y[i] == y[j] for j in range(i))
                for i in range(X.shape[0]))
    assert duplicate_rows.repeats(keys) == brute
    doubled = duplicate_rows.row_keys(sp.vstack([X[:5], X[:5]]), np.concatenate([y[:5], -y[:5]]))
    assert duplicate_rows.repeats(doubled) == duplicate_rows.repeats(keys[:5])  # labels differ: no new repeats


def test_the_test_size_row_quotes_the_counts(tmp_path):
    analysis = tmp_path / "analyses" / "rows-reuters.json"
    analysis.parent.mkdir()
    analysis.write_text(json.dumps({"dataset": "reuters", "n_train": 7770, "n_test": 3299,
                                    "test_rows_repeating_a_test_row": 70, "test_rows_equal_to_a_training_row": 0,
                                    "training_rows_repeating_a_training_row": 1}))

    def read(n_test: int, printed: int) -> str:
        meta = _meta()
        meta["resolved"]["dataset"]["n_test"] = n_test
        results = _write(tmp_path / f"{n_test}-{printed}", "sbp-figure2-reuters",
                         synthetic(curve("sbp", {"test_error": [0.1]}), meta=meta))
        return sbp.DataSize("n_test", printed, "../analyses/rows-reuters.json").read(
            [results.get("sbp-figure2-reuters")]).text

    text = read(3299, 3229)
    assert text.startswith("n_test = 3299 (+70 rows)") and text.endswith("without the repeats: the paper's size")
    assert read(3299, 3200).endswith("3229, not the paper's 3200")
    assert read(3229, 3229) == "n_test = 3229"  # no gap: nothing to explain
    analysis.write_text("{}")
    with pytest.raises(UserError, match="not the output of scripts/duplicate_rows.py"):
        read(3299, 3228)


def test_an_unknown_dataset_is_one_error_line_and_writes_nothing(tmp_path):
    out = tmp_path / "rows.json"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "duplicate_rows.py"), "no-such-data", "--out",
                           str(out)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and not out.exists()
    assert done.stderr.count("\n") == 1 and "no-such-data" in done.stderr

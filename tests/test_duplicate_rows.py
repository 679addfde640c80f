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


def test_words_are_the_label_and_indices_whatever_the_values():
    X = sp.csr_matrix(np.array([[0.5, 0.0, 0.5], [0.2, 0.0, 0.9], [0.5, 0.5, 0.0]]))
    y = np.array([1.0, 1.0, 1.0])
    assert duplicate_rows.repeats(duplicate_rows.word_keys(X, y)) == 1  # rows 0 and 1 share their words
    assert duplicate_rows.repeats(duplicate_rows.row_keys(X, y)) == 0
    assert duplicate_rows.repeats(duplicate_rows.word_keys(X, np.array([1.0, -1.0, 1.0]))) == 0


#: The counts of our Reuters copy, as scripts/duplicate_rows.py wrote them.
COUNTS = {"dataset": "reuters", "n_train": 7770, "n_test": 3299, "test_rows_repeating_a_test_row": 36,
          "test_rows_equal_to_a_training_row": 0, "training_rows_repeating_a_training_row": 167,
          "test_rows_repeating_the_words_of_a_test_row": 46, "test_rows_with_the_words_of_a_training_row": 31,
          "test_rows_left_with_distinct_words_not_in_training": 3229,
          "training_rows_repeating_the_words_of_a_training_row": 199, "training_rows_without_a_feature": 0,
          "training_rows_storing_an_index_twice": 0, "training_rows_labelled_-1": 7232,
          "training_rows_labelled_+1": 538, "test_rows_without_a_feature": 0, "test_rows_storing_an_index_twice": 0,
          "test_rows_labelled_-1": 3120, "test_rows_labelled_+1": 179}


def test_the_cause_is_data_only_when_a_counted_removal_leaves_the_printed_size():
    found = duplicate_rows.cause(COUNTS, "n_test", 3229)
    assert found is not None and found["cause"] == "data"
    assert found["evidence"].startswith("our 3299 rows without the test rows that repeat the words of another test "
                                        "row or of a training row are the paper's 3229, to the row")
    assert "without the test rows that repeat another test row: 3263" in found["evidence"]
    assert duplicate_rows.cause(COUNTS, "n_test", 3120)["cause"] == "data"  # the rows labelled +1 removed
    missed = duplicate_rows.cause(COUNTS, "n_test", 3228)
    assert missed is not None and missed["cause"] == "not established"
    assert missed["evidence"].startswith("none of 9 counted removals leaves the paper's 3228 of our 3299 rows")
    assert duplicate_rows.cause(COUNTS, "n_test", 3299) is None  # no difference, nothing to explain
    assert duplicate_rows.cause(COUNTS, "n_train", 7603)["cause"] == "data"


def test_the_test_size_row_takes_its_cause_from_the_record(tmp_path):
    """The Reuters test-size row names the cause the script recorded for ``n_test``; without the
    record's row, not established, and the cell says which script would record it."""
    row = next(r for r in sbp.SETTINGS.rows if r.what == "testing size, Reuters money-fx")
    meta = _meta()
    meta["resolved"]["dataset"]["n_test"] = 3299
    results = _write(tmp_path, "sbp-figure2-reuters", synthetic(curve("sbp", {"test_error": [0.1]}), meta=meta))
    analysis = tmp_path / "analyses" / "rows-reuters.json"
    analysis.parent.mkdir()
    analysis.write_text(json.dumps({**COUNTS, "rows": {"n_test": duplicate_rows.cause(COUNTS, "n_test", 3229)}}))
    (_, _, measured, verdict), _ = row.decided(results)[0]
    assert verdict == "differs: cause: data"
    assert "scripts/duplicate_rows.py (analyses/rows-reuters.json): our 3299 rows without the test rows" in measured
    analysis.write_text(json.dumps({**COUNTS, "rows": {}}))
    (_, _, measured, verdict), _ = row.decided(results)[0]
    assert verdict == "differs: cause: not established" and "run scripts/duplicate_rows.py" in measured

"""Repeated rows of a data set, counted: a measurement behind a difference in data sizes.

Usage: python scripts/duplicate_rows.py DATASET [--out results/paper/analyses/rows-DATASET.json]
       [--printed-train N] [--printed-test N]

The SBP paper's Table 2 prints 3229 test rows for Reuters money-fx; our copy (LaSVM's archive)
has 3299. A common cause of such a gap is a copy with repeated examples removed. This script
loads the data set as the runs do (:func:`sbpbench.data.load`) and counts the test rows that
repeat an earlier test row (label and features equal), the test rows equal to a training row,
and the training rows that repeat an earlier training row; ``sbpbench report`` quotes the
counts in the data-size row (its reason is then a measurement, not a guess).

It counts the same by a row's words (its label and the indices of its nonzero features, values
aside: a text's set of terms, whatever their tf-idf weights), the rows without a feature, the
rows that store a feature index twice, and the rows of each label. With the paper's sizes
(``--printed-train``, ``--printed-test``) it writes ``rows`` as well: per split (``n_train``,
``n_test``) that differs, the cause (:class:`sbpbench.papers.declarations.Cause`): ``data`` when
removing one of the counted kinds of rows (:func:`removals`) leaves the printed size (the
evidence names it, and every other count), else ``not established`` with what was counted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from sbpbench.data import DatasetSpec, load
from sbpbench.errors import UserError


def row_keys(X: sp.csr_matrix, y: np.ndarray) -> list[bytes]:
    """One hashable key per row: its label, stored indices and values (explicit zeros dropped)."""
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    X.sort_indices()
    return [np.float64(y[i]).tobytes() + X.indices[X.indptr[i]:X.indptr[i + 1]].astype(np.int64).tobytes()
            + X.data[X.indptr[i]:X.indptr[i + 1]].astype(np.float64).tobytes() for i in range(X.shape[0])]


def word_keys(X: sp.csr_matrix, y: np.ndarray) -> list[bytes]:
    """One hashable key per row: its label and the indices of its nonzero features (its words)."""
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    X.sort_indices()
    return [np.float64(y[i]).tobytes() + X.indices[X.indptr[i]:X.indptr[i + 1]].astype(np.int64).tobytes()
            for i in range(X.shape[0])]


def repeats(keys: list[bytes]) -> int:
    """How many rows repeat an earlier row."""
    return len(keys) - len(set(keys))


def _repeated_index(X: sp.csr_matrix) -> int:
    """How many rows store one feature index more than once, as loaded."""
    return sum(int(len(np.unique(X.indices[X.indptr[i]:X.indptr[i + 1]])) < X.indptr[i + 1] - X.indptr[i])
               for i in range(X.shape[0]))


def _split_counts(X: sp.csr_matrix, y: np.ndarray, prefix: str) -> dict[str, int]:
    """Rows without a feature, rows with a repeated index, rows of each label, of one split."""
    counts = {f"{prefix}_rows_without_a_feature": int(np.sum(np.diff(X.indptr) == 0)),
              f"{prefix}_rows_storing_an_index_twice": _repeated_index(X)}
    return counts | {f"{prefix}_rows_labelled_{int(label):+d}": int(np.sum(y == label)) for label in (-1, 1)}


def count(name: str) -> dict[str, object]:
    """The counts for data set ``name`` (see the module docstring)."""
    train, test = load(DatasetSpec(name=name), np.random.default_rng(0))
    train_keys, test_keys = row_keys(train.X, train.y), row_keys(test.X, test.y)
    in_training = set(train_keys)
    train_words, test_words = word_keys(train.X, train.y), word_keys(test.X, test.y)
    words_in_training = set(train_words)
    return {"dataset": name, "n_train": len(train_keys), "n_test": len(test_keys),
            "test_rows_repeating_a_test_row": repeats(test_keys),
            "test_rows_equal_to_a_training_row": sum(key in in_training for key in test_keys),
            "training_rows_repeating_a_training_row": repeats(train_keys),
            "test_rows_repeating_the_words_of_a_test_row": repeats(test_words),
            "test_rows_with_the_words_of_a_training_row": sum(key in words_in_training for key in test_words),
            "test_rows_left_with_distinct_words_not_in_training": len(set(test_words) - words_in_training),
            "training_rows_repeating_the_words_of_a_training_row": repeats(train_words),
            **_split_counts(train.X, train.y, "training"), **_split_counts(test.X, test.y, "test")}


def removals(found: dict[str, Any], split: str) -> dict[str, int]:
    """The size of ``split`` (``n_train`` or ``n_test``) left after removing each counted kind of
    rows (or, for the rows left with distinct words not in training, that count), by what is removed."""
    n = int(found[split])
    if split == "n_train":
        return {"the training rows that repeat another training row":
                n - found["training_rows_repeating_a_training_row"],
                "the training rows that repeat the words of another training row":
                n - found["training_rows_repeating_the_words_of_a_training_row"],
                "the training rows without a feature": n - found["training_rows_without_a_feature"],
                "the training rows storing an index twice": n - found["training_rows_storing_an_index_twice"],
                "the training rows labelled +1": n - found["training_rows_labelled_+1"],
                "the training rows labelled -1": n - found["training_rows_labelled_-1"]}
    return {"the test rows that repeat another test row": n - found["test_rows_repeating_a_test_row"],
            "the test rows equal to a training row": n - found["test_rows_equal_to_a_training_row"],
            "the test rows that repeat the words of another test row":
            n - found["test_rows_repeating_the_words_of_a_test_row"],
            "the test rows with the words of a training row": n - found["test_rows_with_the_words_of_a_training_row"],
            "the test rows that repeat the words of another test row or of a training row":
            found["test_rows_left_with_distinct_words_not_in_training"],
            "the test rows without a feature": n - found["test_rows_without_a_feature"],
            "the test rows storing an index twice": n - found["test_rows_storing_an_index_twice"],
            "the test rows labelled +1": n - found["test_rows_labelled_+1"],
            "the test rows labelled -1": n - found["test_rows_labelled_-1"]}


def cause(found: dict[str, Any], split: str, printed: int) -> dict[str, str] | None:
    """The cause of ``split``'s difference from the paper's ``printed`` size (module docstring);
    None when the sizes are equal."""
    n = int(found[split])
    if n == printed:
        return None
    left = removals(found, split)
    hits = [what for what, size in left.items() if size == printed]
    counted = "; ".join(f"without {what}: {size}" for what, size in left.items() if what not in hits)
    if not hits:
        return {"cause": "not established", "evidence": f"none of {len(left)} counted removals leaves the paper's "
                                                        f"{printed} of our {n} rows ({counted})"}
    return {"cause": "data", "evidence": f"our {n} rows without {' or '.join(hits)} are the paper's {printed}, "
                                         f"to the row; the other {len(left) - len(hits)} counted removals leave: "
                                         f"{counted}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--printed-train", type=int, help="the paper's training size")
    parser.add_argument("--printed-test", type=int, help="the paper's test size")
    args = parser.parse_args()
    out = args.out or Path("results") / "paper" / "analyses" / f"rows-{args.dataset}.json"
    try:
        found = count(args.dataset)
    except UserError as exc:
        print(f"duplicate_rows.py: error: {' '.join(str(exc).split())}", file=sys.stderr)
        sys.exit(2)
    printed = {"n_train": args.printed_train, "n_test": args.printed_test}
    causes = {split: cause(found, split, size) for split, size in printed.items() if size is not None}
    found["rows"] = {split: why for split, why in causes.items() if why is not None}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(found))


if __name__ == "__main__":
    main()

"""Repeated rows of a data set, counted: a measurement behind a difference in data sizes.

Usage: python scripts/duplicate_rows.py DATASET [--out results/paper/analyses/rows-DATASET.json]

The SBP paper's Table 2 prints 3229 test rows for Reuters money-fx; our copy (LaSVM's archive)
has 3299. A common cause of such a gap is a copy with repeated examples removed. This script
loads the data set as the runs do (:func:`sbpbench.data.load`) and counts the test rows that
repeat an earlier test row (label and features equal), the test rows equal to a training row,
and the training rows that repeat an earlier training row; ``sbpbench report`` quotes the
counts in the data-size row (its reason is then a measurement, not a guess).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

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


def repeats(keys: list[bytes]) -> int:
    """How many rows repeat an earlier row."""
    return len(keys) - len(set(keys))


def count(name: str) -> dict[str, object]:
    """The counts for data set ``name`` (see the module docstring)."""
    train, test = load(DatasetSpec(name=name), np.random.default_rng(0))
    train_keys, test_keys = row_keys(train.X, train.y), row_keys(test.X, test.y)
    in_training = set(train_keys)
    return {"dataset": name, "n_train": len(train_keys), "n_test": len(test_keys),
            "test_rows_repeating_a_test_row": repeats(test_keys),
            "test_rows_equal_to_a_training_row": sum(key in in_training for key in test_keys),
            "training_rows_repeating_a_training_row": repeats(train_keys)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    out = args.out or Path("results") / "paper" / "analyses" / f"rows-{args.dataset}.json"
    try:
        found = count(args.dataset)
    except UserError as exc:
        print(f"duplicate_rows.py: error: {' '.join(str(exc).split())}", file=sys.stderr)
        sys.exit(2)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(found))


if __name__ == "__main__":
    main()

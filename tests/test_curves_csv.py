"""``curves.csv`` written without pandas (:func:`~sbpbench.results.csvrows.rows_csv`) is byte for byte
what pandas writes for the same rows: committed results and the tests compare these files."""

from __future__ import annotations

import dataclasses
import gzip
import math
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sbpbench.execution import loop as runner
from sbpbench.experiment.config import Budget, SolverSpec
from sbpbench.results.csvrows import rows_csv
from sbpbench.results.store import COLUMNS, curves_columns, curves_frame, read_curves
from tests.problems import build_problem
from tests.test_runner import experiment

ROOT = Path(__file__).resolve().parents[1]
#: Every committed curves file; the large ones (paper runs of the SGD paper) only with the slow tests.
COMMITTED = sorted((ROOT / "results").rglob("curves.csv*"))
#: Columns a solver fills with whole numbers (read back as floats where another solver leaves a gap).
WHOLE = ("iteration", "kernel_evals", "kernel_evals_computed", "eval_kernel_evals", "n_support")
#: Labels a careless CSV writer breaks: separators, quotes, line breaks, text read as gaps, non-ASCII.
HOSTILE = ['a,b', 'say "hi"', "two\nlines", "cr\rlf\r\n", "NA", "None", "", " lead", "ünï €", "'single'"]


def pandas_csv(rows: list[dict[str, Any]]) -> str:
    """What the writer wrote with pandas."""
    return curves_frame(rows).to_csv(index=False)


def written(rows: list[dict[str, Any]]) -> str:
    return rows_csv(rows, curves_columns(rows))


def as_solver_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows read back, in the types a solver gives: whole numbers as ``int``, and no key for an extra
    column of another solver (a gap there)."""
    rows = []
    for record in frame.to_dict("records"):
        row = {}
        for key, value in record.items():
            if isinstance(value, float) and math.isnan(value) and key not in COLUMNS:
                continue
            row[key] = int(value) if key in WHOLE and isinstance(value, float) and value.is_integer() else value
        rows.append(row)
    return rows


@pytest.mark.parametrize("path", [pytest.param(p, marks=[pytest.mark.slow] if p.stat().st_size > 1e6 else [],
                                               id=str(p.relative_to(ROOT / "results"))) for p in COMMITTED])
def test_committed_curves_are_written_back_as_they_are(path):
    rows = as_solver_rows(read_curves(path))
    text = written(rows)
    assert text == pandas_csv(rows)
    raw = path.read_bytes()
    assert text == (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode()


def test_no_rows_is_the_header_alone():
    assert written([]) == pandas_csv([]) == ",".join(COLUMNS) + "\n"


@pytest.fixture(scope="module")
def runner_rows(adult_small, one_numba_thread) -> list[dict[str, Any]]:
    """Checkpoint rows of real runs, as the runner makes them, under hostile labels: solvers that count
    kernel evaluations (whole numbers) and one that does not (NaN), extra columns of some solvers
    only, objectives some solvers leave None."""
    train, test = adult_small
    problem = build_problem((train.take(np.arange(100)), test.take(np.arange(200))), lam=0.01, nu=0.05)
    exp = dataclasses.replace(experiment(Budget(epochs=1)), name=HOSTILE[0])
    rows = []
    for k, name in enumerate(("sbp", "perceptron", "sdca", "fourier")):
        spec = SolverSpec(name, {}, HOSTILE[k + 1])
        result = runner.run_one(dataclasses.replace(exp, solvers=(spec,)), problem, spec, 0)
        assert result.rows, result.summary
        rows += [{**row, "status": result.summary["status"]} for row in result.rows]  # as the writer sets it
    return rows


def test_rows_of_the_runner_are_written_as_pandas_writes_them(runner_rows):
    assert {type(r["kernel_evals"]) for r in runner_rows} == {int, float}  # fourier's gaps
    assert {type(r["objective"]) for r in runner_rows} == {float, type(None)}  # the perceptron's
    text = written(runner_rows)
    assert text == pandas_csv(runner_rows)
    assert '"a,b",adult,"say ""hi""",sbp,' in text


def test_rows_with_every_kind_of_value_are_written_as_pandas_writes_them(tmp_path):
    """Whole numbers beyond 2**53 and 64 bits, gaps of each kind, numpy scalars, -0.0, huge and tiny
    floats, booleans, hostile text, columns missing from some rows; read back as pandas' file is."""
    base = {"experiment": "e", "dataset": "d", "solver_name": "x", "params": "k=1;c=a,b", "seed": 0, "status": "budget"}
    values = {
        "iteration": [1, 2**53 + 1, 2**62, np.int64(7)],
        "epoch": [0.1, 1e-05, 1.2345678901234568e17, -0.0],
        "kernel_evals": [2**53 + 1, math.nan, 3, np.int64(4)],
        "kernel_evals_computed": [None, None, None, None],
        "eval_kernel_evals": [2**63, 1, 2, 3],  # needs 64 bits unsigned
        "train_time_s": [np.float64(0.25), 0.5, math.inf, 5e-324],
        "test_error": [np.float32(0.1), np.float32(0.2), np.float32(math.nan), np.float32(0.3)],  # a float32 column
        "objective": [1.5, None, np.float64(math.nan), -math.inf],
        "primal_objective": [1.0, 2.0, 3.0, 4.0],
        "huge": [2**70, 1.0, 2.0, 3.0],  # beyond 64 bits: a column of objects
        "n_support": [np.int32(1), np.int8(2), np.uint8(3), np.int64(4)],
        "flag": [True, False, np.bool_(True), None],
        "mixed": ["text", 1, 2.5, None],
        "signs": [np.uint64(5), -1, 2, 3],  # unsigned next to signed: objects
        "maybe": [1.0, ..., 2.0, ...],  # ... : not in the row
        "wide": [np.float16(0.1), np.int32(16777217), np.float16(math.nan), np.float16(2)],
    }
    rows = []
    for i in range(4):
        row = {**base, "solver": HOSTILE[i], "run": i, "checkpoint": i}
        row.update({k: v[i] for k, v in values.items() if v[i] is not ...})
        rows.append(row)
    text = written(rows)
    assert text == pandas_csv(rows)
    for name, data in (("mine.csv", text), ("pandas.csv", pandas_csv(rows))):
        (tmp_path / name).write_text(data)
    pd.testing.assert_frame_equal(read_curves(tmp_path / "mine.csv"), read_curves(tmp_path / "pandas.csv"))


#: Values of every kind, drawn into columns by :func:`test_random_columns_are_written_as_pandas_writes_them`.
POOL = [None, math.nan, ..., 0, 1, -1, 2**53 + 1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64,
        np.int64(5), np.int64(-5), np.uint64(2**64 - 1), np.uint64(5), np.int8(-3), np.uint8(200), np.int32(7),
        0.1, -0.0, 1e16, 1e-5, 1.2345678901234568e17, math.inf, -math.inf, 5e-324, np.float64(0.3),
        np.float64(math.nan), np.float32(0.1), np.float32(math.nan), np.float16(0.1), np.longdouble(0.1),
        True, False, np.bool_(True), np.str_("s"), [1, 2], Decimal("1.5"), *HOSTILE]


def test_random_columns_are_written_as_pandas_writes_them():
    rng = random.Random(0)
    for _ in range(1000):
        columns = [f"c{i}" for i in range(rng.randint(1, 3))]
        drawn = {c: rng.sample(POOL, rng.randint(1, 3)) for c in columns}
        rows = [{c: v for c in columns if (v := rng.choice(drawn[c])) is not ...} for _ in range(rng.randint(0, 6))]
        assert rows_csv(rows, columns) == pd.DataFrame(rows, columns=columns).to_csv(index=False), rows


def test_random_floats_are_written_as_pandas_writes_them():
    """Any float64 (random bits), in a column with a gap: Python's repr is numpy's text."""
    bits = np.random.default_rng(0).integers(0, 2**64, size=20000, dtype=np.uint64).view(np.float64)
    rows = [{"x": float(x)} for x in bits] + [{}]
    assert rows_csv(rows, ["x"]) == pd.DataFrame(rows, columns=["x"]).to_csv(index=False)

"""Figure 3 (cost in inner products) and the Perceptron dashed after its first epoch."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from sbpbench.outputs.plotting import _draw_curve, error_curves
from sbpbench.results.curves import first_epoch_end


def _rows(solver, x_col, xs, epochs, runs=2):
    rows = []
    for run in range(runs):
        for i, (x, e) in enumerate(zip(xs, epochs)):
            rows.append({"experiment": "e", "dataset": "adult", "solver": solver, "solver_name": solver,
                         "run": run, "epoch": e, "kernel_evals": x * (1 + run) if x_col == "kernel_evals" else np.nan,
                         x_col: x * (1 + run), "test_error": 0.3 - 0.01 * i})
    return rows


def test_first_epoch_end_and_dashes():
    frame = pd.DataFrame(_rows("perceptron", "kernel_evals", [10, 100, 1000, 10000], [0.1, 0.5, 1.0, 2.0]))
    assert first_epoch_end(frame) == 1500.0  # mean of 1000 and 2000
    fig, ax = plt.subplots()
    _draw_curve(ax, "perceptron", frame, "kernel_evals")
    styles = [line.get_linestyle() for line in ax.get_lines()]
    assert styles == ["-", "--"]
    solid, dashed = ax.get_lines()
    assert solid.get_xdata()[-1] == dashed.get_xdata()[0] == 1500.0
    ax.clear()
    _draw_curve(ax, "sbp", frame.assign(solver_name="sbp"), "kernel_evals")
    assert [line.get_linestyle() for line in ax.get_lines()] == ["-"]
    plt.close(fig)


def test_figure3_uses_inner_products(tmp_path):
    frame = pd.DataFrame(_rows("sbp", "kernel_evals", [10, 100, 1000], [0.1, 0.5, 1.0])
                         + _rows("fourier", "inner_products", [50, 100, 200], [0, 0, 0]))
    written = error_curves(frame, tmp_path / "figure3", "inner_products")
    assert [p.name for p in written] == ["figure3.png", "figure3.svg"]
    assert all(p.stat().st_size > 0 for p in written)

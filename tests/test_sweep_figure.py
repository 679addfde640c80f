"""The sweep figure: one panel per setting, the solvers side by side, one y range, legends outside the data."""

from __future__ import annotations

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg

from sbpbench.outputs import plotting
from sbpbench.outputs.lines import X_AXES, Y_AXES

#: The solvers of the sweep: name and label without the setting; LIBSVM and Fourier features
#: count no kernel evaluations (they have the seconds axis).
SOLVERS = [("sbp", "sbp"), ("pegasos", "pegasos[mini_batch=1]"), ("pegasos", "pegasos[mini_batch=10]"),
           ("smo", "smo"), ("libsvm", "libsvm[bias=True]"), ("fourier", "fourier")]


def sweep_curves() -> pd.DataFrame:
    """Two runs of each solver of :data:`SOLVERS` at sigma2 = 1 and 10: 12 entries, errors apart per setting."""
    rows = []
    for sigma2, level in (("1", 0.3), ("10", 0.1)):
        for k, (name, solver) in enumerate(SOLVERS):
            base, bracket, rest = solver.partition("[")
            label = f"{base}[{rest[:-1]};sigma2={sigma2}]" if bracket else f"{base}[sigma2={sigma2}]"
            kernel = name not in ("libsvm", "fourier")
            for run in range(2):
                for i in range(4):
                    rows.append({"experiment": "e", "dataset": "d", "solver": label, "solver_name": name,
                                 "params": label[label.index("[") + 1:-1], "run": run, "checkpoint": i,
                                 "iteration": i + 1, "kernel_evals": 10.0 ** (i + 2) if kernel else float("nan"),
                                 "train_time_s": 0.01 * (i + 1), "status": "budget",
                                 "test_error": level + 0.02 * k + 0.1 / (i + 1) + 0.001 * run})
    return pd.DataFrame(rows)


def test_a_sweep_is_one_panel_per_setting_with_every_solver_in_one_colour_each():
    split, marks = plotting.small_multiples(sweep_curves(), plotting.Marks())
    assert list(dict.fromkeys(split["experiment"])) == ["e: sigma2=1", "e: sigma2=10"]
    assert {marks.names[label] for label in split["solver"]} == {solver for _, solver in SOLVERS}
    colours = {}
    for label, solver in marks.names.items():
        colours.setdefault(solver, set()).add(marks.colors[label])
    assert all(len(c) == 1 for c in colours.values()) and len(set.union(*colours.values())) == len(SOLVERS)
    fig = plotting.curves_figure(split, X_AXES["seconds"], Y_AXES["test_error"], marks=marks)
    assert fig is not None
    panels = [ax for ax in fig.axes if ax.get_legend() is not None]
    assert [ax.get_title() for ax in panels] == ["e (d)\nsigma2=1", "e (d)\nsigma2=10"]
    assert panels[0].get_ylim() == panels[1].get_ylim()  # one y range, though the errors differ by setting
    renderer = FigureCanvasAgg(fig).get_renderer()
    for ax in panels:
        legend = ax.get_legend()
        assert legend.get_window_extent(renderer).y1 <= ax.get_window_extent(renderer).y0  # under the data
        texts = [t.get_text() for t in legend.get_texts()]
        assert any(t.startswith("libsvm[bias=True] (") for t in texts) and any(t.startswith("fourier (") for t in texts)


def test_without_kernel_evaluations_libsvm_and_fourier_are_left_out_and_the_others_drawn():
    split, marks = plotting.small_multiples(sweep_curves(), plotting.Marks())
    fig = plotting.curves_figure(split, X_AXES["kernel_evals"], Y_AXES["test_error"], marks=marks)
    assert fig is not None
    texts = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    assert len(texts) == 2 * 4 and not any(t.startswith(("libsvm", "fourier")) for t in texts)


def test_the_sweep_summary_puts_the_solvers_side_by_side_per_setting(tmp_path):
    svg = plotting.sweep_summary(sweep_curves(), tmp_path / "s")[1].read_text()
    assert "one panel per setting" in svg and "e: sigma2=10" in svg
    assert all(solver in svg for _, solver in SOLVERS)  # LIBSVM and Fourier features included

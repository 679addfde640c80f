"""Figure 3 (cost in inner products), the Perceptron dashed after its first epoch, and how the
figures draw bands, swinging solvers, fits and their axes (issue #29)."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from sbpbench.outputs import plotting
from sbpbench.outputs.lines import MeanLine
from sbpbench.outputs.plotting import _draw_curve, error_curves
from sbpbench.results.curves import first_epoch_end


def _rows(solver, x_col, xs, epochs, runs=2):
    rows = []
    for run in range(runs):
        for i, (x, e) in enumerate(zip(xs, epochs)):
            rows.append({"experiment": "e", "dataset": "adult", "solver": solver, "solver_name": solver,
                         "run": run, "checkpoint": i, "epoch": e,
                         "kernel_evals": x * (1 + run) if x_col == "kernel_evals" else np.nan,
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


# --------------------------------------------------------------- issue #29: figures as the papers draw them


def _curve_rows(solver, runs):
    """Rows of ``solver`` (its name also its solver_name): ``runs`` maps a run to its (kernel evaluations,
    test error) checkpoints."""
    return [{"experiment": "e", "dataset": "adult", "solver": solver, "solver_name": solver, "run": run,
             "checkpoint": i, "epoch": 0.1 * (i + 1), "kernel_evals": x, "test_error": err}
            for run, points in runs.items() for i, (x, err) in enumerate(points)]


def _band_x(ax):
    """The x extent of every shaded band (fill) in ``ax``."""
    return [(p.vertices[:, 0].min(), p.vertices[:, 0].max()) for c in ax.collections for p in c.get_paths()]


def test_a_band_is_drawn_only_where_at_least_two_runs_cover():
    short = [(10.0 ** e, 0.3 - 0.02 * e) for e in range(1, 4)]          # 10 .. 1000
    long = [(10.0 ** e, 0.32 - 0.02 * e) for e in range(1, 6)]          # 10 .. 100000
    frame = pd.DataFrame(_curve_rows("sbp", {0: short, 1: long}))
    fig, ax = plt.subplots()
    drawn = _draw_curve(ax, "sbp", frame, "kernel_evals")
    (line,) = ax.get_lines()
    assert line.get_xdata()[-1] == pytest.approx(1e5)  # the mean goes on where one run does (half of 2)
    assert np.isnan(drawn.curve.se[drawn.curve.x > 1000 * (1 + 1e-9)]).all()
    assert max(hi for _, hi in _band_x(ax)) <= 1000 * (1 + 1e-9)  # but its band stops where the short run ends
    assert "standard error" in plotting.BAND_NOTE
    plt.close(fig)


def test_a_figure_says_under_its_panels_what_the_bands_are():
    frame = pd.DataFrame(_curve_rows("sbp", {0: [(10, 0.3), (100, 0.2)], 1: [(10, 0.31), (100, 0.22)]}))
    fig = plotting.curves_figure(frame, plotting.X_AXES["kernel_evals"], plotting.Y_AXES["test_error"])
    assert [t.get_text().replace("\n", " ") for t in fig.texts] == [plotting.BAND_NOTE]


def test_the_note_under_a_one_panel_figure_stays_inside_the_image():
    """The note is wrapped to the figure's width: no line runs off either edge of a narrow figure."""
    frame = pd.DataFrame(_curve_rows("sbp", {0: [(10, 0.3), (100, 0.2)], 1: [(10, 0.31), (100, 0.22)]}))
    fig = plotting.curves_figure(frame, plotting.X_AXES["kernel_evals"], plotting.Y_AXES["test_error"])
    FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    box, page = fig.texts[0].get_window_extent(renderer), fig.bbox
    assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0


def test_a_swinging_solver_is_drawn_as_points_until_it_stays_below_the_constant_classifier():
    """SMO's early test errors swing between the two constant classifiers' (5% and 95% here): no
    line is drawn through them, only its checkpoints, up to where its mean stays below 5%."""
    swings = [0.05, 0.95, 0.05, 0.8, 0.04, 0.03, 0.03]
    points = [(10.0 ** (1 + i / 2), err) for i, err in enumerate(swings)]
    frame = pd.DataFrame(_curve_rows("smo", {0: points, 1: points}))
    fig, ax = plt.subplots()
    drawn = _draw_curve(ax, "smo", frame, "kernel_evals", baseline=0.05)
    line, dots = ax.get_lines()
    assert drawn.curve.line_from == pytest.approx(points[4][0])       # after the last mean above 5%
    assert line.get_xdata()[0] == pytest.approx(points[4][0]) and line.get_linestyle() == "-"
    assert dots.get_linestyle() == "None" and dots.get_xdata() == pytest.approx([x for x, _ in points[:4]])
    assert dots.get_ydata() == pytest.approx([100 * e for e in swings[:4]])  # the checkpoints, not a grid
    assert "dots until it settles" in line.get_label()
    assert min(lo for lo, _ in _band_x(ax)) >= points[4][0] * (1 - 1e-9)
    ax.clear()
    _draw_curve(ax, "smo", frame, "kernel_evals")                        # without a baseline: one line
    assert [ln.get_linestyle() for ln in ax.get_lines()] == ["-"] and ax.get_lines()[0].get_xdata()[0] == 10
    ax.clear()
    _draw_curve(ax, "sbp", frame.assign(solver_name="sbp"), "kernel_evals", baseline=0.05)  # not a swinging solver
    assert [ln.get_linestyle() for ln in ax.get_lines()] == ["-"]
    plt.close(fig)


def test_fits_are_points_and_those_beyond_the_error_axis_sit_on_its_edge_labelled():
    fits = pd.DataFrame(_rows("fourier", "inner_products", [50, 100, 200], [0, 0, 0]))
    fits["test_error"] = np.tile([0.4, 0.1, 0.05], 2)
    fits["pairs"] = np.tile([1, 2, 4], 2)
    sbp = pd.DataFrame(_rows("sbp", "kernel_evals", [50, 500, 5000], [0.1, 0.5, 1.0]))
    curves = pd.concat([sbp, fits], ignore_index=True)
    curves["cost"] = curves["inner_products"].fillna(curves["kernel_evals"])
    fig = plotting.curves_figure(curves, plotting.Axis("cost", "inner products", log=True),
                                 plotting.Y_AXES["test_error"], zoom=True,
                                 marks=plotting.Marks(baselines={"e": 0.2}, fit_label=("pairs", "k = {:g}")))
    full, zoomed = fig.axes
    # the full panel holds every start (the first fit at 40%), above the constant classifier's 20%
    assert full.get_ylim() == pytest.approx((0, 100 * plotting.BASELINE_HEADROOM * 0.4))
    fourier = next(ln for ln in full.get_lines() if ln.get_label().startswith("fourier"))
    assert fourier.get_marker() == "o" and "a point per fit" in fourier.get_label()
    assert not [ln for ln in full.get_lines() if ln.get_marker() == "^"]
    beyond = [ln for ln in zoomed.get_lines() if ln.get_marker() == "^"]  # 40% is above the zoom's top
    assert len(beyond) == 1 and beyond[0].get_ydata() == pytest.approx([zoomed.get_ylim()[1]])
    # at the runs' geometric mean cost of that fit (50 and 100: _rows doubles the second run's)
    assert beyond[0].get_xdata() == pytest.approx([np.sqrt(50 * 100)]) and not beyond[0].get_clip_on()
    assert [t.get_text() for t in full.texts] == ["k = 1", "k = 4"]
    plt.close(fig)


def test_a_log_x_axis_starts_where_every_solver_has_begun():
    early = pd.DataFrame(_curve_rows("perceptron", {r: [(1, 0.5), (10, 0.3), (1e4, 0.2)] for r in (0, 1)}))
    late = pd.DataFrame(_curve_rows("sbp", {r: [(100, 0.4), (1e4, 0.15)] for r in (0, 1)}))
    fig = plotting.curves_figure(pd.concat([early, late]), plotting.X_AXES["kernel_evals"],
                                 plotting.Y_AXES["test_error"])
    assert fig.axes[0].get_xlim()[0] == pytest.approx(100)
    plt.close(fig)


def test_the_constant_classifiers_error_comes_from_the_resolved_data_set():
    meta = {"resolved": {"dataset": {"n_test": 200, "positives_test": 150}}}
    assert plotting.baseline_error(meta) == pytest.approx(0.25)
    assert plotting.baseline_error({"resolved": {"dataset": {"n_test": 200}}}) is None
    assert plotting.baseline_error({}) is None
    frame = pd.DataFrame(_curve_rows("sbp", {0: [(10, 0.3)]}))
    assert plotting.baselines([(frame, meta), (frame.assign(experiment="f"), {})]) == {"e": 0.25}


def test_the_zoom_row_keeps_a_solver_that_ends_far_above_the_others_and_stays_narrow():
    """Adult's Figure 2: four solvers end near 15%, the Perceptron near 20%, the constant classifier
    is at 23.6%. The zoomed row must span less than the full row (it once ran from 12% to 32%), and
    show the Perceptron's end, where its overfitting is judged (issue #47: it was off the zoom)."""
    ends = {"sbp": 0.148, "pegasos": 0.150, "sdca": 0.151, "smo": 0.149, "perceptron": 0.20}
    frame = pd.DataFrame([row for solver, end in ends.items()
                          for row in _curve_rows(solver, {r: [(10, 0.236), (1000, 0.2), (10**5, end + r * 1e-3)]
                                                          for r in (0, 1)})])
    marks = plotting.Marks(baselines={"e": 0.236}, titles={"e": "Adult"}, names={"sbp": "SBP"})
    fig = plotting.curves_figure(frame, plotting.X_AXES["kernel_evals"], plotting.Y_AXES["test_error"],
                                 zoom=True, marks=marks)
    full, zoomed = fig.axes[0].get_ylim(), fig.axes[1].get_ylim()
    assert zoomed[1] - zoomed[0] < 0.5 * (full[1] - full[0])
    assert zoomed[0] <= 14.8 and zoomed[1] >= 15.2          # the four that converge stay in view
    assert zoomed[1] > 20.05                                 # and so does the Perceptron's mean end
    assert fig.axes[0].get_title() == "Adult"
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels[0] == "SBP (2 runs)" and labels[1] == "pegasos (2 runs)"


def test_a_legend_counts_one_run_in_the_singular():
    frame = pd.DataFrame(_curve_rows("sbp", {0: [(10, 0.3), (100, 0.2)]}))
    fig = plotting.curves_figure(frame, plotting.X_AXES["kernel_evals"], plotting.Y_AXES["test_error"])
    assert fig.axes[0].get_legend_handles_labels()[1] == ["sbp (1 run)"]


# --------------------------------------------------------------- issue #47: ranges, labels and extras


def _line(xs, errors, **kwargs):
    """A MeanLine of test errors (fractions) at ``xs``, without bands."""
    xs, errors = np.asarray(xs, float), np.asarray(errors, float)
    return MeanLine(2, xs, errors, np.full(xs.size, np.nan), None, **kwargs)


def test_the_zoom_range_holds_a_dip_below_every_final_value():
    """Reuters' Figure 2: SMO dips to 2.36% before it ends at 2.88%; the zoom once stopped at 0.9
    times the lowest final mean and cut the dip off."""
    xs = np.logspace(6, 8, 9)
    smo = _line(xs, [0.027, 0.0236, 0.025, 0.027, 0.028, 0.0285, 0.0288, 0.0288, 0.0288])
    sbp = _line(xs, [0.05, 0.04, 0.035, 0.03, 0.029, 0.0287, 0.0286, 0.0286, 0.0286])
    y = plotting.Y_AXES["test_error"]
    low, high = plotting.zoom_range([smo, sbp], [2.88, 2.86], plotting.X_AXES["kernel_evals"], y)
    assert low < 2.36 and high >= plotting.ZOOM_RANGE[1] * 2.87
    flat = _line(xs, np.full(xs.size, 0.0288))  # no dip: the range of the final values alone
    assert plotting.zoom_range([flat], [2.88], plotting.X_AXES["kernel_evals"], y) == pytest.approx(
        (plotting.ZOOM_RANGE[0] * 2.88, plotting.ZOOM_RANGE[1] * 2.88))
    # the dots of a swinging solver before its line (here all but the last point) are no part of it
    swinging = _line(xs, [0.9, 0.01, 0.9, 0.01, 0.9, 0.01, 0.9, 0.01, 0.0288], line_from=xs[-1])
    assert plotting.zoom_range([swinging], [2.88], plotting.X_AXES["kernel_evals"], y)[0] == pytest.approx(
        plotting.ZOOM_RANGE[0] * 2.88)


def test_the_zoom_range_holds_the_final_stretch_of_every_line_but_not_its_start():
    """A line's last ZOOM_TAIL of the log x axis is in view (the Adult Perceptron, judged there, ends
    near 20% while the others end near 15%); its start, far above, is not; nor beyond the full panel's top."""
    xs = np.logspace(4, 8, 17)                      # the last quarter: from 10^7 on
    perceptron = _line(xs, np.r_[np.full(12, 0.40), 0.19, 0.22, 0.20, 0.21, 0.20])
    sbp = _line(xs, np.linspace(0.40, 0.15, 17))
    x, y = plotting.X_AXES["kernel_evals"], plotting.Y_AXES["test_error"]
    low, high = plotting.zoom_range([perceptron, sbp], [20.0, 15.0], x, y)
    assert 22.0 < high < 40.0 and low == pytest.approx(plotting.ZOOM_RANGE[0] * 15.0)
    assert plotting.zoom_range([perceptron, sbp], [20.0, 15.0], x, y, top=21.0)[1] == 21.0
    # what lies left of the panel does not count
    assert plotting.zoom_range([perceptron, sbp], [20.0, 15.0], x, y, left=1e7)[0] == pytest.approx(low)


def test_a_full_panel_holds_every_lines_start():
    """MNIST's Figure 2: Pegasos starts at 25.8% and SBP rises to 15% while the constant classifier
    errs 9.7%: the full panel's top once cut them off."""
    pegasos = _line([6e4, 1e5, 1e7], [0.258, 0.5, 0.006])
    perceptron = _line([1, 10, 6e4, 1e7], [0.9, 0.8, 0.166, 0.006])   # begins left of the panel
    top = plotting.start_top([pegasos, perceptron], 0.097, 100.0, left=6e4)
    assert top == pytest.approx(plotting.BASELINE_HEADROOM * 25.8)
    assert plotting.start_top([perceptron], 0.097, 100.0, left=6e4) == pytest.approx(
        plotting.BASELINE_HEADROOM * 16.6)                                 # at the panel's edge
    assert plotting.start_top([_line([6e4], [0.05])], 0.097, 100.0) == pytest.approx(
        plotting.BASELINE_HEADROOM * 9.7)                                  # the baseline where it is higher
    rows = pd.DataFrame(_curve_rows("pegasos", {r: [(6e4, 0.258), (1e5, 0.5), (1e7, 0.006)] for r in (0, 1)}))
    fig = plotting.curves_figure(rows, plotting.X_AXES["kernel_evals"], plotting.Y_AXES["test_error"], zoom=True,
                                 marks=plotting.Marks(baselines={"e": 0.097}))
    assert fig.axes[0].get_ylim()[1] >= 25.8
    plt.close(fig)


def _crossed(label, ax, renderer):
    """The lines of ``ax`` that the box of ``label`` crosses, and whether the box lies inside the panel."""
    box = label.get_window_extent(renderer)
    crossed = [ln.get_label() for ln in ax.get_lines()
               if ln.get_transform().transform_path(ln.get_path()).intersects_bbox(box, filled=False)]
    inside = ax.bbox.x0 <= box.x0 and box.x1 <= ax.bbox.x1 and ax.bbox.y0 <= box.y0 and box.y1 <= ax.bbox.y1
    return crossed, inside


def test_a_fits_label_is_placed_where_it_covers_no_line():
    """Adult's Figure 3: SBP passes just above Fourier's last point, where 'k = 1024' used to sit."""
    fits = pd.DataFrame(_rows("fourier", "inner_products", [1e3, 1e4, 1e5], [0, 0, 0]))
    fits["test_error"] = np.tile([0.30, 0.18, 0.150], 2)
    fits["pairs"] = np.tile([1, 2, 1024], 2)
    sbp = pd.DataFrame(_curve_rows("sbp", {r: [(1e3, 0.40), (1e5, 0.153), (1e7, 0.149)] for r in (0, 1)}))
    curves = pd.concat([sbp, fits], ignore_index=True)
    curves["cost"] = curves["inner_products"].fillna(curves["kernel_evals"])
    fig = plotting.curves_figure(curves, plotting.Axis("cost", "inner products", log=True),
                                 plotting.Y_AXES["test_error"], zoom=True,
                                 marks=plotting.Marks(baselines={"e": 0.4}, fit_label=("pairs", "k = {:g}")))
    renderer = FigureCanvasAgg(fig).get_renderer()
    labels = [(t, ax) for ax in fig.axes for t in ax.texts]
    assert [t.get_text() for t, _ in labels] == ["k = 1", "k = 1024"] * 2
    for label, ax in labels:
        crossed, inside = _crossed(label, ax, renderer)
        assert crossed == [] and inside, (label.get_text(), crossed)
    last = labels[-1][0]                      # the first place, right of the point and above, is taken by SBP
    assert (last.get_horizontalalignment(), last.get_verticalalignment()) != plotting.LABEL_PLACES[0][2:]
    plt.close(fig)

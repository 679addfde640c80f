"""A run's own page: one self-contained HTML file per run folder, ``RUN/index.html``.

``sbpbench run`` writes it after its runs, ``sbpbench page`` (re)writes it for existing run
folders. It needs nothing but itself, offline: no external file, script, style or font.
It holds

* an interactive plot: the mean curves over runs of every solver (of the best :data:`DRAWN` of a
  larger sweep, :func:`drawn_entries`) against every axis of
  :data:`~sbpbench.outputs.lines.X_AXES` and :data:`~sbpbench.outputs.lines.Y_AXES`,
  embedded as JSON and drawn as SVG by a small hand-written script (``page.js``, inlined):
  choose the x and y axes, click a legend entry to hide or show a solver, drag a rectangle or
  turn the wheel to zoom, reset, and save the chart as shown as an SVG or a PDF file
  (``chart_files.js``, inlined too, which gives every static figure the same two buttons);
* the same curves as static figures, for readers without JavaScript: those of :data:`FIGURES`,
  inline SVG written in Python from the same embedded data, as the script draws it before any
  zoom, with a legend and the solvers left out in the caption (:mod:`~sbpbench.outputs.svg_chart`;
  no matplotlib, a few milliseconds each);
* the tables ``sbpbench run`` prints: the summary and the best settings
  (:mod:`sbpbench.outputs.summary`), the test error at fixed budgets
  (:mod:`sbpbench.outputs.budgets`); for a sweep over settings, the solvers' performance profiles
  (:mod:`sbpbench.outputs.profiles`, as static figures); each run's status and totals, the resolved configuration,
  and the machine and versions from ``meta.json``. Every table sorts on a click on a heading.

Every text taken from configs and results is escaped: :func:`html.escape` in the markup, and
``<``, ``>`` and ``&`` written as JSON escapes inside the embedded data, which the script only
ever sets as text. The mean curves are those of ``sbpbench plot``'s figures
(:func:`~sbpbench.outputs.lines.mean_line`: each run interpolated on a common log grid, the mean
over the runs covering each point), written with :data:`DIGITS` significant digits.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from sbpbench.experiment.config import report_budgets
from sbpbench.files import atomic_write
from sbpbench.outputs import svg_chart
from sbpbench.outputs.budgets import budget_caption, budget_labels, budget_tables, cell
from sbpbench.outputs.lines import X_AXES, Y_AXES, Numbers, left_out_each, mean_line
from sbpbench.outputs.notation import formatted, number
from sbpbench.outputs.profiles import PROFILE_COSTS, Profile, caption, performance_profile
from sbpbench.outputs.summary import (
    SummaryRow,
    best_caption,
    best_cells,
    chosen_on,
    summary_header,
    summary_rows,
)
from sbpbench.results.store import curves_file, curves_frame, read_curves, read_meta

#: Significant digits of the numbers of the embedded curves.
DIGITS = 6

#: The static figures of a page, (x axis, y axis), each drawn when some solver has both.
FIGURES = (("kernel_evals", "test_error"), ("seconds", "test_error"), ("iterations", "primal_objective"),
           ("iterations", "gap"))

#: The columns of the page's table of runs: ``meta.json``'s key for each run, and its heading.
RUN_COLUMNS = (("solver", "solver"), ("run", "run"), ("status", "status"), ("checkpoints", "checkpoints"),
               ("iterations", "iterations"), ("kernel_evals", "kernel evals"), ("train_time_s", "train s"),
               ("test_error", "test error (%)"), ("wall_time_s", "wall s"))

STYLE = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:auto;padding:0 12px;color:#222}
h1 small{color:#666;font-weight:normal}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ccc;padding:2px 8px;font-size:13px;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}.bad{color:#b00}td.best{font-weight:bold}
table.sortable th{cursor:pointer}th[aria-sort=ascending]::after{content:" ▲"}
th[aria-sort=descending]::after{content:" ▼"}
pre{background:#f4f4f4;padding:8px;font-size:12px;overflow-x:auto}
figure{margin:12px 0}figure svg{max-width:100%;height:auto;border:1px solid #ddd}figcaption{font-size:13px;color:#555}
#chart{width:100%;max-width:760px;height:auto;border:1px solid #ddd;user-select:none;cursor:crosshair}
#chart .selection{fill:#88f;fill-opacity:.15;stroke:#66c}
#legend .entry{border:1px solid #ccc;background:#fafafa;margin:2px;padding:2px 8px;cursor:pointer;font-size:13px}
#legend .entry.off{opacity:.4;text-decoration:line-through}
#legend .sample{margin:0 6px 0 0;vertical-align:middle}#legend .line{fill:none;stroke-width:2}
.controls label{margin-right:12px}#notes,.hint{font-size:13px;color:#555}
button.download{font-size:12px;margin-left:8px}
"""

#: The charts' own style (the interactive one's and the static figures'): its own element of the
#: page (``#chart-style``), which ``chart_files.js`` copies into each chart it saves as a file.
CHART_STYLE = """
.chart{font-family:system-ui,sans-serif}.chart .plot-area{fill:#fff}.chart .grid{stroke:#e4e4e4}
.chart .tick{font-size:11px;fill:#444}.chart .axis-label{font-size:13px}.chart .line{fill:none;stroke-width:1.6}
.chart .dashed{stroke-dasharray:5 4}.chart .band{opacity:.18;stroke:none}.chart .legend{font-size:13px}
.chart .legend .line{stroke-width:2}
"""


def _rounded(values: Any) -> list[float | None]:
    """``values`` to :data:`DIGITS` significant digits, None where one is not a finite number (JSON has no NaN)."""
    return [float(f"{v:.{DIGITS}g}") if math.isfinite(v) else None for v in values]


def page_data(curves: pd.DataFrame) -> dict[str, Any]:
    """The curves the page's script draws, as JSON-ready data.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of a run folder's ``curves.csv``.

    Returns
    -------
    dict
        ``x`` and ``y``: every axis by name, with its label and whether it is logarithmic;
        ``solvers``: per solver (in the order they appear) its label, its look (a colour, a line
        style and a marker: :func:`~sbpbench.outputs.svg_chart.styles`) and its curves by
        ``"<x>|<y>"``, each the mean over runs and its standard error (as drawn, e.g. test error
        in percent; None where fewer than two runs cover a point), the number of runs, whether its
        checkpoints are fits of their own (drawn as points too) and where a dashed part starts (or
        None); ``notes``:
        per ``"<x>|<y>"``, the solvers left out (:func:`~sbpbench.outputs.lines.left_out`);
        ``initial``: the axes shown first (kernel evaluations if any solver has them, else
        iterations, against test error).
    """
    solvers: list[dict[str, Any]] = []
    names: list[str] = []
    for label, frame in curves.groupby("solver", sort=False):
        lines = {}
        numbers = Numbers(frame)
        for xname, x in X_AXES.items():
            for yname, y in Y_AXES.items():
                rows = frame[numbers.drawable(x, y)]
                line = mean_line(rows, x.column, y.column) if len(rows) else None
                if line is not None:
                    lines[f"{xname}|{yname}"] = {
                        "x": _rounded(line.x), "mean": _rounded(y.factor * line.mean),
                        "se": _rounded(y.factor * line.se), "runs": line.runs, "fits": line.fits,
                        "dashed_from": None if line.dashed_from is None else float(f"{line.dashed_from:.{DIGITS}g}")}
        solvers.append({"label": str(label), "curves": lines})
        names.append(str(frame["solver_name"].iloc[0]))
    for solver, style in zip(solvers, svg_chart.styles(names)):
        solver["style"] = style
    pairs = {f"{xname}|{yname}": (x, y) for xname, x in X_AXES.items() for yname, y in Y_AXES.items()}
    notes = dict(zip(pairs, left_out_each(curves, list(pairs.values()))))
    has_kernel_evals = any("kernel_evals|test_error" in s["curves"] for s in solvers)
    return {"x": {name: {"label": a.label, "log": a.log} for name, a in X_AXES.items()},
            "y": {name: {"label": a.label, "log": a.log} for name, a in Y_AXES.items()},
            "solvers": solvers, "notes": notes,
            "initial": ["kernel_evals" if has_kernel_evals else "iterations", "test_error"]}


#: Most solver entries a page draws: a sweep with more draws those of :func:`drawn_entries`.
DRAWN = 12


def drawn_entries(curves: pd.DataFrame, summary: list[SummaryRow]) -> tuple[pd.DataFrame, str | None]:
    """The curves of the solver entries a page draws, and the sentence saying which when not all.

    A run folder with at most :data:`DRAWN` entries (solver labels) draws every one. A larger
    sweep (a thousand entries would make a page of megabytes and a chart no one can read)
    draws the :data:`DRAWN` with the lowest final error of the summary
    (:func:`~sbpbench.outputs.summary.summary_rows`: mean over runs, validation error where
    measured; entries without one last), in the file's order; the page's tables list every entry.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of a run folder's ``curves.csv``.
    summary : list of SummaryRow
        Their summary (:func:`~sbpbench.outputs.summary.summary_rows`), one row per entry.

    Returns
    -------
    tuple of (pandas.DataFrame, str or None)
        The rows of the entries drawn, and the sentence (None when every entry is drawn).
    """
    if len(summary) <= DRAWN:
        return curves, None
    best = sorted(summary, key=lambda r: r.error_mean if math.isfinite(r.error_mean) else math.inf)[:DRAWN]
    chosen = {r.solver for r in best}
    error = "validation error" if chosen_on(curves) == "validation_error" else "test error"
    return (curves[curves["solver"].astype(str).isin(chosen)],
            f"{len(summary)} solver entries: the curves and figures show the {DRAWN} with the lowest final {error} "
            "(mean over runs); the tables below list every entry.")


def script_json(value: Any) -> str:
    """``value`` as JSON that can stand inside a ``<script>`` element whatever its strings hold.

    ``<``, ``>`` and ``&`` are written as ``\\u`` escapes, so that no string can end the element
    or open a comment; NaN and infinities are refused (they are not JSON).
    """
    text = json.dumps(value, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


class Shown(str):
    """A number already written as text (a test error in percent), shown right-aligned as numbers are."""


class Markup(str):
    """Markup already escaped (a link), put in a table cell as it is."""


def _cell(value: Any, bold: bool = False) -> str:
    """A table cell: numbers right-aligned, as :func:`number` writes them, anything else as escaped
    text; ``bold`` marks the best value of its column (class ``best``)."""
    classes = ["best"] if bold else []
    if isinstance(value, Markup):
        text = str(value)
    elif isinstance(value, Shown):
        text = _e(value)
        classes.append("num")
    elif isinstance(value, bool) or value is None or not isinstance(value, int | float):
        text = _e("" if value is None else value)
    else:
        text = number(value)
        classes.append("num")
    return f"<td class='{' '.join(classes)}'>{text}</td>" if classes else f"<td>{text}</td>"


def sortable_table(header: Sequence[str], rows: list[list[Any]], bad: list[bool] | None = None,
                   best: list[list[bool]] | None = None) -> str:
    """A table the reader can sort by clicking a heading (``tables.js``, :func:`scripts`).

    Parameters
    ----------
    header : sequence of str
        The headings.
    rows : list of list
        The cells, row by row: numbers right-aligned as :func:`~sbpbench.outputs.notation.number`
        writes them (and :class:`Shown` text), anything else as escaped text.
    bad : list of bool, optional
        The rows to mark as failed.
    best : list of list of bool, optional
        The cells to show in bold (the best of their column or row), row by row.

    Returns
    -------
    str
        The table's markup.
    """
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join(f"<tr{' class=bad' if bad and bad[i] else ''}>"
                   + "".join(_cell(c, bool(best and best[i][j])) for j, c in enumerate(row)) + "</tr>"
                   for i, row in enumerate(rows))
    return f"<table class='sortable'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _summary(curves: pd.DataFrame, rows: list[SummaryRow]) -> str:
    if not rows:
        return "<p>No checkpoints were recorded.</p>"
    return sortable_table(summary_header(curves), [[r.solver, r.runs,
                                            Shown(f"{formatted(r.error_mean, '.2f')} ± {formatted(r.error_se, '.2f')}"),
                                            r.kernel_evals, r.train_time_s, r.statuses] for r in rows])


def _best(curves: pd.DataFrame) -> str:
    """Each solver's best setting (:func:`~sbpbench.outputs.summary.best_cells`), as ``sbpbench run`` prints it."""
    header, rows = best_cells(curves)
    if not rows:
        return ""
    cells = [[*row[:2], *map(Shown, row[2:])] for row in rows]
    return f"<h3>Best setting of each solver</h3><p>{_e(best_caption(curves))}</p>" + sortable_table(header, cells)


def _budgets(curves: pd.DataFrame, budgets: dict[str, tuple[float, ...]]) -> str:
    """The test error at fixed budgets of kernel evaluations and of seconds (:mod:`~sbpbench.outputs.budgets`;
    ``budgets`` by axis, the others the defaults), the lowest mean of each budget in bold."""
    parts = []
    for table in budget_tables(curves, budgets):
        rows = [[r.solver, r.runs, *(Shown(cell(m, se, False)) for m, se in zip(r.means, r.ses))] for r in table.rows]
        caption = budget_caption(table).replace("* marks", "bold marks")
        parts += [f"<p>{_e(caption)}</p>",
                  sortable_table(("entry", "runs", *budget_labels(table)), rows,
                         best=[[False, False, *r.best] for r in table.rows])]
    return "<h3>Test error at fixed budgets</h3>" + "".join(parts) if parts else ""


def profile_data(profile: Profile) -> dict[str, Any]:
    """A performance profile (:mod:`~sbpbench.outputs.profiles`) as data of
    :func:`page_data`'s form, for :func:`~sbpbench.outputs.svg_chart.chart_svg` to draw on the axes
    ``tau|fraction``: each solver's step line, without bands or a count of runs, in a colour, a line
    style and a marker of its own (solvers whose profiles coincide stay apart).

    Parameters
    ----------
    profile : Profile
        The profile.

    Returns
    -------
    dict
        ``x``, ``y``, ``solvers`` and ``notes`` as :func:`page_data` gives them.
    """
    solvers = [{"label": solver, "style": {"color": svg_chart.COLORS[k % len(svg_chart.COLORS)],
                                           "dash": svg_chart.DASHES[k % len(svg_chart.DASHES)],
                                           "marker": svg_chart.MARKERS[1 + k % (len(svg_chart.MARKERS) - 1)]},
                "curves": {"tau|fraction": {"x": _rounded(taus), "mean": _rounded(fractions), "se": [None] * len(taus),
                                            "runs": None, "fits": False, "dashed_from": None}}}
               for k, (solver, (taus, fractions)) in enumerate(zip(profile.solvers, profile.steps()))]
    return {"x": {"tau": {"label": f"tau: within this factor of the best solver's {profile.cost.label}", "log": True}},
            "y": {"fraction": {"label": "fraction of problems", "log": False, "range": [0, 1]}},
            "solvers": solvers, "notes": {}}


def profile_section(curves: pd.DataFrame, extra: Callable[[Profile], str] | None = None) -> str:
    """The performance profiles of the solvers of ``curves`` over its problems (the settings of a
    run, or several data sets: :mod:`~sbpbench.outputs.profiles`), against each cost some solver
    has, as static figures under a caption stating the target.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of ``curves.csv`` files.
    extra : callable, optional
        Markup to add after each profile's figure (the overview's table of costs).

    Returns
    -------
    str
        The section; ``""`` with fewer than two problems.
    """
    pairs = [(cost, p) for cost in PROFILE_COSTS if (p := performance_profile(curves, cost)) is not None]
    if not pairs:
        return ""
    figures = [f"<figure data-name='performance-profile-{_e(cost)}'>"
               f"{svg_chart.chart_svg(profile_data(p), 'tau', 'fraction', f'profile-{cost}-clip')}"
               f"<figcaption>Performance profile, cost: {_e(p.cost.label)}</figcaption></figure>"
               + (extra(p) if extra else "") for cost, p in pairs]
    return (f"<h3>Performance profile</h3><p id='profile-caption'>{_e(caption([p for _, p in pairs]))}</p>"
            + "".join(figures))


def _runs(meta: dict[str, Any]) -> str:
    runs = [r for r in meta.get("runs", []) if isinstance(r, dict)]
    if not runs:
        return "<p>No run has finished.</p>"
    status = [str(r.get("status")) for r in runs]
    return sortable_table(tuple(h for _, h in RUN_COLUMNS), [[_percent(r.get(k)) if k == "test_error" else r.get(k)
                                                      for k, _ in RUN_COLUMNS] for r in runs],
                  [s == "diverged" or s.startswith("failed") for s in status])


def _percent(fraction: Any) -> Any:
    """A test error in percent with two decimals, as the summary shows it; anything but a number as it is."""
    if isinstance(fraction, bool) or not isinstance(fraction, int | float) or not math.isfinite(fraction):
        return fraction
    return Shown(f"{100 * fraction:.2f}")


def _machine(meta: dict[str, Any]) -> str:
    """Where and with what the runs ran: times, executor, dataset copy, commit, Python, host, versions."""
    rows: list[list[Any]] = [[k, meta[k]] for k in ("config_file", "started", "finished", "interrupted",
                                                     "executor", "jobs", "dataset_copy", "git_commit", "python")
                             if k in meta]
    for group in ("host", "versions"):
        if isinstance(meta.get(group), dict):
            rows += [[f"{group}.{k}", v] for k, v in meta[group].items()]
    for i, resume in enumerate(meta.get("resumes") or []):
        rows.append([f"resumes[{i}]", json.dumps(resume, default=str)])
    return sortable_table(("what", "value"), rows)


def _figures(data: dict[str, Any]) -> str:
    """The static figures of :data:`FIGURES` that some solver has (:mod:`~sbpbench.outputs.svg_chart`),
    each captioned with the solvers it leaves out, from the page's data (:func:`page_data`)."""
    parts = []
    for xname, yname in FIGURES:
        svg = svg_chart.chart_svg(data, xname, yname, f"figure-{xname}-{yname}-clip")
        if svg is not None:
            note = svg_chart.not_drawn(data, f"{xname}|{yname}")
            parts.append(f"<figure data-name='figure-{_e(xname)}-{_e(yname)}'>{svg}<figcaption>"
                         f"{_e(data['y'][yname]['label'])} against "
                         f"{_e(data['x'][xname]['label'])}: the mean over runs with one standard error"
                         f"{'. ' + _e(note) if note else ''}</figcaption></figure>")
    return "\n".join(parts) or "<p>Nothing to draw.</p>"


def head(title: str) -> str:
    """The start of a page up to its body: its title, the page's style and the charts' (``#chart-style``).

    Parameters
    ----------
    title : str
        The page's title (escaped here).

    Returns
    -------
    str
        The markup, from the doctype to ``</head>``.
    """
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width'><title>{_e(title)}</title><style>{STYLE}</style>"
            f"<style id='chart-style'>{CHART_STYLE}</style></head>")


def scripts(*names: str) -> str:
    """The scripts of this package named, inlined (``tables.js`` sorts the tables, ``chart_files.js``
    saves the charts as SVG and PDF files, ``page.js`` draws a run's interactive plot).

    Parameters
    ----------
    *names : str
        File names beside this module.

    Returns
    -------
    str
        One ``<script>`` element holding them, in order.
    """
    text = "\n".join(Path(__file__).with_name(name).read_text(encoding="utf-8") for name in names)
    return f"<script>{text}</script>"


def render_page(curves: pd.DataFrame, meta: dict[str, Any], run_name: str) -> str:
    """The page of one run folder, as HTML text.

    Parameters
    ----------
    curves : pandas.DataFrame
        Its ``curves.csv`` (possibly without rows).
    meta : dict
        Its ``meta.json``.
    run_name : str
        The run folder's name (its start time), shown in the title.

    Returns
    -------
    str
        The page.
    """
    experiment = str(meta.get("experiment") or (curves["experiment"].iloc[0] if len(curves) else "run"))
    config = meta["config"] if isinstance(meta.get("config"), dict) else {}
    title = f"sbpbench: {experiment} (run {run_name})"
    summary = summary_rows(curves)
    drawn, which = drawn_entries(curves, summary)
    data = page_data(drawn)
    parts = [head(title), f"<body><h1>{_e(experiment)} <small>run {_e(run_name)}</small></h1>"]
    if config.get("description"):
        parts.append(f"<p>{_e(config['description'])}</p>")
    parts += [
        "<h2>Summary</h2><p>The final checkpoint of each run: the error's mean ± its standard error over runs, "
        "kernel evaluations and training seconds (means). Click a heading to sort a table.</p>",
        _summary(curves, summary), _best(curves),
        _budgets(curves, report_budgets(config.get("report"), "meta.json: config")), profile_section(curves),
        "<h2>Curves</h2>" + (f"<p id='drawn'>{_e(which)}</p>" if which else ""),
        "<div id='explorer' hidden><p class='controls'><label>x axis <select id='x-axis'></select></label>"
        "<label>y axis <select id='y-axis'></select></label><button type='button' id='reset'>reset zoom</button>"
        "<span id='downloads'></span></p>"
        "<svg id='chart' class='chart' xmlns='http://www.w3.org/2000/svg' viewBox='0 0 760 440' width='760' "
        "height='440'></svg>"
        "<div id='legend'></div><p id='notes'></p><p class='hint'>Drag a rectangle or turn the wheel over the plot "
        "to zoom; click a solver to hide or show it. The mean over runs with one standard error, where at least two "
        "runs cover the point.</p></div>",
        "<h3>Figures</h3>", _figures(data),
        "<h2>Runs</h2>", _runs(meta),
        "<h2>Resolved configuration</h2>",
        f"<pre>{_e(yaml.safe_dump(meta.get('resolved', {}), sort_keys=False, width=100))}</pre>",
        f"<details><summary>as written</summary><pre>{_e(yaml.safe_dump(config, sort_keys=False, width=100))}"
        "</pre></details>",
        "<h2>Machine and versions</h2>", _machine(meta),
        f"<script type='application/json' id='sbpbench-data'>{script_json(data)}</script>",
        scripts("tables.js", "chart_files.js", "page.js"), "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def run_curves(run_dir: Path) -> pd.DataFrame:
    """A run folder's curves (with the solvers' traits); no rows before a run has finished.

    Parameters
    ----------
    run_dir : pathlib.Path
        The run folder.

    Returns
    -------
    pandas.DataFrame
        Its ``curves.csv``.
    """
    path = curves_file(run_dir)
    return read_curves(path, traits=True) if path is not None and path.stat().st_size > 0 else curves_frame([])


def write_page(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write the page of a run folder (atomically).

    Parameters
    ----------
    run_dir : str or pathlib.Path
        A run folder: ``meta.json`` and (once a run has finished) ``curves.csv``.
    out : str or pathlib.Path, optional
        The file to write; default ``run_dir/index.html``.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    UserError
        The run folder's files are not sbpbench's.
    """
    run_dir = Path(run_dir)
    curves = run_curves(run_dir)
    target = Path(out) if out is not None else run_dir / "index.html"
    atomic_write(target, render_page(curves, read_meta(run_dir), run_dir.name))
    return target

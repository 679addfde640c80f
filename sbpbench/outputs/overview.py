"""The pages of a results tree: each experiment's page, and the overview of several experiments
(data sets), ``index.html`` beside their pages.

``sbpbench page TREE`` writes the page of the newest run of each experiment and, with several,
their overview ``TREE/index.html`` (:func:`write_pages`; with ``--out DIR``, ``DIR/index.html``
next to ``DIR/<experiment>.html``); ``sbpbench run`` of several configs writes it as
``RESULTS/index.html``. The overview links each experiment's page.
Like a run's page (:mod:`sbpbench.outputs.page`, whose head, tables, charts and sorting script it
uses) it needs nothing but itself, offline. It holds

* a table of the experiments: a link to each one's page, its data set, its solvers and each
  solver's best test error (:func:`best_errors`: the lowest over its settings of the final mean
  test error over runs, the lowest of each experiment in bold);
* the solvers' performance profiles across the experiments (:mod:`sbpbench.outputs.profiles`:
  the numbers of :func:`~sbpbench.outputs.profiles.performance_profile` on the curves of all of
  them, drawn as a run's page draws its profiles, the target stated in the caption, with the
  buttons that save a chart as an SVG or a PDF file, ``chart_files.js``), each with a
  table of the per-problem costs (:func:`costs_table`), and the profiles' numbers embedded as
  JSON (``#sbpbench-profiles``, :func:`profile_numbers`) for a reader's own analysis.

A profile needs two problems: with fewer, the page says so.
"""

from __future__ import annotations

import html
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from sbpbench.errors import UserError
from sbpbench.files import atomic_write
from sbpbench.outputs.page import (
    Markup,
    Shown,
    head,
    profile_section,
    run_curves,
    script_json,
    scripts,
    sortable_table,
    write_page,
)
from sbpbench.outputs.profiles import PROFILE_COSTS, Profile, final_errors, performance_profile, with_problems
from sbpbench.results.lookup import newest_runs, stamp
from sbpbench.results.store import curves_frame, read_meta


@dataclass(frozen=True)
class Listed:
    """One experiment of the overview.

    Parameters
    ----------
    experiment : str
        Its name.
    link : str
        Its page, relative to the overview's folder.
    dataset : str
        Its data set's name (or file).
    curves : pandas.DataFrame
        Its run folder's ``curves.csv``.
    """

    experiment: str
    link: str
    dataset: str
    curves: pd.DataFrame


def best_errors(curves: pd.DataFrame) -> dict[str, float]:
    """Each solver's best test error in an experiment: over its settings
    (:func:`~sbpbench.outputs.profiles.with_problems`), the lowest final mean test error over runs
    (:func:`~sbpbench.outputs.profiles.final_errors`).

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of one experiment's ``curves.csv``.

    Returns
    -------
    dict
        Test errors (fractions) by solver, in the order the solvers first appear; a solver without
        a test error is left out.
    """
    errors = final_errors(with_problems(curves))
    return {str(s): float(e) for s, e in errors.groupby(level="profiled", sort=False).min().items()}


def _dataset(meta: dict[str, Any], curves: pd.DataFrame) -> str:
    """The data set's name as the resolved configuration gives it (its file's name for a file of
    one's own), else as the curves do."""
    dataset = (meta.get("resolved") or {}).get("dataset")
    if isinstance(dataset, dict) and (dataset.get("name") or dataset.get("path")):
        return str(dataset.get("name") or Path(str(dataset["path"])).name)
    return str(curves["dataset"].iloc[0]) if "dataset" in curves and len(curves) else ""


def experiments_table(listed: Sequence[Listed]) -> str:
    """The table of the experiments: a link to each one's page, its data set, its solvers, and a
    column per solver of its best test error in percent (:func:`best_errors`), the lowest of each
    row in bold.

    Parameters
    ----------
    listed : sequence of Listed
        The experiments.

    Returns
    -------
    str
        The table's markup.
    """
    best = [best_errors(entry.curves) for entry in listed]
    solvers = list(dict.fromkeys(s for errors in best for s in errors))
    header = ("experiment", "data set", "solvers", *(f"{s}: best test error (%)" for s in solvers))
    rows, bold = [], []
    for entry, errors in zip(listed, best):
        lowest = min(errors.values(), default=math.nan)
        present = list(dict.fromkeys(with_problems(entry.curves)["profiled"])) if len(entry.curves) else []
        link = Markup(f"<a href='{html.escape(entry.link, quote=True)}'>{html.escape(entry.experiment)}</a>")
        rows.append([link, entry.dataset, ", ".join(present),
                     *(Shown(f"{100 * errors[s]:.2f}") if s in errors else "" for s in solvers)])
        bold.append([False, False, False, *(errors.get(s) == lowest for s in solvers)])
    return sortable_table(header, rows, best=bold)


def costs_table(profile: Profile) -> str:
    """A profile's per-problem costs: for each problem its target test error (percent) and each
    solver's cost to reach it, ``not reached`` where it does not; the lowest of each row in bold.

    Parameters
    ----------
    profile : Profile
        The profile.

    Returns
    -------
    str
        A caption and the sortable table.
    """
    header = ("problem", "target test error (%)", *profile.solvers)
    rows, bold = [], []
    for p, problem in enumerate(profile.problems):
        costs = profile.costs[p]
        lowest = costs.min()
        rows.append([problem, Shown(f"{100 * profile.targets[p]:.2f}") if math.isfinite(profile.targets[p]) else "n/a",
                     *(float(c) if math.isfinite(c) else "not reached" for c in costs)])
        bold.append([False, False, *(bool(math.isfinite(c) and c == lowest) for c in costs)])
    return (f"<p>Cost ({html.escape(profile.cost.label)}) of each solver to reach each problem's target; "
            "the lowest in bold.</p>" + sortable_table(header, rows, best=bold))


def profile_numbers(curves: pd.DataFrame) -> dict[str, Any]:
    """The profiles' numbers, JSON-ready: per cost axis (a key of
    :data:`~sbpbench.outputs.profiles.PROFILE_COSTS` with a profile), its problems, solvers, targets,
    costs and ratios (rows by problem; None where not reached), and the solvers left out.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of the experiments' ``curves.csv`` files.

    Returns
    -------
    dict
        The numbers by cost axis.
    """
    def listed(values: Any) -> list[Any]:
        return [[float(v) if math.isfinite(v) else None for v in row] for row in values]

    return {cost: {"problems": list(p.problems), "solvers": list(p.solvers), "left_out": list(p.left_out),
                   "targets": listed([p.targets])[0], "costs": listed(p.costs), "ratios": listed(p.ratios)}
            for cost in PROFILE_COSTS if (p := performance_profile(curves, cost)) is not None}


def render_overview(listed: Sequence[Listed]) -> str:
    """The overview page of several experiments, as HTML text.

    Parameters
    ----------
    listed : sequence of Listed
        The experiments, in the order to list them.

    Returns
    -------
    str
        The page.
    """
    frames = [entry.curves for entry in listed if len(entry.curves)]
    curves = pd.concat(frames, ignore_index=True) if frames else curves_frame([])
    profiles = profile_section(curves, costs_table)
    parts = [
        head(f"sbpbench: {len(listed)} experiments"),
        f"<body><h1>sbpbench <small>{len(listed)} experiments</small></h1>",
        "<h2>Experiments</h2><p>Each experiment's page, data set and solvers, and each solver's best test error: "
        "over its settings, the lowest final mean test error over runs (the lowest of each experiment in bold). "
        "Click a heading to sort a table.</p>",
        experiments_table(listed),
        "<h2>Across the experiments</h2>",
        profiles or "<p>No performance profile: it needs two problems (data sets or settings) and two solvers "
                    "with a cost recorded.</p>",
        f"<script type='application/json' id='sbpbench-profiles'>{script_json(profile_numbers(curves))}</script>"
        if profiles else "",
        scripts("tables.js", "chart_files.js"), "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_overview(runs: Sequence[Path], links: Sequence[str], target: Path) -> Path:
    """Write the overview page of run folders (atomically).

    Parameters
    ----------
    runs : sequence of pathlib.Path
        A run folder per experiment.
    links : sequence of str
        Each one's page, relative to ``target``'s folder.
    target : pathlib.Path
        The file to write.

    Returns
    -------
    pathlib.Path
        ``target``.
    """
    listed = []
    for run, link in zip(runs, links):
        curves = run_curves(run)
        meta = read_meta(run)
        name = str(meta.get("experiment") or (curves["experiment"].iloc[0] if len(curves) else run.name))
        listed.append(Listed(name, link, _dataset(meta, curves), curves))
    atomic_write(target, render_overview(listed))
    return target


def write_pages(root: str | Path, out_dir: str | Path | None = None) -> list[Path]:
    """Write the page of the newest run of every experiment under ``root`` and, with several
    experiments, their overview (:func:`write_overview`) linking them.

    Parameters
    ----------
    root : str or pathlib.Path
        A run folder or a results tree (the runs :func:`~sbpbench.results.lookup.newest_runs` finds).
    out_dir : str or pathlib.Path, optional
        Write ``<out_dir>/<experiment>.html`` instead of ``index.html`` in each run folder, and the
        overview as ``<out_dir>/index.html`` instead of ``<root>/index.html``.

    Returns
    -------
    list of pathlib.Path
        The pages written, the overview last.

    Raises
    ------
    UserError
        No run folder with checkpoints is under ``root``, or an experiment named ``index`` would
        take the overview's file.
    """
    runs = newest_runs(root)
    if not runs:
        raise UserError(f"{root}: no run folder with checkpoints found (a meta.json next to a curves.csv)")
    folder = Path(root if out_dir is None else out_dir)
    if out_dir is None:
        pages = [write_page(run) for run in runs]
    else:
        names = [f"{run.parent.name if stamp(run) else run.name}.html" for run in runs]
        if len(runs) > 1 and "index.html" in names:
            raise UserError(f"{root}: an experiment named 'index' would overwrite the overview "
                            f"{folder / 'index.html'}; expected experiments with other names")
        folder.mkdir(parents=True, exist_ok=True)
        pages = [write_page(run, folder / name) for run, name in zip(runs, names)]
    if len(runs) == 1:
        return pages
    links = [os.path.relpath(page, folder).replace(os.sep, "/") for page in pages]
    return [*pages, write_overview(runs, links, folder / "index.html")]

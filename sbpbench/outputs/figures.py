"""Every figure of the three papers from committed results: ``sbpbench figures``.

Results are read per experiment (the config's ``name``) from a results root, by default
``results/paper/`` (the compact committed copies: ``<experiment>/curves.csv[.gz]`` and
``meta.json``); a folder ``<experiment>/<run-id>/`` as written by ``sbpbench run`` works too
(the newest run is used). What is drawn, in the papers' form:

* SBP paper, Figure 2: test error (linear) against kernel evaluations (log), one panel per
  dataset (Reuters, Adult, MNIST; the MNIST-t10k substitute when full MNIST is missing), mean
  over runs with a one-sigma band, the Perceptron dashed after its first epoch
  (:func:`sbpbench.plotting.figure2`).
* SBP paper, Figure 3: the same against d-dimensional inner products (:func:`sbpbench.plotting.figure3`).
* Pegasos paper, Figure 2: primal objective against iterations (log-log), Pegasos vs Norma
  (left) and vs SGD with fixed learning rates (right), mean over runs.
* Pegasos paper, Figure 3: final primal objective against the mini-batch size k, for T fixed
  (left) and kT fixed (right), mean and standard deviation over runs.
* SGD paper, Tables 2-7: Markdown tables (``sgd-tables.md``), built by :mod:`sbpbench.report`.

Each figure is written as PNG and SVG into the output folder, and ``index.html`` shows all
of them (PNG inlined as base64) with the configs that made them. A figure whose results are
missing is listed as missing; that is not an error.
"""

from __future__ import annotations

import base64
import html
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import yaml  # noqa: E402

from sbpbench.outputs import plotting  # noqa: E402
from sbpbench.results.lookup import ExperimentResult, final_rows, find_experiment  # noqa: E402

#: Default results root of ``sbpbench figures`` and ``sbpbench report``: the committed runs.
PAPER_RESULTS = Path("results") / "paper"


#: Runs an experiment takes from another instead of repeating them: ``{experiment: (source,
#: solver)}``. Figure 3 on MNIST shows the SBP runs of Figure 2 on MNIST: the two configs
#: pose the same problem with the same seed, and a run's generator depends only on the
#: seed, the run index and the solver (:func:`sbpbench.runner.run_rng`), so the runs are the
#: same bit for bit (as the committed Adult pair shows, ``tests/test_figures_report.py``).
#: Ten more 10-epoch SBP runs on full MNIST would cost about three core-hours.
SHARED_RUNS = {"sbp-figure3-mnist": ("sbp-figure2-mnist", "sbp")}


@dataclass
class Figure:
    """One figure of a paper: which experiments it needs and how to draw them."""

    stem: str
    title: str
    paper: str
    experiments: tuple[str, ...]
    draw: callable
    substitutes: dict[str, str] = field(default_factory=dict)


def _save(fig, stem: Path) -> list[Path]:
    return plotting.save_figure(fig, stem, dpi=110)


def _draw_sbp_figure2(results: list[ExperimentResult], stem: Path) -> list[Path]:
    curves = pd.concat([r.curves for r in results], ignore_index=True)
    return plotting.figure2(curves, stem, "SBP paper, Figure 2",
                            zoom=True)


def _draw_sbp_figure3(results: list[ExperimentResult], stem: Path) -> list[Path]:
    curves = pd.concat([r.curves for r in results], ignore_index=True)
    return plotting.figure3(curves, stem, "SBP paper, Figure 3",
                            zoom=True)


def _draw_objective_panels(results: list[ExperimentResult], stem: Path) -> list[Path]:
    """Primal objective against iterations (log-log), one panel per experiment, mean over runs."""
    fig, axes = plt.subplots(1, len(results), figsize=(5.6 * len(results), 4.2), squeeze=False)
    for ax, res in zip(axes[0], results):
        for label, frame in res.curves.groupby("solver", sort=False):
            frame = frame[np.isfinite(frame["primal_objective"])]
            grid, mean, std = plotting.mean_curve(frame, x="iteration", y="primal_objective")
            if grid.size == 0:
                continue
            line, = ax.plot(grid, mean, label=f"{label} ({frame['run'].nunique()} runs)")
            ax.fill_between(grid, np.maximum(mean - std, 1e-12), mean + std, color=line.get_color(),
                            alpha=0.2, lw=0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("iterations")
        ax.set_ylabel("primal objective")
        ax.set_title(f"{res.name} ({res.curves['dataset'].iloc[0]})")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Pegasos paper, Figure 2")
    fig.tight_layout()
    return _save(fig, stem)


def _draw_pegasos_figure3(results: list[ExperimentResult], stem: Path) -> list[Path]:
    last = final_rows(results[0].curves)
    last = last.assign(k=last["params"].str.extract(r"mini_batch=(\d+)")[0].astype(float),
                       group=last["solver"].str.split(",").str[0])
    groups = list(dict.fromkeys(last["group"]))
    fig, axes = plt.subplots(1, len(groups), figsize=(5.2 * len(groups), 4.0), squeeze=False)
    for ax, group in zip(axes[0], groups):
        g = last[last["group"] == group].groupby("k")["primal_objective"].agg(["mean", "std"]).reset_index()
        ax.errorbar(g["k"], g["mean"], yerr=g["std"].fillna(0), marker="o", capsize=3)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("k (examples per iteration)")
        ax.set_ylabel("primal objective at the end")
        ax.set_title(f"{group} ({results[0].curves['dataset'].iloc[0]})")
        ax.grid(True, alpha=0.3)
    fig.suptitle("Pegasos paper, Figure 3")
    fig.tight_layout()
    return _save(fig, stem)


#: The papers' figures, in the order the HTML page shows them.
FIGURES = (
    Figure("sbp-figure2", "Test error vs kernel evaluations (Reuters, Adult, MNIST)",
           "SBP paper (Cotter, Shalev-Shwartz, Srebro 2012), Figure 2",
           ("sbp-figure2-reuters", "sbp-figure2-adult", "sbp-figure2-mnist"), _draw_sbp_figure2,
           {"sbp-figure2-mnist": "sbp-figure2-mnist-t10k"}),
    Figure("sbp-figure3", "Test error vs d-dimensional inner products: SBP vs random Fourier features",
           "SBP paper, Figure 3 (Appendix A)",
           ("sbp-figure3-reuters", "sbp-figure3-adult", "sbp-figure3-mnist"), _draw_sbp_figure3),
    Figure("pegasos-figure2", "Primal objective vs iterations: Pegasos vs Norma (left), vs fixed-rate SGD (right)",
           "Pegasos paper (Shalev-Shwartz, Singer, Srebro 2007), Figure 2",
           ("pegasos-figure2-norma", "pegasos-figure2-sgd"), _draw_objective_panels),
    Figure("pegasos-figure3", "Effect of the mini-batch size k: T fixed (left), kT fixed (right)",
           "Pegasos paper, Figure 3", ("pegasos-figure3-k",), _draw_pegasos_figure3),
)


@dataclass
class Drawn:
    """What :func:`draw_all` did for one figure."""

    figure: Figure
    files: list[Path]
    used: list[ExperimentResult]
    missing: list[str]


def draw_all(results_root: str | Path = PAPER_RESULTS, out: str | Path = "figures") -> list[Drawn]:
    """Draw every figure whose results exist, write the SGD tables and ``index.html``.

    Parameters
    ----------
    results_root : str or pathlib.Path
        Where the experiments' results are (see the module docstring).
    out : str or pathlib.Path
        Output folder.

    Returns
    -------
    list of Drawn
        One entry per figure of :data:`FIGURES`, with the files written and the missing experiments.
    """
    from sbpbench.outputs.report import sgd_tables_markdown

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # Reproducible SVG files: fixed element ids and no creation date.
    os.environ.setdefault("SOURCE_DATE_EPOCH", "0")
    matplotlib.rcParams["svg.hashsalt"] = "sbpbench"
    drawn = []
    for fig in FIGURES:
        used, missing = [], []
        for name in fig.experiments:
            res = find_experiment(results_root, name, SHARED_RUNS)
            if res is None and name in fig.substitutes:
                res = find_experiment(results_root, fig.substitutes[name], SHARED_RUNS)
                if res is not None:
                    missing.append(f"{name} (drawn: the substitute {fig.substitutes[name]})")
            if res is None:
                missing.append(name)
            else:
                used.append(res)
        files = fig.draw(used, out / fig.stem) if used else []
        drawn.append(Drawn(fig, files, used, missing))
    tables = sgd_tables_markdown(results_root)
    (out / "sgd-tables.md").write_text(tables)
    write_html(drawn, tables, out / "index.html")
    return drawn


def _config_yaml(res: ExperimentResult) -> str:
    config = res.meta.get("config", {})
    resolved = res.meta.get("resolved", {}).get("problem", {})
    text = yaml.safe_dump(config, sort_keys=False, default_flow_style=None, width=100)
    return text + f"# resolved problem: {json.dumps(resolved)}\n"


def write_html(drawn: list[Drawn], sgd_tables: str, path: Path) -> None:
    """One self-contained page: every figure (PNG inlined as base64), the configs that made it,
    what is missing, and the SGD paper's tables."""
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>sbpbench: the papers' figures</title>",
             "<style>body{font-family:sans-serif;max-width:1300px;margin:auto}img{max-width:100%}"
             "pre{background:#f4f4f4;padding:6px;font-size:12px;overflow-x:auto}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}</style>",
             "</head><body><h1>sbpbench: the papers' figures</h1>",
             "<p>Drawn by <code>sbpbench figures</code> from the committed results (results/paper/).</p>"]
    for d in drawn:
        parts.append(f"<h2>{html.escape(d.figure.paper)}</h2><p>{html.escape(d.figure.title)}</p>")
        png = [f for f in d.files if f.suffix == ".png"]
        if png:
            data = base64.b64encode(png[0].read_bytes()).decode()
            parts.append(f"<img alt='{d.figure.stem}' src='data:image/png;base64,{data}'>")
        if d.missing:
            parts.append("<p><b>Missing results:</b> " + html.escape(", ".join(d.missing)) + "</p>")
        for res in d.used:
            run = res.meta.get("run_id") or res.directory.name
            parts.append(f"<details><summary>config of {html.escape(res.name)} "
                         f"(run {html.escape(str(run))})</summary><pre>{html.escape(_config_yaml(res))}</pre></details>")
    parts.append("<h2>SGD paper (Panagiotakopoulos, Tsampouka 2013), Tables 2-7</h2>")
    parts.append(_markdown_tables_to_html(sgd_tables))
    parts.append("</body></html>")
    path.write_text("\n".join(parts))


def _markdown_tables_to_html(text: str) -> str:
    """Render the simple Markdown produced by :func:`sbpbench.report.sgd_tables_markdown`."""
    out, rows = [], []

    def flush():
        if rows:
            head, body = rows[0], rows[2:]
            out.append("<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in head) + "</tr>"
                       + "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in body)
                       + "</table>")
            rows.clear()

    for line in text.splitlines():
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
            continue
        flush()
        if line.startswith("#"):
            out.append(f"<h3>{html.escape(line.lstrip('#').strip())}</h3>")
        elif line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
    flush()
    return "\n".join(out)

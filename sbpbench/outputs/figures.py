"""Every figure the papers declare, from committed results: ``sbpbench figures``.

Results are read per experiment (the config's ``name``) from a results root, by default
``results/paper/`` (the compact committed copies: ``<experiment>/curves.csv[.gz]`` and
``meta.json``); a folder ``<experiment>/<run-id>/`` as written by ``sbpbench run`` works too
(the newest run is used). Each figure of :data:`sbpbench.papers.PAPERS` is drawn by the
function of :mod:`sbpbench.outputs.plotting` its kind of drawing names, and written as PNG and
SVG into the output folder; a section a paper puts on the figures page is written as
Markdown (:mod:`sbpbench.outputs.markdown`). ``index.html`` shows all of
them (PNG inlined as base64) with the configs that made them. A figure whose results are
missing is listed as missing; that is not an error.
"""

from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from sbpbench import papers
from sbpbench.files import atomic_write  # noqa: E402
from sbpbench.outputs import markdown, plotting
from sbpbench.papers.declarations import ErrorCurves, Figure, FiguresPage, ObjectiveCurves, Results
from sbpbench.results.lookup import ExperimentResult


def draw(figure: Figure, used: list[ExperimentResult], stem: Path) -> list[Path]:
    """Draw ``figure`` from the results of its experiments, by its kind of drawing.

    Parameters
    ----------
    figure : Figure
        The declaration.
    used : list of ExperimentResult
        The results drawn (at least one).
    stem : pathlib.Path
        Output path without suffix.

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    curves = pd.concat([res.curves for res in used], ignore_index=True)
    kind = figure.drawing
    if isinstance(kind, ErrorCurves):
        marks = plotting.Marks(baselines=plotting.baselines((res.curves, res.meta) for res in used),
                               fit_label=kind.fit_label, titles=figure.panel_titles(), names=figure.names)
        return plotting.error_curves(curves, stem, kind.cost, figure.label, kind.zoom, kind.dpi, marks)
    if isinstance(kind, ObjectiveCurves):
        if "test_hinge_loss" in curves:  # drawn only in the panels the paper shows it in
            curves["test_hinge_loss"] = curves["test_hinge_loss"].where(curves["experiment"].isin(kind.test_loss))
        marks = plotting.Marks(extras=kind.extras, epochs_axis=kind.epochs_axis, titles=figure.panel_titles(),
                               names=figure.names)
        return plotting.objective_curves(curves, stem, figure.label, kind.dpi, marks)
    return plotting.final_against_parameter(curves, stem, kind.parameter, kind.xlabel, figure.label, kind.dpi,
                                            kind.read_at)


@dataclass
class Drawn:
    """What :func:`draw_all` did for one figure."""

    figure: Figure
    files: list[Path]
    used: list[ExperimentResult]
    missing: list[str]
    caption: str = ""


def draw_all(results_root: str | Path = papers.PAPER_RESULTS, out: str | Path = "figures") -> list[Drawn]:
    """Draw every figure whose results exist, write the sections on the figures page and ``index.html``.

    Parameters
    ----------
    results_root : str or pathlib.Path
        Where the experiments' results are (see the module docstring).
    out : str or pathlib.Path
        Output folder.

    Returns
    -------
    list of Drawn
        One entry per figure of the papers, with the files written and the missing experiments.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return _draw_all(papers.results(results_root), out)  # SVG ids and dates fixed by plotting.save_figure


def _draw_all(results: Results, out: Path) -> list[Drawn]:
    """:func:`draw_all` on the papers' ``results``, writing to the folder ``out``."""
    drawn = []
    for fig in (fig for paper in papers.PAPERS for fig in paper.figures):
        used, missing = [], []
        for name in fig.experiments:
            res = results.get(name)
            if res is None and name in fig.substitutes:
                res = results.get(fig.substitutes[name])
                if res is not None:
                    missing.append(f"{name} (drawn: the substitute {fig.substitutes[name]})")
            if res is None:
                missing.append(name)
            else:
                used.append(res)
        files = draw(fig, used, out / fig.stem) if used else []
        drawn.append(Drawn(fig, files, used, missing, fig.caption(results)))
    pages = []
    for section in (section for paper in papers.PAPERS for section in paper.sections):
        if section.figures_page is not None:
            text = markdown.section_body(section, results) + "\n"
            atomic_write(out / f"{section.figures_page.stem}.md", text)
            pages.append((section.figures_page, text))
    write_html(drawn, pages, out / "index.html")
    return drawn


def _config_yaml(res: ExperimentResult) -> str:
    config = res.meta.get("config", {})
    resolved = res.meta.get("resolved", {}).get("problem", {})
    text = yaml.safe_dump(config, sort_keys=False, default_flow_style=None, width=100)
    return text + f"# resolved problem: {json.dumps(resolved)}\n"


def write_html(drawn: list[Drawn], pages: list[tuple[FiguresPage, str]], path: Path) -> None:
    """One self-contained page: every figure (PNG inlined as base64), the configs that made it,
    what is missing, then each section put on the figures page (its heading and its Markdown)."""
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>sbpbench: the papers' figures</title>",
             "<style>body{font-family:sans-serif;max-width:1300px;margin:auto}img{max-width:100%}"
             "pre{background:#f4f4f4;padding:6px;font-size:12px;overflow-x:auto}"
             "table{border-collapse:collapse}.caption{font-size:14px;color:#333}"
             "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}</style>",
             "</head><body><h1>sbpbench: the papers' figures</h1>",
             "<p>Drawn by <code>sbpbench figures</code> from the committed results (results/paper/).</p>"]
    for d in drawn:
        parts.append(f"<h2>{html.escape(d.figure.paper)}</h2><p>{html.escape(d.figure.title)}</p>")
        png = [f for f in d.files if f.suffix == ".png"]
        if png:
            data = base64.b64encode(png[0].read_bytes()).decode()
            alt = html.escape(f"{d.figure.paper}: {d.figure.title}", quote=True)
            parts.append(f"<img alt='{alt}' src='data:image/png;base64,{data}'>")
        if d.caption:
            parts.append(f"<p class='caption'><b>Where ours differs from the paper's figure:</b> "
                         f"{html.escape(d.caption)}</p>")
        if d.missing:
            parts.append("<p><b>Missing results:</b> " + html.escape(", ".join(d.missing)) + "</p>")
        for res in d.used:
            run = res.meta.get("run_id") or res.directory.name
            parts.append(f"<details><summary>config of {html.escape(res.name)} (run {html.escape(str(run))})"
                         f"</summary><pre>{html.escape(_config_yaml(res))}</pre></details>")
    for page, text in pages:
        parts.append(f"<h2>{html.escape(page.heading)}</h2>")
        parts.append(_markdown_to_html(text))
    parts.append("</body></html>")
    atomic_write(path, "\n".join(parts))


def _markdown_to_html(text: str) -> str:
    """Render the simple Markdown of :mod:`sbpbench.outputs.markdown`: tables, headings, paragraphs."""
    out: list[str] = []
    rows: list[list[str]] = []

    def flush() -> None:
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

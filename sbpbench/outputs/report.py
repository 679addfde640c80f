"""REPRODUCTION.md: every number the papers print next to what we measured (``sbpbench report``).

The document renders what the papers declare (:mod:`sbpbench.papers`): the machines and data
the results were made with, one row per experiment that reproduces a paper (its committed
results, or why there are none), then each paper's sections of printed numbers and claims,
with their verdicts. Our numbers are read from results (by default the committed
``results/paper/``), never typed in.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from pathlib import Path

import pandas as pd
import yaml

from sbpbench import papers
from sbpbench.files import atomic_write
from sbpbench.outputs import markdown
from sbpbench.papers.comparisons import ALPHA, TESTS, Evidence
from sbpbench.papers.declarations import CAUSE_WORDS, OUTCOMES, Cells, Claims, Kind, Posed, Results, Table

#: The kinds of verdict the coverage summary counts, in its order.
KINDS = ("match", "differ", "inconclusive", "not run")


def code_and_executor(record: dict) -> str:
    """Which code ran a run (or a resume's runs) and how: ``commit 1602a2bc, processes --jobs 2``.

    ``record`` is a meta.json or one of its ``resumes``. A commit with uncommitted changes is
    marked ``(dirty)``; what a record lacks (written before it was recorded) is said to be so. The
    sequential executor runs one run at a time, so it needs no ``--jobs``.
    """
    commit = record.get("git_commit")
    code = (f"commit {str(commit)[:8]}{' (dirty)' if record.get('git_dirty') else ''}" if commit
            else "commit not recorded")
    executor = record.get("executor")
    if executor is None:
        how = "executor not recorded"
    elif executor == "sequential":
        how = "sequential"
    else:
        jobs = record.get("jobs")
        how = f"{executor} --jobs {jobs}" if jobs is not None else f"{executor}, --jobs not recorded"
    return f"{code}, {how}"


def _provenance(meta: dict) -> str:
    """When and by which code an experiment's runs were made, its resumes and redos included."""
    text = f"{meta.get('started', '?')}, {code_and_executor(meta)}"
    for resume in meta.get("resumes") or []:
        text += (f"; resumed {resume.get('time', '?')}, {resume.get('redone', '?')} run(s) redone: "
                 f"{code_and_executor(resume)}")
    for redo in meta.get("redos") or []:  # scripts/redo_runs.py
        text += (f"; {', '.join(redo.get('solvers') or ['?'])} redone {redo.get('started', '?')}: "
                 f"{code_and_executor(redo)}")
    return text


def _machines(results: Results) -> list[str]:
    """One line per machine (host, platform, CPUs) that made results, naming them and their code."""
    seen: dict[tuple[object, ...], list[str]] = {}
    for folder in sorted(results.root.iterdir()) if results.root.is_dir() else []:
        res = results.get(folder.name)
        if res is None:
            continue
        h = res.meta.get("host", {})
        key = (h.get("hostname"), h.get("platform"), h.get("cpu_count"), h.get("processor"))
        seen.setdefault(key, []).append(f"{res.name} ({_provenance(res.meta)})")
    return [f"host {k[0]}, {k[1]}, {k[2]} CPUs{', ' + str(k[3]) if k[3] else ''}: " + "; ".join(v)
            for k, v in seen.items()]


def data_files(name: str | None) -> str:
    """The files a registered dataset is built from, with their expected checksums (its version)."""
    from sbpbench.data import REGISTRY

    source = REGISTRY.get(name or "")
    if source is None:
        return "bundled or given by path"
    parts = []
    for remote in source.files.values():
        digest = next(iter(remote.digests), None)
        parts.append(f"{remote.name} ({digest.algo}{' of content' if digest.content else ''} "
                     f"{digest.hexdigest[:12]}...)" if digest else f"{remote.name} (trusted on first download)")
    return ", ".join(parts)


def _data_versions(results: Results) -> list[str]:
    """One line per experiment with results: its data set, sizes and files."""
    lines = []
    for folder in sorted(results.root.iterdir()) if results.root.is_dir() else []:
        res = results.get(folder.name)
        if res is None:
            continue
        d = res.meta["resolved"]["dataset"]
        name = d.get("name") or Path(str(d.get("path"))).name
        lines.append(f"- {res.name}: {name}, {d.get('n_train')} training / {d.get('n_test')} test rows, "
                     f"{d.get('n_features')} features; files: {data_files(d.get('name'))}")
    return lines


def experiment_rows(results: Results) -> list[Cells]:
    """One row per experiment that reproduces a paper: its committed results, or why there are none."""
    rows: list[Cells] = []
    for name in papers.experiments():
        path = papers.CONFIGS / f"{name}.yaml"
        config = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}
        res = results.get(name)
        if res is None:
            rows.append((name, config.get("description", ""), "-", results.why_missing(name)))
            continue
        ran = res.meta.get("config") or {}
        changed = sorted(k for k in set(ran) | set(config) if ran.get(k) != config.get(k))
        overrides = f" (run with overrides of {', '.join(changed)}: see its meta.json)" if changed else ""
        text, complete = _runs_text(name, res.curves, int(ran.get("runs", 1)), res.meta.get("runs_once", []))
        rows.append((name, config.get("description", ""),
                     f"run {res.meta.get('run_id', res.directory.name)}: {text}{overrides}",
                     "run" if complete else "run in part"))
    return rows


def _runs_text(exp: str, curves: pd.DataFrame, planned: int, once: Collection[str] = ()) -> tuple[str, bool]:
    """How many runs each solver's curve averages, which runs are another experiment's
    (:data:`sbpbench.papers.SHARED_RUNS`), and, when some planned runs are missing, the
    commands that complete them. Returns the text and whether every planned run is there
    (``planned`` of each solver, one of those ``once`` names: ``meta.json``'s ``runs_once``)."""
    runs = curves.groupby("solver", sort=False)["run"].nunique()
    if runs.min() == runs.max():
        text = f"{len(runs)} solver(s), {int(runs.max())} run(s) each"
    else:
        text = "runs per solver: " + ", ".join(f"{s} {n}" for s, n in runs.items())
    if exp in papers.SHARED_RUNS:
        source, solver = papers.SHARED_RUNS[exp]
        text += f"; the {solver} runs are {source}'s (the same runs)"
    complete = all(n >= (1 if solver in once else planned) for solver, n in runs.items())
    if not complete:
        folder = f"results/paper/{exp}"
        text += (f"; {planned} planned: complete them with `sbpbench run configs/{exp}.yaml --jobs 2 "
                 f"--resume-from {folder}`, then `python scripts/promote_results.py {folder}`")
    return text, complete


def _claim_outcomes() -> dict[str, str]:
    """Every declared claim's two outcome words, as the kind of verdict they are."""
    kinds: dict[str, str] = {}
    for paper in papers.PAPERS:
        for section in paper.sections:
            for source in section.tables:
                if isinstance(source, Claims):
                    for group in source.groups:
                        if isinstance(group, Posed):
                            supports, contradicts = group.outcomes or OUTCOMES[group.kind]
                            kinds.setdefault(supports, "match")
                            kinds.setdefault(contradicts, "differ")
    return kinds


def verdict_kind(verdict: str, outcomes: dict[str, str]) -> str:
    """Which of :data:`KINDS` a verdict is (``outcomes``: the claims' own words, see :func:`_claim_outcomes`).

    Raises
    ------
    ValueError
        For a verdict of none of the kinds (a new wording must be taught here).
    """
    text = verdict.strip()
    for start, kind in (("not run", "not run"), ("not derived here", "not run"), ("inconclusive", "inconclusive"),
                        ("matches", "match"),
                        ("differs", "differ"), ("error matches", "match"), ("error differs", "differ"),
                        ("did not hold", "differ"), ("held", "match"), *outcomes.items()):
        if text.startswith(start):
            return kind
    raise ValueError(f"verdict of unknown kind: {verdict!r}")


#: The kinds of row the coverage summary counts apart (:data:`~sbpbench.papers.declarations.Kind`), in its
#: order, each with its line's opening and the words for its verdicts that match and that differ.
ROW_KINDS: tuple[tuple[Kind, str, str, str], ...] = (
    ("number", "Numbers the papers print, measured by our runs", "match", "differ"),
    ("claim", "Claims of the papers", "held", "did not hold"),
    ("check", "Checks of ours that the papers do not claim", "held", "did not hold"),
    ("setting", "Settings (a configuration or data size equals the paper's; not a verdict on an outcome)",
     "equal the paper's", "differ"),
)


def _declared_rows(results: Results) -> Iterator[tuple[Kind, Cells, Evidence | None]]:
    """Every row the papers declare on ``results``, with its declared kind and its evidence.

    Raises
    ------
    ValueError
        When a table's rows are not the rows its kinds declare (a table source out of step).
    """
    for paper in papers.PAPERS:
        for section in paper.sections:
            for source in section.tables:
                table = results.table(source)
                rows, kinds = table.rows, source.kinds()
                evidence = table.evidence or [None] * len(rows)
                if len(rows) != len(kinds):
                    raise ValueError(f"{section.heading!r}: {len(rows)} rows but {len(kinds)} declared kinds")
                yield from zip(kinds, rows, evidence, strict=True)


def coverage_counts(results: Results) -> tuple[dict[Kind, dict[str, int]], dict[Kind, list[Evidence]]]:
    """How many rows of each kind the papers declare, by the kind of their verdict on ``results``,
    and, per kind, the evidence of the inconclusive rows a comparison made (their runs needed).

    A row's kind is declared with it (:meth:`~sbpbench.papers.declarations.TableSource.kinds`), so
    the totals per kind depend on the declarations alone, never on the results present; a row's
    verdict is what its last cell says (:func:`verdict_kind`), never its comparison's outcome, since
    a row may declare the words of its outcomes the other way round (the check against issvm "did
    not hold" where its comparison supports issvm).
    """
    outcomes = _claim_outcomes()
    counts: dict[Kind, dict[str, int]] = {kind: dict.fromkeys(KINDS, 0) for kind, *_ in ROW_KINDS}
    open_rows: dict[Kind, list[Evidence]] = {kind: [] for kind, *_ in ROW_KINDS}
    for kind, row, found in _declared_rows(results):
        verdict = verdict_kind(row[-1], outcomes)
        counts[kind][verdict] += 1
        if verdict == "inconclusive" and found is not None:
            open_rows[kind].append(found)
    return counts, open_rows


#: A row's cause, as its verdict names it: ``cause: <one of CAUSES>``.
CAUSE = re.compile(r"cause: (" + "|".join(map(re.escape, CAUSE_WORDS)) + r")\b")


def cause_counts(results: Results) -> dict[Kind, dict[str, int]]:
    """Per kind of row, the rows whose verdict differs (or did not hold) by the cause their verdict
    names (``cause: ...``, :data:`CAUSE`), ``none stated`` for those that name none."""
    outcomes = _claim_outcomes()
    found: dict[Kind, dict[str, int]] = {kind: {} for kind, *_ in ROW_KINDS}
    for kind, row, _ in _declared_rows(results):
        if verdict_kind(row[-1], outcomes) == "differ":
            named = CAUSE.search(row[-1])
            cause = named.group(1) if named else "none stated"
            found[kind][cause] = found[kind].get(cause, 0) + 1
    return found


def _runs_needed(open_rows: list[Evidence], inconclusive: int) -> str:
    """What would decide the ``inconclusive`` rows: the runs needed of those a comparison made
    (``open_rows``), added up, and how many more of the same runs would not decide."""
    if not inconclusive:
        return ""
    counted = [e.runs_needed for e in open_rows if e.runs_needed is not None]
    parts = []
    if counted:
        parts.append(f"{len(counted)} would be decided by more runs of the same kind, about {sum(counted)} runs per "
                     f"solver in all (at most {max(counted)} for one row)")
    if len(counted) < len(open_rows):
        parts.append(f"{len(open_rows) - len(counted)} would not (no spread measured, no difference observed, "
                     "or censored runs: they need other runs, each row says)")
    return " (of the inconclusive rows: " + "; ".join(parts) + ")"


def coverage(results: Results) -> str:
    """The coverage summary: the rows of each kind (:data:`ROW_KINDS`) the papers declare, their
    verdicts, the causes the rows that differ name (:func:`cause_counts`), and the runs that
    would decide the inconclusive ones."""
    counts, open_rows = coverage_counts(results)
    causes = cause_counts(results)
    lines = []
    for kind, what, yes, no in ROW_KINDS:
        c = counts[kind]
        present = sum(c.values()) - c["not run"]
        by_cause = ", ".join(f"{n} {cause}" for cause, n in sorted(causes[kind].items(), key=lambda item: -item[1]))
        lines.append(f"- {what}: {sum(c.values())} rows, {present} measured here: {c['match']} {yes}, "
                     f"{c['differ']} {no}{f' (cause: {by_cause})' if by_cause else ''}, "
                     f"{c['inconclusive']} inconclusive"
                     f"{_runs_needed(open_rows[kind], c['inconclusive'])}; "
                     f"{c['not run']} not run or not measured here (each says why)")
    return "\n".join(lines)


def tests_used() -> str:
    """The preamble's paragraph: the significance level, stated once, and the tests the comparisons use."""
    return (f"Statistics: one significance level for the whole report, alpha = {ALPHA:g}; every interval is a "
            f"{1 - 2 * ALPHA:.0%} interval, each of its ends a one-sided test at alpha "
            "(`sbpbench/papers/comparisons.py`). Tests: "
            + "; ".join(f"*{name}*: {what}" for name, what in TESTS.items())
            + ". An inconclusive verdict says how many runs per solver would decide it at the observed spread.")


def figure_captions(results: Results) -> str:
    """One item per figure of the papers: where it is drawn, what it shows, and where ours differs
    from the paper's (:meth:`~sbpbench.papers.declarations.Figure.caption`)."""
    return "\n".join(f"- **{fig.paper}** (`figures/{fig.stem}.png`): {fig.title}. {fig.caption(results)}".rstrip()
                     for paper in papers.PAPERS for fig in paper.figures)


def build(root: str | Path = papers.PAPER_RESULTS) -> str:
    """The text of REPRODUCTION.md from the results under ``root``."""
    return render(papers.results(root))


def render(results: Results) -> str:
    """The text of REPRODUCTION.md from ``results``, whose tables are made once and kept there for
    other readers (:meth:`~sbpbench.papers.declarations.Results.table`)."""
    rules = "; ".join(rule for paper in papers.PAPERS for rule in paper.verdict_rules)
    blocks = [
        "# Reproduction of the papers' numbers",
        f"Written by `sbpbench report` from the results in `{results.root}/`; every "
        "number under 'measured here' is read from those results (meta.json, curves.csv), the papers' numbers "
        "from the declarations in `sbpbench/papers/` (one module per paper). Figures: `figures/index.html` "
        "(`sbpbench figures`).",
        "Verdicts: *matches*; *differs* (with why); *held* or *did not hold* (a claim); *inconclusive (n runs; "
        "about m runs per solver would decide it)* (the runs' interval supports neither verdict); *not run yet* "
        "(configured, left for a longer run); *not run here* (with why). A verdict a comparison made shows its "
        "evidence under 'measured here': the statistic, its interval and the runs." + (f" {rules}." if rules else "")
        + " Seconds are never a verdict against a paper's (different machines).",
        tests_used(),
        "## Coverage",
        coverage(results),
        "## Machine and software",
        "\n".join(f"- {m}" for m in _machines(results)),
        "## Data",
        papers.DATA,
        "\n".join(_data_versions(results)),
        "## Experiments",
        markdown.table(Table(("config", "experiment", "committed results", "status"), experiment_rows(results))),
        "## Figures: where ours differ from the papers'",
        figure_captions(results),
        *(markdown.section(section, results) for paper in papers.PAPERS for section in paper.sections),
    ]
    return "\n\n".join(block for block in blocks if block) + "\n"


def write(root: str | Path = papers.PAPER_RESULTS, out: str | Path = "REPRODUCTION.md") -> Path:
    """Write :func:`build`'s text to ``out``."""
    out = Path(out)
    atomic_write(out, build(root))
    return out

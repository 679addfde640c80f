"""What a paper declares: its figures, printed numbers and claims, and the experiments that reproduce it.

A paper module (:mod:`sbpbench.papers.sbp`, ...) declares one :class:`Paper` out of these types,
as data. ``sbpbench report`` and ``sbpbench figures`` (:mod:`sbpbench.outputs`) only render what
the papers declare. A printed number or a claim is a :class:`Posed` row: one comparison of
:mod:`sbpbench.papers.comparisons`, posed on the runs by a question of
:mod:`sbpbench.papers.questions`, whose evidence the row shows; its kind is a field.
A setting (a configuration value or a data size as run) is a :class:`Posed` row too, its
comparison an exact one (:class:`~sbpbench.papers.questions.Equal`). A verdict is one of:
``matches``; ``differs`` (and why); ``held`` or ``did not hold`` (a claim), or
``inconclusive (n runs; ...)`` when the runs support neither, with the runs that would decide;
``not run yet`` (configured, too long for the machine the committed results were made on) or
``not run here`` (and why: usually data that cannot be obtained offline).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from sbpbench.papers.comparisons import Evidence, Outcome
from sbpbench.papers.questions import Question, read_analysis
from sbpbench.results.curves import ReadAt
from sbpbench.results.lookup import ExperimentResult, find_experiment

# ----------------------------------------------------------------------------- missing results


@dataclass(frozen=True)
class NotRun:
    """Why an experiment's results may be missing: the verdict printed in their place.

    ``text`` may name the experiment as ``{experiment}``.
    """

    text: str

    def verdict(self, experiment: str) -> str:
        """The reason, for ``experiment``."""
        return self.text.replace("{experiment}", experiment)


#: The reason for any experiment not declared otherwise.
NO_RESULTS = NotRun("not run here: no committed results")


def not_run_yet(why: str) -> NotRun:
    """Configured, but not run on the machine the committed results were made on, because ``why``."""
    return NotRun(f"not run yet: configured (configs/{{experiment}}.yaml); {why}")


def needs_download(data: str) -> NotRun:
    """Not run: the data ``data`` cannot be downloaded where the committed results were made."""
    return NotRun(f"not run here: needs the {data} download (not available offline)")


#: Experiments on full Adult: minutes to hours each on the shared 2-core machine.
TOO_LONG = not_run_yet("too long for the shared 2-core machine, left for a longer run")


class Results:
    """The results of experiments under one root, each read once, and why some are missing.

    Parameters
    ----------
    root : str or pathlib.Path
        A results tree (``results/paper``; see :func:`sbpbench.results.lookup.find_experiment`).
    shared : Mapping
        Runs experiments take from others, ``{experiment: (source, solver)}``.
    not_run : Mapping
        Why each declared experiment's results may be missing; others get :data:`NO_RESULTS`.
    """

    def __init__(self, root: str | Path, shared: Mapping[str, tuple[str, str]],
                 not_run: Mapping[str, NotRun]) -> None:
        self.root = Path(root)
        self.shared = dict(shared)
        self.not_run = not_run
        self._read: dict[str, ExperimentResult | None] = {}
        self._tables: dict[int, tuple[TableSource, Table]] = {}

    def get(self, experiment: str) -> ExperimentResult | None:
        """The results of ``experiment`` (None when it has none)."""
        if experiment not in self._read:
            self._read[experiment] = find_experiment(self.root, experiment, self.shared)
        return self._read[experiment]

    def table(self, source: TableSource) -> Table:
        """``source``'s table on these results, made once (the report's coverage and its sections
        read the same tables)."""
        key = id(source)
        if key not in self._tables:
            self._tables[key] = (source, source.table(self))  # the source is kept, so its id stays its own
        return self._tables[key][1]

    def first(self, experiments: Iterable[str]) -> ExperimentResult | None:
        """The results of the first of ``experiments`` that has some."""
        return next((res for res in map(self.get, experiments) if res is not None), None)

    def why_missing(self, experiment: str) -> str:
        """The verdict printed in place of ``experiment``'s missing results."""
        return self.not_run.get(experiment, NO_RESULTS).verdict(experiment)


# ----------------------------------------------------------------------------- printed numbers and claims

#: One row of a table, cell by cell.
Cells = tuple[str, ...]

#: What a row of a paper's tables is, for the coverage summary: ``setting`` (a configuration or data
#: size equals the paper's: not a verdict on an outcome), ``number`` (a number measured by a run),
#: ``claim`` (a claim of the paper) or ``check`` (a claim checked where the paper does not make it).
Kind = Literal["setting", "number", "claim", "check"]


#: A row and the evidence of its verdict (None: a verdict no comparison made, or none).
Decided = tuple[Cells, Evidence | None]


@dataclass
class Table:
    """A table as the outputs print it: column headers and rows of text.

    ``heading`` (a sub-heading) and ``note`` (a line) go above it when given; ``evidence``: per
    row, the comparison that made its verdict (None where none did), for the coverage summary.
    """

    headers: Cells
    rows: list[Cells]
    heading: str = ""
    note: str = ""
    evidence: list[Evidence | None] = field(default_factory=list)

    @classmethod
    def of(cls, headers: Cells, decided: list[Decided], heading: str = "", note: str = "") -> Table:
        """A table of rows with their evidence."""
        return cls(headers, [row for row, _ in decided], heading, note, [ev for _, ev in decided])


class TableSource(Protocol):
    """Anything that makes a :class:`Table` from results, and says what its rows are."""

    def table(self, results: Results) -> Table:
        """The table, with our numbers and the verdicts."""
        ...

    def kinds(self) -> tuple[Kind, ...]:
        """The :data:`Kind` of each row of :meth:`table`, in order, from the declarations alone:
        the same rows whatever results are present."""
        ...


@dataclass(frozen=True)
class NotReproduced:
    """A number (or setting, or claim: ``kind``) a paper prints that no experiment here can reproduce, and why."""

    what: str
    paper: str
    why: str
    kind: Kind = "number"

    def row(self, results: Results) -> Cells:
        """The row: what, the paper's number, no number of ours, why."""
        return self.what, self.paper, "-", self.why

    def decided(self, results: Results) -> list[Decided]:
        """The row, with no evidence."""
        return [(self.row(results), None)]


#: The verdict words of a posed row when its comparison supports it and when it contradicts it, by kind.
OUTCOMES: dict[Kind, tuple[str, str]] = {"number": ("matches", "differs"), "setting": ("matches", "differs"),
                                         "claim": ("held", "did not hold"), "check": ("held", "did not hold")}


#: The words a difference's cause is named in: the verdict reads ``differs: cause: <word>`` (or
#: ``did not hold: cause: <word>``). ``data``: our copy of the data differs; ``setup``: a parameter
#: or protocol differs; ``implementation``: ours differs from the reference code, shown side by
#: side; ``the paper's procedure``: the reference programs (or the paper's own numbers) agree with
#: us, so the printed value came from how the paper ran or wrote it; ``not established``: what was
#: tried did not find it.
CAUSE_WORDS = ("data", "setup", "implementation", "the paper's procedure", "not established")


@dataclass(frozen=True)
class Cause:
    """Where the cause of a row's difference is recorded: row ``row`` of the JSON file ``record``
    (relative to the results root) that ``scripts/<script>`` writes, ``{"rows": {row: {"cause":
    <a word of CAUSE_WORDS>, "evidence": <text>}}}``."""

    record: str
    row: str
    script: str

    def named(self, res: ExperimentResult) -> tuple[str, str]:
        """The cause (a word of :data:`CAUSE_WORDS`) and its evidence, quoting the record, read beside
        ``res``'s folder; ``not established`` where the record or its row is missing.

        Raises
        ------
        UserError
            The record names a cause outside :data:`CAUSE_WORDS` or is not the script's output.
        """
        def read(found: Any) -> tuple[str, str] | None:
            record = found["rows"].get(self.row)
            if record is None:
                return None
            if record["cause"] not in CAUSE_WORDS:
                raise ValueError(f"row {self.row}: cause {record['cause']!r}, expected one of {', '.join(CAUSE_WORDS)}")
            return str(record["cause"]), f"scripts/{self.script} ({self.record}): {record['evidence']}"
        found = read_analysis(res, self.record, self.script, read)
        return found or ("not established", f"no record of the row in {self.record}: run scripts/{self.script}")


@dataclass(frozen=True)
class Posed:
    """A printed number or a claim posed as one comparison (:mod:`sbpbench.papers.questions`) on
    the runs of an experiment: one row, as data.

    Parameters
    ----------
    what : str
        The number or claim (the row's first cell).
    where : str
        Where it is in the paper.
    paper : str
        What the paper prints or says.
    question : Question
        The comparison that decides it.
    experiments : tuple of str
        Where it is read: the first of these that has results (runs made for the question,
        e.g. uncensored speed runs, go first; the committed runs of the table after).
    kind : Kind
        ``number``, ``claim`` or ``check`` (a claim the paper does not make here).
    also : tuple of str
        Other experiments the question reads (the same data at another setting), after the
        experiment's own: readers name them by their position.
    outcomes : tuple of str
        The verdict when the comparison supports it and when it contradicts it (default: by kind,
        :data:`OUTCOMES`); inconclusive verdicts say how many runs would decide.
    cause : Cause, optional
        Where the cause of a contradicting verdict is recorded: the verdict then reads
        ``<contradicting verdict>: cause: <word>`` and the measured cell quotes the evidence.
    cause_on : Outcome
        The outcome whose verdict ``cause`` explains: ``contradicts`` (default), or ``supports``
        for a row whose outcome words are reversed (its supported verdict is the one that does
        not hold, as a check that ours is no slower, posed as "the other program is first").
    """

    what: str
    where: str
    paper: str
    question: Question
    experiments: tuple[str, ...]
    kind: Kind = "claim"
    also: tuple[str, ...] = ()
    outcomes: tuple[str, str] | None = None
    cause: Cause | None = None
    cause_on: Outcome = "contradicts"

    def found(self, results: Results) -> list[ExperimentResult] | str:
        """What the question reads: the first of ``experiments`` with results, then those of
        ``also``; or, where one is missing or lacks a solver of the question, why (the verdict)."""
        res = results.first(self.experiments)
        if res is None:
            return results.why_missing(self.experiments[0])
        others = [results.get(name) for name in self.also]
        missing = [name for name, other in zip(self.also, others, strict=True) if other is None]
        present = set(res.curves["solver_name"].unique())
        lacking = [name for name in self.question.solvers() if name not in present]
        if missing or lacking:
            return (results.why_missing(missing[0]) if missing
                    else f"not run here: {', '.join(lacking)} not in {res.name}'s results")
        return [res, *(other for other in others if other is not None)]

    def decided(self, results: Results) -> list[Decided]:
        """The row (what, the paper's word, what was measured, the verdict) and its evidence."""
        found = self.found(results)
        if isinstance(found, str):
            return [((self.what, self.paper, "-", found), None)]
        res = found[0]
        evidence, measured = self.question.decide(found)
        words = self.outcomes or OUTCOMES[self.kind]
        verdict = (words[0] if evidence.outcome == "supports" else words[1] if evidence.outcome == "contradicts"
                   else evidence.needed())
        measured = f"{measured} ({res.name})"
        if self.cause is not None and evidence.outcome == self.cause_on:
            cause, why = self.cause.named(res)
            measured, verdict = f"{measured}; {why}", f"{verdict}: cause: {cause}"
        return [((self.what, self.paper, measured, verdict), evidence)]

    def kinds(self) -> tuple[Kind, ...]:
        """Its one row's kind."""
        return (self.kind,)


def settings(*rows: NotReproduced | Posed) -> tuple[NotReproduced | Posed, ...]:
    """``rows`` declared as settings (kind ``setting``): each says that a configuration or a data
    size equals the paper's, which is not a verdict on an outcome."""
    return tuple(replace(row, kind="setting") for row in rows)


@dataclass(frozen=True)
class Numbers:
    """A table of printed numbers next to ours."""

    rows: tuple[NotReproduced | Posed, ...]

    def table(self, results: Results) -> Table:
        """One row per printed number."""
        return Table.of(("what", "paper", "measured here", "verdict"),
                        [d for r in self.rows for d in r.decided(results)])

    def kinds(self) -> tuple[Kind, ...]:
        """Each row's declared kind."""
        return tuple(r.kind for r in self.rows)


@dataclass(frozen=True)
class NotChecked:
    """A claim of a paper that no experiment here can check, and why: a row of :class:`Claims`."""

    what: str
    why: str
    paper: str = "yes"
    kind: Kind = "claim"

    def rows(self, results: Results) -> list[Cells]:
        """The row: the claim, the paper's word, nothing measured, why."""
        return [(self.what, self.paper, "-", self.why)]

    def decided(self, results: Results) -> list[Decided]:
        """The row, with no evidence."""
        return [(row, None) for row in self.rows(results)]

    def kinds(self) -> tuple[Kind, ...]:
        """One claim (or check)."""
        return (self.kind,)


@dataclass(frozen=True)
class Claims:
    """A table of claims with their verdicts."""

    groups: tuple[NotChecked | Posed, ...]

    def table(self, results: Results) -> Table:
        """The rows of every group, in order."""
        return Table.of(("claim", "paper", "measured here", "verdict"),
                        [d for group in self.groups for d in group.decided(results)])

    def kinds(self) -> tuple[Kind, ...]:
        """The kinds of every group's rows, in order."""
        return tuple(kind for group in self.groups for kind in group.kinds())


@dataclass(frozen=True)
class FiguresPage:
    """Where a section also goes with the figures: ``<stem>.md`` and a part of ``index.html``."""

    stem: str
    heading: str


@dataclass(frozen=True)
class Section:
    """A section of REPRODUCTION.md: a heading naming where in the paper, a paragraph, tables;
    ``figures``: the stems of the figures (``figures/<stem>.png``) its claims are judged on, shown
    in the section above its tables."""

    heading: str
    tables: tuple[TableSource, ...]
    intro: str = ""
    figures_page: FiguresPage | None = None
    figures: tuple[str, ...] = ()


# ----------------------------------------------------------------------------- figures


@dataclass(frozen=True)
class ErrorCurves:
    """Test error (linear axis) against a cost (log axis): one panel per experiment, one line
    per solver, the mean over runs with a band of one standard error where two runs or more cover.

    ``cost``: kernel evaluations, or d-dimensional inner products (kernel evaluations of kernel
    solvers, ``inner_products`` of random Fourier features). ``zoom``: the full panels' error
    axis runs from 0 to just above the constant classifier's error or the highest of the solvers'
    starts, and a second row of panels zooms on where they end (every line's lowest point and the
    last quarter of each: :func:`~sbpbench.outputs.plotting.zoom_range`). ``fit_label``: ``(column,
    format)`` labelling the first and last point of a solver whose checkpoints are fits.
    """

    cost: Literal["kernel_evals", "inner_products"] = "kernel_evals"
    zoom: bool = False
    dpi: int = 130
    fit_label: tuple[str, str] | None = None


@dataclass(frozen=True)
class ObjectiveCurves:
    """Primal objective against iterations (log-log): one panel per experiment, one line per
    solver, the mean over runs with a band of one standard error, and, in the panels of the
    experiments in ``test_loss``, the mean test hinge loss dashed in the same colour where the
    runs measured it (a paper's figure may show it in some panels only). ``extras``: solver
    labels the paper does not draw, drawn in grey and marked so in the legend; ``epochs_axis``:
    a second x axis on top in epochs of the data."""

    dpi: int = 130
    test_loss: tuple[str, ...] = ()
    extras: tuple[str, ...] = ()
    epochs_axis: bool = False


@dataclass(frozen=True)
class FinalAgainstParameter:
    """The primal objective against a solver parameter (log2 axis), mean and standard error over
    runs: one panel per group of solvers (a label's text up to its first comma), at the end of
    the runs, or, for a group in ``read_at``, at each of its values along the runs
    (:class:`~sbpbench.results.curves.ReadAt`, one line each)."""

    parameter: str
    xlabel: str
    dpi: int = 130
    read_at: Mapping[str, ReadAt] = field(default_factory=dict)


#: The kinds of drawing a figure can be.
Drawing = ErrorCurves | ObjectiveCurves | FinalAgainstParameter


def _no_notes(results: Results) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True)
class Figure:
    """One figure of a paper: the experiments it shows and how to draw them.

    Parameters
    ----------
    stem : str
        File name without suffix (``.png`` and ``.svg`` are written).
    paper : str
        Which figure of which paper (a heading on the figures page).
    title : str
        What it shows (under the heading).
    label : str
        The title drawn above its panels.
    experiments : tuple of str
        One panel (or set of panels) each, in order.
    drawing : Drawing
        The kind of drawing and its options.
    substitutes : Mapping
        ``{experiment: substitute}``: drawn in place of an experiment without results.
    differences : tuple of str
        Where our figure differs from the paper's, sentence by sentence (its caption on the
        figures page and in REPRODUCTION.md).
    notes : callable
        ``notes(results)``: more such sentences measured on the results (what the runs did not
        reach, and what it would take).
    titles : Mapping
        ``{experiment: title}``: each panel's title as the paper names it (a data set), and for
        its substitute that title marked so; by default the experiment and its data set.
    names : Mapping
        ``{solver label: name}``: the method names the paper's legends show, in place of our
        labels (``fourier[max_pairs=1024]``: Fourier features); by default the label.
    """

    stem: str
    paper: str
    title: str
    label: str
    experiments: tuple[str, ...]
    drawing: Drawing
    substitutes: Mapping[str, str] = field(default_factory=dict)
    differences: tuple[str, ...] = ()
    notes: Callable[[Results], tuple[str, ...]] = _no_notes
    titles: Mapping[str, str] = field(default_factory=dict)
    names: Mapping[str, str] = field(default_factory=dict)

    def panel_titles(self) -> dict[str, str]:
        """:attr:`titles`, and under the name of an experiment's substitute its title, marked as a substitute."""
        return {**{self.substitutes[e]: f"{t} (substitute: {self.substitutes[e]})" for e, t in self.titles.items()
                   if e in self.substitutes}, **self.titles}

    def caption(self, results: Results) -> str:
        """Where our figure differs from the paper's: the declared sentences, then the measured ones."""
        return " ".join((*self.differences, *self.notes(results)))


# ----------------------------------------------------------------------------- the paper


@dataclass(frozen=True)
class Paper:
    """One paper, as reproduced here.

    Parameters
    ----------
    key : str
        Short name; the configs that reproduce the paper are named ``<key>-*.yaml``.
    citation : str
        Authors, title, venue.
    experiments : Mapping
        The experiments (config names) that reproduce it, each with why its results may be missing.
    figures : tuple of Figure
        Its figures, in the order of the figures page.
    sections : tuple of Section
        Its sections of REPRODUCTION.md: printed numbers and claims.
    verdict_rules : tuple of str
        When its rows match, in words (for the head of REPRODUCTION.md).
    shared_runs : Mapping
        Runs an experiment takes from another instead of repeating them, ``{experiment:
        (source, solver)}`` (see :func:`sbpbench.results.lookup.find_experiment`).
    """

    key: str
    citation: str
    experiments: Mapping[str, NotRun]
    figures: tuple[Figure, ...] = ()
    sections: tuple[Section, ...] = ()
    verdict_rules: tuple[str, ...] = ()
    shared_runs: Mapping[str, tuple[str, str]] = field(default_factory=dict)

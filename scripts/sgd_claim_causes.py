"""Why claims of the SGD paper's Section 3 did not hold here: the hypotheses, tested claim by claim.

Usage: python scripts/sgd_claim_causes.py [--results results/paper] [--repeats 5]
       [--out results/paper/analyses/sgd-claim-causes.json]

Every claim of :data:`sbpbench.papers.sgd.CLAIMS` whose cause is recorded here (its ``Cause`` names
this script's record, :data:`sbpbench.papers.sgd.CLAIM_CAUSES_RECORD`) is decided on the committed
runs (``--results``) as the report decides it. For each one that contradicts, its contradicting
parts are tested one by one. A part of a ranking is a pair: ``fast`` claimed faster than ``slow``
by seconds to 1% relative accuracy (each run's first passage under 1%), or, where the claim says
"clearly", by a factor. Per pair:

1. **the paper's own table**: whether the seconds it prints for the pair (Tables 2-8, held in
   ``sgd.TABLES``) order it as we measure it, tie it at their printed precision, or (a factor)
   fall short of the factor. Then the text claims more than the paper's own numbers show here.
2. **seconds = epochs x seconds per epoch**: ours, each solver's median epochs to 1% and median
   seconds per epoch; the paper's, its printed T and seconds. The machine factor f is our seconds
   per epoch over the paper's, the median over the solvers whose T the paper prints; a solver whose
   T it does not print (the linear SVMs) is given the epochs its printed seconds imply at our
   seconds per epoch over f. From the paper's order of the pair to ours, four factors move it: each
   solver's epochs and seconds per epoch, ours over the paper's. The largest in the direction of
   the move names the solver that moved, and how: through its convergence (epochs) or through the
   cost of its epochs.
3. **the reference program**, where the solver that moved is OCAS or DCD: ``svmocas`` (libocas) at
   the paper's q = 1.01 J_opt and r = 0.01, ``liblinear-train -s 3`` at the paper's eps, against
   ours at the same setting on the same data file, in one session, interleaved (native, ours,
   native, ...), ``--repeats`` times, CPU seconds, medians: the epochs (iterations) each takes to
   its stop and its CPU seconds per epoch. The program's: its process's CPU less that of the same
   process stopping after its first iteration, per further iteration (DCD's per epoch at LIBLINEAR's
   default eps 0.1, as the paper's eps stops it after an iteration or two; ours likewise); ours: the
   solver alone in this process, after a run that loads its compiled code. Our seconds to 1% for
   that solver, times the program's cost at the paper's setting over ours, stand in for the program
   the paper ran.

Claims of Table 1's text on SGD-s and SGD-m stopped by their own bound at one eps ("SGD-m needs
more epochs"; "SGD-s ends closer to eps"): whether the paper's own T for the two at this setting
(one eps for both) has SGD-m needing more epochs, and at which whole epochs our runs' bounds reach
eps (the bound is checked at epoch ends: runs that all stop at one epoch cannot differ in epochs).

The cause, in the report's fixed words. A pair: ``the paper's procedure`` where the paper's own
table orders it as we do (1), or where the reference program, standing in for ours, leaves the pair
as we measure it (3: the program the paper ran orders it as we do); ``implementation`` where the
text's order returns with the reference program (3: ours is faster than it), or where the solver
that moved has neither a reference program nor a printed T and its epochs differ from those the
paper's seconds imply by more than :data:`SAME` (2: our solver converges unlike the paper's); else
``not established``. A claim of Table 1's text: ``the paper's procedure`` where the paper's own T
does not have SGD-m needing more epochs, else ``not established``. A claim: its parts' word where
they agree, else the first of :data:`PRECEDENCE` among them. The record (JSON, a readable ``.md``
beside it) holds every number; ``sbpbench report`` quotes the evidence in the claim's row. All of it
reads the committed runs but for the reference programs' runs and ours beside them (seconds each):
about a minute and a half on 2 cores.
"""

from __future__ import annotations

import argparse
import math
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from cause_records import cause_page, write_record
from sklearn.datasets import load_svmlight_file

from sbpbench.data.split import Split
from sbpbench.kernels import KernelSpec
from sbpbench.papers import SHARED_RUNS, sgd
from sbpbench.papers.declarations import CAUSE_WORDS, Posed, Results
from sbpbench.papers.questions import AllOf, Question, Rank, Ratio
from sbpbench.problem import Problem
from sbpbench.results.lookup import ExperimentResult
from sbpbench.results.store import environment
from sbpbench.solvers.base import Solver
from sbpbench.solvers.dcd import DCD, DCDParams
from sbpbench.solvers.ocas import OCAS, OCASParams

OUT = Path("results/paper") / sgd.CLAIM_CAUSES_RECORD
#: The raw LIBSVM files of the data sets, as the tests find them (``../shared/datasets``).
DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets"
FILES = {"adult": "adult/a9a", "w8a": "w8a/w8a"}
#: A factor within which two costs count as the same (our convention: the paper states none; its
#: seconds have one or two digits, and runs of one solver spread by more).
SAME = 1.5
#: A claim whose parts name different causes takes the first of these among them.
PRECEDENCE = ("not established", "implementation", "data", "setup", "the paper's procedure")
#: The reference programs, by our solver.
PROGRAMS = {"ocas": "svmocas", "dcd": "liblinear-train"}
#: LIBLINEAR's default eps, where DCD's seconds per epoch are measured (the paper's eps stops it at once).
PER_EPOCH_EPS = 0.1


@dataclass(frozen=True)
class Pair:
    """A part of a ranking claim: ``fast`` claimed faster than ``slow`` (seconds to 1%), by at
    least ``factor`` (None: the order alone)."""

    fast: str
    slow: str
    factor: float | None = None


@dataclass(frozen=True)
class Cost:
    """One solver's cost to 1%: ours (medians over the runs: ``seconds``, ``epochs``, seconds per
    epoch ``per_epoch``) and the paper's printed ``paper_seconds`` and T (``paper_epochs``, None
    where it prints none)."""

    solver: str
    seconds: float
    epochs: float
    per_epoch: float
    paper_seconds: float
    paper_epochs: float | None


def pair_of(part: Question) -> Pair | None:
    """The pair a part of a ranking compares (:func:`sbpbench.papers.sgd._ranking`): a
    :class:`Rank` of two solvers, or a :class:`Ratio` ``slow / fast`` against a factor; None for
    another question."""
    if isinstance(part, Rank) and isinstance(part.fast, sgd.AtStop) and isinstance(part.slow, sgd.AtStop):
        return Pair(part.fast.solver, part.slow.solver)
    if isinstance(part, Ratio) and len(part.groups) == 2:
        (slow, up), (fast, down) = part.groups
        if isinstance(slow, sgd.AtStop) and isinstance(fast, sgd.AtStop) and (up, down) == (1, -1):
            return Pair(fast.solver, slow.solver, part.threshold)
    return None


def table_verdict(pair: Pair, fast_s: float, slow_s: float) -> str | None:
    """How the paper's printed seconds (``fast_s`` for the solver claimed faster, ``slow_s``) order
    the pair as we measure it, in words; None where they agree with the text."""
    if pair.factor is not None:
        ratio = slow_s / fast_s
        return (None if ratio >= pair.factor else
                f"its own seconds give {pair.slow} / {pair.fast} = {slow_s:g} / {fast_s:g} = {ratio:.2g}, short of "
                f"{pair.factor:g}")
    if fast_s > slow_s:
        return f"it prints {pair.fast} {fast_s:g} s > {pair.slow} {slow_s:g} s"
    if fast_s == slow_s:
        return f"it prints {pair.fast} {fast_s:g} s = {pair.slow} {slow_s:g} s, a tie at its printed precision"
    return None


def machine_factor(costs: Sequence[Cost]) -> float:
    """Our seconds per epoch over the paper's (printed seconds over printed T), the median over the
    solvers whose T the paper prints (NaN without one)."""
    ratios = [c.per_epoch / (c.paper_seconds / c.paper_epochs) for c in costs if c.paper_epochs]
    return float(np.median(ratios)) if ratios else math.nan


def paper_epochs(cost: Cost, factor: float) -> tuple[float, bool]:
    """The paper's epochs for ``cost``'s solver: its printed T, or (second value True) those its
    printed seconds imply at our seconds per epoch over the machine ``factor``."""
    if cost.paper_epochs:
        return cost.paper_epochs, False
    return cost.paper_seconds * factor / cost.per_epoch, True


def decompose(fast: Cost, slow: Cost, factor: float) -> dict[str, Any]:
    """What moved the pair from the paper's order to ours: each solver's epochs and seconds per
    epoch, ours over the paper's (the latter in units of the machine ``factor``; 1 where the
    paper's epochs are implied), and the largest of the four in the direction that slows ``fast``
    against ``slow``: the solver that ``moved``, ``through`` its epochs or its seconds per epoch,
    by ``by`` (a factor, at least 1 where anything moved that way)."""
    out: dict[str, Any] = {"machine_factor": factor}
    moves: dict[tuple[str, str], float] = {}
    for cost, sign in ((fast, 1.0), (slow, -1.0)):
        epochs, implied = paper_epochs(cost, factor)
        per_epoch = cost.per_epoch / (factor * cost.paper_seconds / epochs)
        out[cost.solver] = {**asdict(cost), "paper_epochs_used": epochs, "implied": implied,
                            "epochs_ratio": cost.epochs / epochs, "per_epoch_ratio": per_epoch}
        moves[(cost.solver, "epochs")] = sign * math.log(cost.epochs / epochs)
        moves[(cost.solver, "seconds per epoch")] = sign * math.log(per_epoch)
    (moved, through), log_by = max(moves.items(), key=lambda item: item[1])
    return {**out, "moved": moved, "through": through, "by": math.exp(log_by)}


def order_stands(fast_seconds: float, slow_seconds: float, program_over_ours: float) -> bool:
    """Whether ``fast`` stays slower than ``slow`` when ``slow``'s seconds are scaled by the reference
    program's cost over ours (``program_over_ours``): the pair contradicts with the program too."""
    return fast_seconds >= slow_seconds * program_over_ours


def pair_cause(table: str | None, move: dict[str, Any] | None, native: dict[str, Any] | None) -> str:
    """The cause of one contradicted pair (a word of ``CAUSE_WORDS``): ``table`` how the paper's own
    seconds order it (:func:`table_verdict`), ``move`` what moved it (:func:`decompose`), ``native``
    the reference program's test of the solver that moved (``stands``: :func:`order_stands`)."""
    if table is not None:
        return "the paper's procedure"
    if native is not None:
        return "the paper's procedure" if native["stands"] else "implementation"
    if (move is not None and move["through"] == "epochs" and move[move["moved"]]["implied"]
            and move["by"] > SAME):
        return "implementation"
    return "not established"


def claim_cause(words: Sequence[str]) -> str:
    """A claim's cause from its contradicted parts' ``words``: theirs where they agree, else the
    first of :data:`PRECEDENCE` among them (``not established`` without any)."""
    return next((word for word in PRECEDENCE if word in words), "not established")


def bound_cause(printed_s: float | None, printed_m: float | None) -> str:
    """The cause of a contradicted claim of Table 1's text on SGD-s and SGD-m at one eps, from the
    paper's own T for SGD-s (``printed_s``) and SGD-m (``printed_m``): ``the paper's procedure``
    where its T does not have SGD-m needing more epochs, else ``not established``."""
    if printed_s is not None and printed_m is not None and printed_m <= printed_s:
        return "the paper's procedure"
    return "not established"


# ----------------------------------------------------------------------------- reading the runs

def cost(found: Sequence[ExperimentResult], key: str, dataset: str, solver: str) -> Cost | None:
    """``solver``'s cost to 1% in the runs the claim reads (``found``), beside the paper's (group
    ``key``, ``dataset``); None without runs or printed seconds."""
    group = sgd.TABLES[key]
    epochs, seconds = group.printed[dataset].get(solver, (None, None))
    t = sgd.AtStop(solver, passage=True, precision=group.precision).read(found).values
    e = sgd.AtStop(solver, "epoch", passage=True, precision=group.precision).read(found).values
    if seconds is None or not len(t):
        return None
    return Cost(solver, float(np.median(t)), float(np.median(e)), float(np.median(t / e)), float(seconds),
                None if epochs is None else float(epochs))


def claims() -> list[Posed]:
    """The claims whose cause this script records."""
    return [c for c in sgd.CLAIMS.groups
            if isinstance(c, Posed) and c.cause is not None and c.cause.record == sgd.CLAIM_CAUSES_RECORD]


def parts(question: Question) -> tuple[Question, ...]:
    """The parts of a claim's question (itself when it has none)."""
    return question.parts if isinstance(question, AllOf) else (question,)


# ----------------------------------------------------------------------------- the reference programs

@dataclass(frozen=True)
class Setting:
    """A reference program's test: ``solver`` (ocas, dcd) on ``dataset`` at ``C``, stopped at
    ``stop`` (OCAS: the paper's q, C form; DCD: the paper's eps)."""

    solver: str
    dataset: str
    C: float
    stop: float


def cpu_of(cmd: list[str]) -> tuple[float, str]:
    """Run ``cmd``: its CPU seconds (user and system, its own rusage) and its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"sgd_claim_causes.py: error: {Path(cmd[0]).name} exited {done.returncode}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, done.stdout


def iterations(solver: str, stdout: str) -> int:
    """The iterations a program reports: LIBLINEAR's ``#iter``, svmocas's last numbered line."""
    found = (re.findall(r"#iter = (\d+)", stdout) if solver == "dcd"
             else re.findall(r"^\s*(\d+): tim=", stdout, re.M))
    if not found:
        sys.exit(f"sgd_claim_causes.py: error: no iteration count in {PROGRAMS[solver]}'s output")
    return int(found[-1])


def native_cmd(program: str, setting: Setting, stop: float, data: Path, model: Path) -> list[str]:
    """The program's command line at ``stop`` (DCD: eps; OCAS: q, with r = 0.01), no bias."""
    if setting.solver == "dcd":
        return [program, "-s", "3", "-c", f"{setting.C:g}", "-e", f"{stop:g}", "-B", "-1", str(data), str(model)]
    return [program, "-c", f"{setting.C:g}", "-b", "0", "-q", f"{stop:.10g}", "-r", f"{sgd.OCAS_R:g}", "-v", "1",
            str(data), str(model)]


def our_run(problem: Problem, setting: Setting, stop: float, seed: int) -> tuple[float, int]:
    """Our solver at ``stop`` in this process: its CPU seconds and epochs (OCAS's iterations, DCD's passes)."""
    solver: Solver
    if setting.solver == "dcd":
        solver = DCD(problem, np.random.default_rng(seed), DCDParams(tol=stop))
    else:
        solver = OCAS(problem, np.random.default_rng(seed), OCASParams(objective_bound=stop, tol_rel=sgd.OCAS_R))
    start = time.process_time()
    while not solver.advance(solver.iteration + problem.n, math.inf, math.inf):
        pass
    seconds = time.process_time() - start
    return seconds, int(solver.passes if isinstance(solver, DCD) else solver.cutting_planes)


def measure(setting: Setting, program: str, repeats: int, work: Path) -> dict[str, Any]:
    """The reference program and ours at ``setting``, interleaved ``repeats`` times: medians of the
    epochs to the paper's stop and of the CPU seconds per epoch, and the program's cost at the
    paper's stop over ours (``program_over_ours``)."""
    data, source = work / f"{setting.dataset}.txt", DATA / FILES[setting.dataset]
    if not source.exists():
        sys.exit(f"sgd_claim_causes.py: error: {source}: expected the LIBSVM file of {setting.dataset}")
    if not data.exists():  # the programs refuse blank lines (w8a ends with one)
        lines = source.read_text(encoding="utf-8").splitlines()
        data.write_text("".join(line + "\n" for line in lines if line.strip()), encoding="utf-8")
    X, y = load_svmlight_file(str(data), n_features=int(sgd.TABLE1_PRINTED[setting.dataset][1]))
    X = X.tocsr()
    X.indices = X.indices.astype(np.int32)
    problem = Problem.build(Split(X, y), Split(X[:10], y[:10]), KernelSpec("linear", 1.0, 0.0),
                            1.0 / (setting.C * X.shape[0]), None, False)
    per_epoch_stop = PER_EPOCH_EPS if setting.solver == "dcd" else setting.stop
    at_once = 1e6 if setting.solver == "dcd" else 1e300  # stops after the first iteration
    model = work / "model.txt"
    our_run(problem, setting, setting.stop, 0)  # loads the compiled code
    found: dict[str, list[float]] = {k: [] for k in ("native_epochs", "native_per_epoch", "ours_epochs",
                                                      "ours_per_epoch")}
    for r in range(repeats):
        _, out = cpu_of(native_cmd(program, setting, setting.stop, data, model))
        found["native_epochs"].append(iterations(setting.solver, out))
        full, out = cpu_of(native_cmd(program, setting, per_epoch_stop, data, model))
        once, out_once = cpu_of(native_cmd(program, setting, at_once, data, model))
        more = iterations(setting.solver, out) - iterations(setting.solver, out_once)
        found["native_per_epoch"].append((full - once) / more if more > 0 else math.nan)
        found["ours_epochs"].append(our_run(problem, setting, setting.stop, r)[1])
        seconds, epochs = our_run(problem, setting, per_epoch_stop, r)
        found["ours_per_epoch"].append(seconds / epochs)
    medians = {k: float(np.nanmedian(v)) for k, v in found.items()}
    return {"program": " ".join(native_cmd(Path(program).name, setting, setting.stop, Path(FILES[setting.dataset]),
                                           Path("model"))),
            "per_epoch_at": f"{'eps' if setting.solver == 'dcd' else 'q'} {per_epoch_stop:.10g}",
            "repeats": repeats, **medians,
            "program_over_ours": (medians["native_epochs"] * medians["native_per_epoch"])
            / (medians["ours_epochs"] * medians["ours_per_epoch"])}


def native_setting(key: str, dataset: str, solver: str, table: ExperimentResult) -> Setting:
    """The paper's setting of ``solver`` (ocas, dcd) in group ``key`` on ``dataset``: DCD's eps, OCAS's
    q (the table's config: 1.01 J_opt, C form)."""
    group = sgd.TABLES[key]
    if solver == "dcd":
        return Setting(solver, dataset, float(group.C), group.eps[dataset]["dcd"])
    q = sgd._config_value(table, "ocas", "objective_bound")
    if q is None:
        sys.exit(f"sgd_claim_causes.py: error: {table.name}: expected an objective_bound for ocas in its config")
    return Setting(solver, dataset, float(group.C), q)


# ----------------------------------------------------------------------------- the claims

def pair_text(pair: Pair, fast: Cost, slow: Cost, table: str | None, move: dict[str, Any] | None,
              native: dict[str, Any] | None, word: str) -> str:
    """One pair's evidence, in words."""
    how = f"at least {pair.factor:g}x " if pair.factor is not None else ""
    head = (f"{pair.fast} {how}faster than {pair.slow}: ours (medians) {fast.seconds:.3g} s against "
            f"{slow.seconds:.3g} s, the paper's {fast.paper_seconds:g} s against {slow.paper_seconds:g} s")
    if table is not None:
        return f"{head}; the paper's own table orders it as we do ({table}): {word}"
    assert move is not None
    moved = move[move["moved"]]
    epochs = f"{moved['paper_epochs_used']:.3g}" + (" implied by its seconds at our cost of an epoch over f"
                                                     if moved["implied"] else " printed")
    text = (f"{head}; {move['moved']} moved, through its {move['through']} (x{move['by']:.2g}: epochs to 1% "
            f"{moved['epochs']:.3g} here against the paper's {epochs}; seconds per epoch {moved['per_epoch']:.3g} "
            f"here, machine factor f = {move['machine_factor']:.2g})")
    if native is not None:
        text += (f"; {native['program']} against ours on the same file ({native['repeats']} interleaved, CPU, "
                 f"medians): {native['native_epochs']:g} iterations against {native['ours_epochs']:g}, "
                 f"{native['native_per_epoch'] * 1e3:.3g} ms against {native['ours_per_epoch'] * 1e3:.3g} ms "
                 f"per epoch ({native['per_epoch_at']}): the program costs {native['program_over_ours']:.2f}x ours, "
                 f"so {pair.slow} would take {slow.seconds * native['program_over_ours']:.3g} s: the pair "
                 + ("still contradicts with the program the paper ran" if native["stands"]
                    else "returns to the text's order with the program the paper ran"))
    elif word == "implementation":
        text += (f"; {move['moved']} has no reference program here (sbpbench/solvers/{move['moved']}.py is ours) and "
                 f"converges in {moved['epochs_ratio']:.2g}x the epochs the paper's seconds imply")
    else:
        none = "" if move["moved"] in PROGRAMS else f", and {move['moved']} has no reference program here"
        text += f"; tried: the paper's own table, the split into epochs and seconds per epoch{none}"
    return f"{text}: {word}"


def ranking(key: str, dataset: str, found: Sequence[ExperimentResult], contradicted: list[Pair],
            programs: dict[str, str], repeats: int, work: Path, measured: dict[Setting, dict[str, Any]]
            ) -> tuple[list[dict[str, Any]], list[str]]:
    """Each contradicted pair of a ranking claim, tested (the reference programs' runs kept in
    ``measured`` for pairs that share a setting): its record, and its word."""
    group = sgd.TABLES[key]
    costs = {s: c for s in group.printed[dataset] if (c := cost(found, key, dataset, s)) is not None}
    factor = machine_factor(list(costs.values()))
    records, words = [], []
    for pair in contradicted:
        fast, slow = costs[pair.fast], costs[pair.slow]
        table = table_verdict(pair, fast.paper_seconds, slow.paper_seconds)
        move = native = None
        if table is None:
            move = decompose(fast, slow, factor)
            program = programs.get(move["moved"])
            if program is not None:
                setting = native_setting(key, dataset, move["moved"], found[-1])
                if setting not in measured:
                    print(f"  timing {program} against ours: {setting}", file=sys.stderr, flush=True)
                    measured[setting] = measure(setting, program, repeats, work)
                native = {**measured[setting], "stands": order_stands(fast.seconds, slow.seconds,
                                                                      measured[setting]["program_over_ours"])}
        word = pair_cause(table, move, native)
        records.append({"pair": asdict(pair), "table": table, "move": move, "native": native, "cause": word,
                        "evidence": pair_text(pair, fast, slow, table, move, native, word)})
        words.append(word)
    return records, words


def bound_claim(key: str, dataset: str, statement: str, found: Sequence[ExperimentResult]
                ) -> tuple[str, str, dict[str, Any]]:
    """A contradicted claim (``statement``) of Table 1's text on SGD-s and SGD-m at one eps: its cause,
    evidence, numbers."""
    printed = sgd.TABLES[key].printed[dataset]
    t_s, t_m = printed["sgd-s"][0], printed["sgd-m"][0]
    eps = sgd._eps(found[0])
    epochs = {s: sgd.AtOwnBound(s).read(found).values for s in ("sgd-s", "sgd-m")}
    at = {s: {f"{k:g}": int(v) for k, v in zip(*np.unique(e, return_counts=True), strict=True)}
          for s, e in epochs.items()}
    one = all(len(v) == 1 for v in at.values()) and at["sgd-s"].keys() == at["sgd-m"].keys()
    word = bound_cause(t_s, t_m)
    where = f"{sgd.TABLES[key].tables}, {sgd.DATASETS[dataset]}, C = {sgd.TABLES[key].C}"
    runs = "; ".join(f"{s}: " + ", ".join(f"{n} runs at epoch {k}" for k, n in v.items()) for s, v in at.items())
    derived = ("the paper derives it ('Thus') from SGD-m needing more epochs for its bound to reach eps; "
               if statement == sgd.CLOSER else "")
    text = (f"{derived}the paper's own {where} prints T = {t_s} for SGD-s and {t_m} for SGD-m at one eps "
            f"({eps:g}); ours, the epoch where each run's bound first reaches eps: {runs}"
            + (" (the bound is checked at whole epochs: runs that all stop at one epoch cannot differ in epochs, "
               "nor end apart through more epochs)" if one else ""))
    tail = (": the paper's own numbers do not show SGD-m needing more epochs here: its text claims more than they show"
            if word == "the paper's procedure" else ": tried the paper's own T and the epochs of our runs")
    return word, text + tail, {"printed": {"sgd-s": t_s, "sgd-m": t_m}, "eps": eps, "epochs": at, "one_epoch": one}


def analyse(posed: Posed, results: Results, programs: dict[str, str], repeats: int, work: Path,
            measured: dict[Setting, dict[str, Any]]) -> dict[str, Any] | None:
    """The record of one claim, or None where it does not contradict on the committed runs."""
    found = posed.found(results)
    if isinstance(found, str) or posed.question.decide(found)[0].outcome != "contradicts":
        return None
    assert posed.cause is not None
    key, dataset, statement = posed.cause.row.split("/", 2)
    record: dict[str, Any] = {"claim": posed.what, "experiment": found[0].name}
    contradicted = [p for p in parts(posed.question) if p.decide(found)[0].outcome == "contradicts"]
    pairs = [pair_of(p) for p in contradicted]
    if all(p is not None for p in pairs) and pairs:
        record["pairs"], words = ranking(key, dataset, found, [p for p in pairs if p is not None], programs,
                                         repeats, work, measured)
        record["cause"] = claim_cause(words)
        record["evidence"] = " | ".join(p["evidence"] for p in record["pairs"])
    else:
        record["cause"], record["evidence"], record["bound"] = bound_claim(key, dataset, statement, found)
    assert record["cause"] in CAUSE_WORDS
    return record


def markdown(found: dict[str, Any]) -> str:
    """The record as a page: one line per claim, its cause and evidence."""
    return cause_page("Why claims of the SGD paper did not hold here",
                      "Written by `scripts/sgd_claim_causes.py` (its docstring says how) from the committed runs and "
                      f"the reference programs' runs it makes ({found['programs']}). Every claim that did not hold is "
                      "tested; its cause is what REPRODUCTION.md names in its row.",
                      ((r["claim"], r["cause"], r["evidence"]) for r in found["rows"].values()), heading="claim")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results/paper"))
    parser.add_argument("--repeats", type=int, default=5, help="interleaved runs of each reference program and ours")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats}: expected at least 1")
    programs = {solver: path for solver, name in PROGRAMS.items() if (path := shutil.which(name))}
    results = Results(args.results, SHARED_RUNS, sgd.EXPERIMENTS)
    found: dict[str, Any] = {"script": "scripts/sgd_claim_causes.py", "environment": environment(), "same": SAME,
                             "programs": ", ".join(f"{s}: {p}" for s, p in programs.items()) or "none", "rows": {}}
    measured: dict[Setting, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for posed in claims():
            assert posed.cause is not None
            record = analyse(posed, results, programs, args.repeats, Path(tmp), measured)
            if record is not None:
                found["rows"][posed.cause.row] = record
                print(f"{posed.cause.row}: {record['cause']}", flush=True)
    write_record(args.out, found, markdown(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Fuzz: generated configs and LIBSVM files through ``sbpbench validate`` and ``sbpbench run``.

Whatever the input, the command must end in one of the documented ways and nothing else:

* exit 0 with a correct result (one run folder under ``--results``, every run finished, test
  errors in [0, 1]);
* exit 2 with one line ``sbpbench: error: ...`` (the last line on standard error, bounded in
  length) and no traceback;
* for ``run`` only, exit 3 when a run ended ``failed:`` or ``diverged`` (its folder says so);

and never a file written outside ``--results``. Inputs that the issue found to be accepted
wrongly (a ``0:`` index, NaN features, ``lambda: .nan``, ``name: ..`` ...) must end in exit 2.

Run folders are fuzzed too: a ``meta.json`` changed at the keys its readers use (``page`` and
``run --resume-from`` refuse it in one line or read it), and a ``curves.csv`` cut or with rows
dropped, repeated, swapped or replaced by garbage (``--resume`` must end with the uninterrupted
run's curves: a damaged run redone, never kept).

The generators are hypothesis strategies rather than hand-written ones: hypothesis composes
nested YAML values and file mutations from small pieces and, when a case fails, shrinks it
to a minimal one before reporting. ``derandomize=True`` makes every run of the suite try the
same cases (deterministic tests), and ``max_examples`` bounds the time (about a minute).
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sbpbench.data.sources.adult import bundled_bytes
from sbpbench.execution.executors import SequentialExecutor
from sbpbench.execution.sweep import run_experiments
from sbpbench.experiment import config
from sbpbench.results.store import read_curves, read_meta
from tests.cli_runner import invoke, one_error_line


def fuzz(max_examples: int) -> settings:
    """Deterministic, database-free hypothesis settings trying ``max_examples`` cases."""
    return settings(max_examples=max_examples, derandomize=True, database=None, deadline=None,
                    print_blob=False, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ----------------------------------------------------------------------------- real data

#: The first rows of the real Adult data (LIBSVM's a9a / a9a.t, bundled in the package).
TRAIN_LINES = bundled_bytes("a9a").splitlines()[:150]
TEST_LINES = bundled_bytes("a9a.t").splitlines()[:100]

BASE = {
    "name": "fuzz",
    "dataset": {"path": "train.svm", "test_path": "test.svm", "n_features": 123},
    "kernel": {"name": "gaussian", "sigma2": 10},
    "problem": {"lambda": "1/n", "nu": 0.05},
    "solvers": ["sbp", "pegasos"],
    "budget": {"epochs": 1, "seconds": 2},
    "checkpoints": {"per_decade": 3},
    "runs": 1,
    "seed": 0,
}

# ----------------------------------------------------------------------------- config values

#: Values the issue reported as accepted or crashing; each must be refused (exit 2) by ``validate``.
HOSTILE = [
    ("problem.lambda", float("nan")), ("problem.lambda", float("inf")),
    ("problem.lambda", "n**n**n"), ("problem.lambda", "10**10**10"), ("problem.C", float("inf")),
    ("kernel.sigma2", float("inf")), ("kernel.sigma2", "1e400"), ("kernel.sigma2", 1e-320),
    ("budget.epochs", float("inf")), ("budget.epochs", float("nan")), ("runs", float("inf")),
    ("runs", float("nan")), ("seed", float("inf")), ("dataset.n_train", float("nan")),
    ("checkpoints.per_decade", float("inf")), ("name", ".."), ("name", "."), ("name", "../escape"),
    ("name", "a/b"), ("solvers", [{"name": "sbp", "eta0": -1}]),
]
#: Values that are wrong only at the data's real size (150 training rows): refused by ``run``.
HOSTILE_AT_N = [("dataset.n_train", 10 ** 9), ("problem.lambda", "1/(n-500)"), ("problem.lambda", "1/(n-150)")]

SPECIAL_STRINGS = ["1/n", "1/(100*n)", "n", "-1", "0", "1e400", "1e-320", ".inf", "-.inf", ".nan",
                   "n**n**n", "1/(n-500)", "..", ".", "../x", "/tmp/x", "NA", "None", "null", "",
                   "from_lambda", "gaussian", "linear", "sbp", "pegasos", "x" * 300]
scalars = st.one_of(
    st.integers(min_value=-(10 ** 30), max_value=10 ** 30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(), st.none(),
    st.sampled_from(SPECIAL_STRINGS),
    st.text(max_size=12),
)
yaml_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)), max_leaves=8)

KEYS = ["name", "dataset", "dataset.path", "dataset.n_train", "dataset.n_test", "dataset.n_features",
        "dataset.positive", "dataset.zero_based", "kernel", "kernel.name", "kernel.sigma2", "problem",
        "problem.lambda", "problem.C", "problem.nu", "problem.bias", "solvers", "checkpoints.per_decade",
        "checkpoints.epochs", "seed", "description", "unknown_key", "problem.unknown_key"]
#: Keys that set how long a run takes: fuzzed in ``validate`` only, so that ``run`` stays bounded.
TIME_KEYS = ["runs", "budget", "budget.epochs", "budget.seconds", "budget.kernel_evals",
             "budget.test_error", "kernel.cache_mb"]

solver_entries = st.one_of(
    st.sampled_from(["sbp", "pegasos", "sdca", "smo", "perceptron", "libsvm", "liblinear", "fourier",
                     "sgd-r", "nope"]),
    st.fixed_dictionaries({"name": st.sampled_from(["sbp", "pegasos", "smo", "sdca"])},
                          optional={"label": st.sampled_from(["NA", "None", "null", "a b", "x"]),
                                    "eta0": scalars, "mini_batch": scalars, "eps": scalars}),
)


def set_key(data: dict, dotted: str, value) -> None:
    """Set ``a.b.c`` in nested mappings, replacing non-mappings on the way."""
    *parents, last = dotted.split(".")
    node = data
    for part in parents:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[last] = value


def mutations(keys: list[str]):
    """Lists of (key, value or a deletion) to apply to :data:`BASE`."""
    one = st.one_of(
        st.tuples(st.sampled_from(keys), yaml_values),
        st.tuples(st.just("solvers"), st.lists(solver_entries, min_size=1, max_size=3)),
        st.tuples(st.sampled_from(keys), st.just(DELETE)),
    )
    return st.lists(one, max_size=3)


DELETE = object()


def mutated(changes) -> dict:
    data = yaml.safe_load(yaml.safe_dump(BASE))
    for key, value in changes:
        if value is DELETE:
            parent = data
            *parents, last = key.split(".")
            for part in parents:
                parent = parent.get(part) if isinstance(parent, dict) else None
            if isinstance(parent, dict):
                parent.pop(last, None)
        else:
            set_key(data, key, value)
    return data


#: Whole documents that attack the YAML reader itself (each must be refused with one line).
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(9))
HOSTILE_DOCUMENTS = [
    b"name: a\nname: b\ndataset: adult\nsolvers: [sbp]\n",          # duplicate key
    ("dataset: adult\nsolvers: [sbp]\nproblem: {nu: 0.1}\n" + ALIAS_BOMB).encode(),
    ("dataset: " + "[" * 10000 + "]" * 10000 + "\n").encode(),
    "name: caf\xe9\ndataset: adult\nsolvers: [sbp]\n".encode("latin-1"),
    "dataset: adult\nsolvers: [sbp]\n".encode("utf-16"),
    ("dataset: adult\nsolvers: [sbp]\nproblem: {nu: 0.1}\nruns: " + "9" * 5000 + "\n").encode(),
    b"\x00\x01\x02\xff\xfe",
]

# ----------------------------------------------------------------------------- LIBSVM mutations

#: Tokens that make a LIBSVM line wrong in a way the reader must name: (token, must fail even
#: when ``zero_based`` is set).
BAD_TOKENS = [("0:1", False), ("5:nan", True), ("5:inf", True), ("5:-inf", True), ("5:1e400", True),
              ("2147483648:1", True), ("99999999999999999999:1", True), ("abc", True), ("5:", True),
              (":5", True), ("-3:1", True)]
HARMLESS = [b"", b"# a comment", b"   "]


@st.composite
def libsvm_files(draw):
    """(train bytes, test bytes, zero_based, must_fail): real Adult rows with some lines spoiled.

    ``must_fail`` holds when a spoiled line that the reader must refuse survives in the
    final files (a later truncation may remove it), or when a file is left empty.
    """
    files = [list(TRAIN_LINES), list(TEST_LINES)]
    zero_based = draw(st.booleans())
    refused: list[tuple[int, bytes]] = []  # (file, line) that must end in exit 2
    for _ in range(draw(st.integers(0, 3))):
        which = draw(st.integers(0, 1))
        lines = files[which]
        at = draw(st.integers(0, max(0, len(lines) - 1)))
        kind = draw(st.sampled_from(["token", "label", "harmless", "truncate", "garbage"]))
        if kind == "token" and lines:
            token, always = draw(st.sampled_from(BAD_TOKENS))
            tokens = lines[at].split()
            if token == "0:1":
                tokens = tokens[:1] + [b"0:1"] + tokens[1:]  # keeps indices increasing
            else:
                tokens.append(token.encode())  # after the largest index
            lines[at] = b" ".join(tokens)
            if always or not zero_based:
                refused.append((which, lines[at]))
        elif kind == "label" and lines:
            lines[at] = b" ".join([draw(st.sampled_from([b"x", b"nan", b"inf"]))] + lines[at].split()[1:])
            refused.append((which, lines[at]))
        elif kind == "harmless":
            lines.insert(at, draw(st.sampled_from(HARMLESS)))
        elif kind == "truncate":
            del lines[at:]
        elif kind == "garbage":
            lines.insert(at, draw(st.binary(min_size=1, max_size=20)))
    must_fail = any(line in files[which] for which, line in refused) or not all(files)
    return b"\n".join(files[0]) + b"\n", b"\n".join(files[1]) + b"\n", zero_based, must_fail


# ----------------------------------------------------------------------------- running the CLI


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def assert_correct_run(results: Path, data: dict) -> None:
    """Exit 0: one run folder, every run finished, test errors in [0, 1]."""
    (experiment,) = [p for p in results.iterdir() if p.is_dir()]
    (run_dir,) = list(experiment.iterdir())
    meta = read_meta(run_dir)
    statuses = [r["status"] for r in meta["runs"]]
    assert statuses and all(s in ("budget", "done") for s in statuses), statuses
    assert len(statuses) == len(meta["resolved"]["solvers"]) * meta["resolved"]["runs"]
    curves = pd.read_csv(run_dir / "curves.csv")
    assert curves["test_error"].between(0, 1).all()


def run_case(workdir: Path, config_bytes: bytes, must_fail: bool, command: str) -> None:
    """Write the config into ``workdir``, run ``command`` on it, and check the outcome."""
    config_path = workdir / "fuzz.yaml"
    config_path.write_bytes(config_bytes)
    results = workdir / "results"
    before = files_under(workdir.parent)
    args = [command, str(config_path)]
    if command == "run":
        args += ["--results", str(results), "--no-plot", "--quiet"]
    code, stderr = invoke(*args)
    assert "Traceback" not in stderr
    if must_fail:
        assert code == 2, (code, stderr[-500:])
    assert code in ((0, 2, 3) if command == "run" else (0, 2)), (code, stderr[-500:])
    if code == 2:
        one_error_line(stderr)
    new = files_under(workdir.parent) - before
    outside = [p for p in new if results not in p.parents and p != results]
    assert not outside, f"files written outside --results: {outside[:5]}"
    if command == "run" and code == 0:
        assert_correct_run(results, yaml.safe_load(config_bytes))
    if command == "run" and code == 3:
        (run_dir,) = [p for e in results.iterdir() for p in e.iterdir()]
        statuses = [r["status"] for r in read_meta(run_dir)["runs"]]
        assert any(s.startswith("failed") or s == "diverged" for s in statuses)


@contextlib.contextmanager
def workspace(train: bytes = b"\n".join(TRAIN_LINES) + b"\n", test: bytes = b"\n".join(TEST_LINES) + b"\n"):
    """A fresh folder ``<tmp>/work`` holding the data files (``<tmp>`` is watched for escapes)."""
    with tempfile.TemporaryDirectory(prefix="sbpbench-fuzz-") as tmp:
        workdir = Path(tmp) / "work"
        workdir.mkdir()
        (workdir / "train.svm").write_bytes(train)
        (workdir / "test.svm").write_bytes(test)
        yield workdir


def dump(data) -> bytes:
    return yaml.safe_dump(data, allow_unicode=True).encode()


def is_hostile(key: str, value) -> bool:
    return any(k == key and (v == value or (isinstance(v, float) and isinstance(value, float)
                                            and math.isnan(v) and math.isnan(value)))
               for k, v in HOSTILE)


# ----------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("command,key,value", [("validate", k, v) for k, v in HOSTILE] +
                         [("run", k, v) for k, v in HOSTILE_AT_N],
                         ids=[f"{k}={str(v)[:20]}" for k, v in HOSTILE + HOSTILE_AT_N])
def test_hostile_values_are_refused(command, key, value):
    """Each value the issue found accepted or crashing ends in exit 2 (at the real n: in ``run``)."""
    data = yaml.safe_load(yaml.safe_dump(BASE))
    set_key(data, key, value)
    with workspace() as workdir:
        run_case(workdir, dump(data), must_fail=True, command=command)


@pytest.mark.parametrize("document", HOSTILE_DOCUMENTS, ids=range(len(HOSTILE_DOCUMENTS)))
def test_hostile_documents_are_refused(document):
    with workspace() as workdir:
        run_case(workdir, document, must_fail=True, command="validate")


@pytest.mark.slow  # 300 configs validated, each in a fresh folder watched for escapes
@fuzz(300)
@given(mutations(KEYS + TIME_KEYS))
def test_fuzz_validate_configs(changes):
    data = mutated(changes)
    text = dump(data)
    with workspace() as workdir:
        must_fail = any(value is not DELETE and is_hostile(k, value) for k, value in changes)
        run_case(workdir, text, must_fail, command="validate")


@pytest.mark.slow  # 60 configs run to the end and checked
@fuzz(60)
@given(mutations(KEYS))
def test_fuzz_run_configs(changes):
    data = mutated(changes)
    with workspace() as workdir:
        run_case(workdir, dump(data), False, command="run")


@pytest.mark.slow  # 80 data files read and validated
@fuzz(80)
@given(libsvm_files())
def test_fuzz_libsvm_files(case):
    train, test, zero_based, must_fail = case
    data = yaml.safe_load(yaml.safe_dump(BASE))
    data["dataset"]["zero_based"] = zero_based
    data["solvers"] = ["pegasos"]
    with workspace(train, test) as workdir:
        run_case(workdir, dump(data), must_fail, command="validate")  # validate reads path files too
        run_case(workdir, dump(data), must_fail, command="run")


# ----------------------------------------------------------------------------- run folders read back

#: Keys of a run's meta.json that the readers use (``runs[0].KEY``: of the first run's summary).
META_KEYS = ["experiment", "config", "resolved", "resolved.dataset", "resolved.dataset.n_train",
             "resolved.dataset.files", "resolved.kernel", "resolved.kernel.name", "resolved.problem",
             "resolved.problem.lambda", "resolved.solvers", "resolved.runs", "resolved.seed", "runs",
             "solver_traits", "solver_traits.sbp", "resumes", "host", "versions", "started", "jobs", "executor",
             "git_commit", "runs[0]", "runs[0].status", "runs[0].run", "runs[0].solver", "runs[0].checkpoints",
             "runs[0].test_error", "runs[0].iterations"]


def set_meta_key(meta: dict, dotted: str, value) -> None:
    """Set (or, for :data:`DELETE`, remove) ``dotted`` in a meta.json; ``runs[0].`` is the first summary."""
    if dotted.startswith("runs[0]"):
        if not meta["runs"]:
            return
        if dotted == "runs[0]":
            meta["runs"][0] = value if value is not DELETE else meta["runs"][0]
            return
        node, last = meta["runs"][0], dotted.split(".")[-1]
    else:
        *parents, last = dotted.split(".")
        node = meta
        for part in parents:
            if not isinstance(node.get(part), dict):
                return
            node = node[part]
    if value is DELETE:
        node.pop(last, None)
    else:
        node[last] = value


@contextlib.contextmanager
def copied_run(run_dir: Path):
    """A copy of the run folder ``run_dir`` as the only run of its experiment under a new results root."""
    with tempfile.TemporaryDirectory(prefix="sbpbench-fuzz-") as tmp:
        copy = Path(tmp) / "res" / run_dir.parent.name / "20260101-000000"
        shutil.copytree(run_dir, copy)
        yield copy


@pytest.mark.slow  # 12 damaged runs, each paged and resumed
@pytest.mark.usefixtures("one_numba_thread")
@fuzz(12)
@given(st.lists(st.tuples(st.sampled_from(META_KEYS), st.one_of(yaml_values, st.just(DELETE))), min_size=1,
                max_size=3))
def test_fuzz_meta_json(tiny_run, changes):
    """A meta.json changed at the keys its readers use: ``page`` and ``run --resume-from`` end in one
    line with exit 2, or read it; a resume that goes on gives the curves of the uninterrupted run."""
    ref_path, ref_dir = tiny_run
    with copied_run(ref_dir) as copy:
        data = json.loads((copy / "meta.json").read_text())
        for key, value in changes:
            set_meta_key(data, key, value)
        (copy / "meta.json").write_text(json.dumps(data))
        for args in (["page", copy], ["run", ref_path, "--resume-from", copy, "--no-plot", "-q"]):
            code, stderr = invoke(*args)
            assert code in (0, 2), (args[0], code, stderr[-500:])
            if code == 2:
                one_error_line(stderr)
            elif args[0] == "run":
                assert read_curves(copy).drop(columns="train_time_s").equals(
                    read_curves(ref_dir).drop(columns="train_time_s"))


@st.composite
def curves_damage(draw):
    """Damage to a curves.csv, as lines: a cut at any byte, rows dropped, repeated, swapped or
    replaced by garbage."""
    changes = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["cut", "drop", "repeat", "swap", "garbage"]))
        changes.append((kind, draw(st.floats(0, 1)), draw(st.floats(0, 1)), draw(st.binary(max_size=30))))
    return changes


def damaged(data: bytes, changes) -> bytes:
    for kind, a, b, garbage in changes:
        if kind == "cut":
            data = data[: int(a * len(data))]
            continue
        lines = data.splitlines(keepends=True)
        if not lines:
            continue
        i, j = int(a * (len(lines) - 1)), int(b * (len(lines) - 1))
        if kind == "drop":
            del lines[i]
        elif kind == "repeat":
            lines.insert(i, lines[i])
        elif kind == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines[i] = garbage + b"\n"
        data = b"".join(lines)
    return data


@pytest.mark.usefixtures("one_numba_thread")
@fuzz(12)
@given(curves_damage())
def test_fuzz_resumed_curves(tiny_run, changes):
    """Whatever the damage to curves.csv, ``--resume`` ends with the uninterrupted run's curves:
    every damaged run is redone, and only those."""
    ref_path, ref_dir = tiny_run
    with copied_run(ref_dir) as copy:
        (copy / "curves.csv").write_bytes(damaged((copy / "curves.csv").read_bytes(), changes))
        run_experiments([config.load(ref_path)], copy.parent.parent, SequentialExecutor(), resume_from=copy)
        assert read_curves(copy).drop(columns="train_time_s").equals(read_curves(ref_dir).drop(columns="train_time_s"))
        (resume,) = json.loads((copy / "meta.json").read_text())["resumes"]
        assert resume["kept"] + resume["redone"] == 4 and len(resume.get("damaged", [])) <= resume["redone"]

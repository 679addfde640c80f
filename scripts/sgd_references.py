"""The reference programs of SVMperf and Pegasos for ``scripts/sgd_causes.py``: built from their
authors' sources where these can be had, run at the SGD paper's parameters.

- **SVMperf**: Joachims' SVM-perf V3.00 (15.07.2009; the paper ran V2.50, which is not to be had
  here), from ``--svmperf`` (an unpacked ``svm_perf`` folder or its ``svm_perf.tar.gz``) or, by
  default, the ``svm_perf/svm_perf.tar.gz`` of the git mirror :data:`SVMPERF_MIRROR`. Its license
  forbids redistribution: the source is never copied into this repository, only built in a work
  folder. ``svm_perf_learn`` is built with ``gcc -O2 -fcommon`` (the sources predate GCC 10's
  ``-fno-common`` default) from the files its Makefile links.
- **Pegasos**: Shalev-Shwartz's ``pegasos.tgz`` (GPL; the SGD paper's footnote 12), the first
  commit of the git mirror :data:`PEGASOS_MIRROR` (its Makefile's ``tar`` target names
  ``pegasos.tgz``), built with ``g++ -O2``. The program seeds ``rand()`` with ``time(NULL)``; the
  build links a ``time()`` (:data:`SEEDED_TIME`) that returns ``$PEGASOS_SEED``, so that a run's
  seed is given rather than the clock's second. Nothing else of the program is changed.

With ``epsilon_crit`` given, :func:`build_svmperf` changes one statement of the 1-slack loop
(:data:`SVMPERF_QP_PRECISION`): the reduced QP's KKT precision, half the smallest CEps so far
as distributed, is fixed at ``epsilon_crit`` instead (an almost exact QP for a small value), to
see what the QP's precision does to the iterations and the stop; nothing else changes.

``svm_perf_learn`` runs at its default verbosity (``-v 1``): V3.00's ``-w 9`` counts its
iterations only where it prints them, so that ``-v 0`` silently turns its shrinking off.

Each run's ``w`` is read from the program's model file and its relative accuracy
``(J - J_opt)/J_opt`` computed as for our runs (J in lambda form, no bias).
"""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

SVMPERF_MIRROR = Path("/work/.mirror/baojian+auc-opt/repo")
#: The pristine SVM-perf distribution inside :data:`SVMPERF_MIRROR`.
SVMPERF_ARCHIVE = "svm_perf/svm_perf.tar.gz"
#: The files ``svm_perf_learn`` links (its Makefile), relative to the unpacked folder.
SVMPERF_SOURCES = ("svm_struct/svm_struct_learn.c", "svm_struct_learn_custom.c", "svm_struct_api.c",
                   "svm_light/svm_hideo.c", "svm_light/svm_learn.c", "svm_light/svm_common.c",
                   "svm_struct/svm_struct_common.c", "svm_struct/svm_struct_main.c")
#: The statement of ``svm_struct/svm_struct_learn.c``'s 1-slack loop that sets SVM-light's KKT
#: precision for the reduced QP (half the smallest CEps so far), and its value.
SVMPERF_QP_PRECISION = re.compile(r"(epsilon=MIN\(epsilon,ceps\); /\* best eps so far \*/\s*lparm->epsilon_crit=)"
                                  r"epsilon/2;")
PEGASOS_MIRROR = Path("/work/.mirror/raynald+master-thesis-imple/repo")
#: The mirror's first commit with sources ("init"): pegasos.tgz as distributed.
PEGASOS_COMMIT = "f257f594efc49a73cfad3a40c7d1beba52c83168"
PEGASOS_SOURCES = ("simple_sparse_vec_hash.cc", "WeightVector.cc", "pegasos_optimize.cc", "cmd_line.cc", "main.cc")
#: The ``time()`` linked into pegasos: the seed its ``srand(time(NULL))`` reads, from the environment.
SEEDED_TIME = """#include <stdlib.h>
#include <time.h>
time_t time(time_t *t) {
  const char *s = getenv("PEGASOS_SEED");
  time_t v = s ? (time_t)atol(s) : 0;
  if (t) *t = v;
  return v;
}
"""


class SourceMissing(Exception):
    """A reference program's source cannot be had (the message says where it was looked for)."""


def _build(cmd: list[str], name: str) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "?"
        raise SourceMissing(f"building {name} failed: {last}")


def _unpack(archive: bytes | Path, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    if isinstance(archive, Path):
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")
    else:
        subprocess.run(["tar", "-xz", "-C", str(into)], input=archive, check=True)


def build_svmperf(source: Path | None, work: Path, mirror: Path = SVMPERF_MIRROR,
                  epsilon_crit: float | None = None) -> Path:
    """``svm_perf_learn`` built in ``work`` from ``source`` (a folder or a ``.tar.gz``), else from
    the mirror's archive; with ``epsilon_crit``, its reduced QP's precision fixed at that value
    (:data:`SVMPERF_QP_PRECISION`), built as ``svm_perf_learn_qp`` from a copy of the sources.

    Raises
    ------
    SourceMissing
        No source where looked for, or the build failed.
    """
    root = work / "svm_perf"
    if source is not None and source.is_dir():
        root = source
    elif source is not None and source.is_file():
        _unpack(source, root)
    elif source is not None:
        raise SourceMissing(f"{source}: no such folder or archive")
    else:
        shown = subprocess.run(["git", "--git-dir", str(mirror), "show", f"HEAD:{SVMPERF_ARCHIVE}"],
                               capture_output=True)
        if shown.returncode != 0:
            raise SourceMissing(f"no {SVMPERF_ARCHIVE} in a git mirror at {mirror}")
        _unpack(shown.stdout, root)
    missing = [rel for rel in SVMPERF_SOURCES if not (root / rel).is_file()]
    if missing:
        raise SourceMissing(f"{root}: not an unpacked svm_perf ({missing[0]} is missing)")
    sources = [root / rel for rel in SVMPERF_SOURCES]
    exe = work / "svm_perf_learn"
    if epsilon_crit is not None:
        loop = sources[0].read_text(encoding="latin-1")
        changed, count = SVMPERF_QP_PRECISION.subn(rf"\g<1>{epsilon_crit!r};", loop)
        if count != 1:
            raise SourceMissing(f"{sources[0]}: not SVM-perf V3.00's 1-slack loop (its QP precision is not set there)")
        sources[0] = work / "svm_struct_learn_qp.c"
        sources[0].write_text(changed, encoding="latin-1")
        exe = work / "svm_perf_learn_qp"
    _build(["gcc", "-O2", "-fcommon", "-w", "-I", str(root / "svm_struct"), "-o", str(exe),
            *(str(path) for path in sources), "-lm"], exe.name)
    return exe


def build_pegasos(source: Path | None, work: Path, mirror: Path = PEGASOS_MIRROR) -> Path:
    """``pegasos`` built in ``work`` from ``source`` (an unpacked pegasos.tgz), else from the
    mirror's :data:`PEGASOS_COMMIT`, with :data:`SEEDED_TIME` linked in.

    Raises
    ------
    SourceMissing
        No source where looked for, or the build failed.
    """
    root = work / "pegasos-src"
    if source is not None:
        root = source
    else:
        archive = subprocess.run(["git", "--git-dir", str(mirror), "archive", PEGASOS_COMMIT], capture_output=True)
        if archive.returncode != 0:
            raise SourceMissing(f"no commit {PEGASOS_COMMIT[:7]} in a git mirror at {mirror}")
        root.mkdir(parents=True, exist_ok=True)
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    missing = [rel for rel in PEGASOS_SOURCES if not (root / rel).is_file()]
    if missing:
        raise SourceMissing(f"{root}: not an unpacked pegasos.tgz ({missing[0]} is missing)")
    seeded = work / "seeded_time.c"
    seeded.write_text(SEEDED_TIME, encoding="utf-8")
    exe = work / "pegasos"
    _build(["g++", "-O2", "-w", "-o", str(exe), *(str(root / rel) for rel in PEGASOS_SOURCES), "-x", "c",
            str(seeded), "-lm"], "pegasos")
    return exe


def read_svmperf_model(path: Path, d: int) -> np.ndarray:
    """The weight vector of an SVM-perf linear model file (its one support vector, times its
    ``alpha*y``), in ``d`` dimensions; features beyond ``d`` (none here) are dropped."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not any("threshold b" in line for line in lines):
        raise ValueError(f"{path}: not an SVM-light model file")
    tokens = lines[-1].split("#")[0].split()
    return float(tokens[0]) * _sparse(tokens[1:], d)


def read_pegasos_model(path: Path, d: int) -> np.ndarray:
    """The weight vector of a pegasos model file (``index:value`` pairs, the data's indices)."""
    return _sparse(path.read_text(encoding="utf-8").split(), d)


def _sparse(tokens: list[str], d: int) -> np.ndarray:
    w = np.zeros(d)
    for token in tokens:
        index, value = token.split(":")
        if 1 <= int(index) <= d:
            w[int(index) - 1] = float(value)
    return w


def svmperf_runs(program: Path, lines: list[str], C: float, eps: float, algorithm: int, orders: int,
                 accuracy: Callable[[np.ndarray], float], d: int, work: Path) -> dict[str, Any]:
    """``svm_perf_learn -c C n/100 -w algorithm -e eps --b 0`` (SVM-perf's C for the penalty ``C``
    of ``J = ||w||^2/2 + C sum hinge``; the error-rate loss, its default) on ``orders`` row orders
    of the data ``lines`` (order k drawn with seed k; ``w`` in ``d`` dimensions): each run's
    ``accuracy(w)`` and iterations."""
    n = len(lines)
    rel, iterations = [], []
    for seed in range(orders):
        order = np.random.default_rng(seed).permutation(n)
        data, model = work / "train.txt", work / "model.txt"
        data.write_text("".join(lines[i] for i in order), encoding="utf-8")
        out = subprocess.run([str(program), "-c", f"{C * n / 100:.10g}", "-w", str(algorithm), "-e", f"{eps:g}",
                              "--b", "0", str(data), str(model)], check=True, capture_output=True, text=True).stdout
        found = re.search(r"Number of iterations: (\d+)", out)
        iterations.append(int(found.group(1)) if found else -1)
        rel.append(accuracy(read_svmperf_model(model, d)))
    return {"rel_acc": np.array(rel), "iterations": iterations,
            "program": f"{program.name} -c {C:g}n/100 -w {algorithm} -e {eps:g} --b 0"}


def pegasos_runs(program: Path, data: Path, lam: float, iterations: int, seeds: int,
                 accuracy: Callable[[np.ndarray], float], d: int, work: Path) -> dict[str, Any]:
    """``pegasos -lambda lam -iter iterations -k 1`` (its last iterate) with seeds 1..``seeds``
    on the LIBSVM file ``data``: each run's ``accuracy(w)``."""
    model = work / "pegasos-model.txt"
    rel = []
    for seed in range(1, seeds + 1):
        subprocess.run([str(program), "-lambda", repr(lam), "-iter", str(iterations), "-k", "1", "-modelFile",
                        str(model), str(data)], check=True, capture_output=True,
                       env={**os.environ, "PEGASOS_SEED": str(seed)})
        rel.append(accuracy(read_pegasos_model(model, d)))
    return {"rel_acc": np.array(rel), "program": f"{program.name} -lambda {lam:.4g} -iter {iterations} -k 1"}

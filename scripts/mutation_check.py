"""Which CI stage catches which bug: small mutations of the code, one at a time.

Each mutation (:data:`MUTATIONS`) is a bug of the kind an optimizing change introduces, written
as exact edits ``(file, old text, new text)``: the old text must occur exactly once in the file.
For each, in place in this checkout, the script applies the edits, runs the CI stages in order
until one fails (:data:`STAGES`; a stage that runs past its timeout counts as failing, as a hung
CI would), restores the files and says which stage caught the mutation, or ``ESCAPED``:

* ``tests``: the mutation's own selection of tests (pytest, stopping at the first failure);
* ``check-solver``: ``sbpbench check-solver`` on the solver files a mutation changes;
* ``reference``: the CI configs rerun and checked against their committed references
  (``tests/test_regression.py``'s reference test);
* ``speed-gate``: ``scripts/speed_gate.py``.

A stage a mutation names nothing for (no tests, no solver file) is skipped. Before the
mutations the stages run once on the unchanged code, with the selections of the mutations
chosen (``--no-baseline`` skips that): a stage that fails there would catch everything, and the
script stops.

Safety: the script refuses to run on a checkout with uncommitted changes (``git status``); the
edited files are written back byte for byte, with their modification times, in a ``finally``
that runs on an error, Ctrl-C or SIGTERM too (each stage runs in a process group of its own,
killed with it), and the checkout is then checked clean again. Stages run with
``PYTHONDONTWRITEBYTECODE=1``, so that no bytecode of a mutated file is left behind.

Usage: ``python scripts/mutation_check.py [--stages tests,check-solver,reference,speed-gate]
[--only NAME ...] [--timeout 600] [--no-baseline] [--list]``. Exit 0 when every mutation applied
was caught, 1 when one escaped, 2 on a dirty checkout or a stage failing on the unchanged code.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = "examples/my_solver.py"


@dataclass(frozen=True)
class Mutation:
    """A bug: exact edits ``(file, old, new)`` (files relative to the checkout), what it does, and
    what should catch it: pytest selections, and solver files for ``check-solver``."""

    name: str
    does: str
    edits: tuple[tuple[str, str, str], ...]
    tests: tuple[str, ...] = ()
    solver_files: tuple[str, ...] = field(default=())


_ROW_LOOKUP = ("        cached = self._cache.get(i)\n        if cached is not None and cached[0] is None:\n"
               "            self._cache.move_to_end(i)\n            return cached[1]\n"
               "        self.kernel_evals_computed += self.n\n"
               "        return self._store(i, None, self._compute(i, self._all))")

_OWN_FEATURES = "tests/test_fourier.py::test_the_solvers_own_features_approximate_its_gaussian_kernel"
_RANDOMNESS = "tests/test_randomness.py::"

#: The bugs of issue 38's table, the two solver-contract cheats, then issue 46's five (each with
#: the test that pins its unit).
MUTATIONS = [
    Mutation("zero-margin-correct", "test error counts a zero margin as correct (<= 0 -> < 0)",
             (("sbpbench/solvers/base.py", '"test_error": float(np.mean(margins <= 0))',
               '"test_error": float(np.mean(margins < 0))'),),
             tests=("tests/test_runner.py", "tests/test_smo.py")),
    Mutation("sgd-s-bound-without-C", "SGD-s's stopping bound without its factor C",
             (("sbpbench/solvers/sgd_revisited.py", "bound = self.C * self.acc[1] / self.epochs_equiv - w2",
               "bound = self.acc[1] / self.epochs_equiv - w2"),),
             tests=("tests/test_linear_solvers.py",)),
    Mutation("sbp-step-1/maxK", "SBP's initial step 1/sqrt(max K) -> 1/max K",
             (("sbpbench/solvers/sbp.py", "else 1.0 / np.sqrt(diag.max()))", "else 1.0 / diag.max())"),),
             tests=("tests/test_sbp.py",)),
    Mutation("row-before-cache", "kernel row computed before the cache lookup (same curves, slower)",
             (("sbpbench/kernels/kernel.py", _ROW_LOOKUP,
               "        values = self._compute(i, self._all)\n"
               + _ROW_LOOKUP.replace("self._compute(i, self._all))", "values)")),),
             tests=("tests/test_kernels.py",)),
    Mutation("smo-first-order", "SMO's second-order working set replaced by first-order",
             (("sbpbench/solvers/smo.py", "        obj_diff = -(grad_diff * grad_diff) / quad\n",
               "        obj_diff = -grad_diff\n"),),
             tests=("tests/test_smo.py",)),
    Mutation("smo-rebuild-sign", "SMO shrinking's gradient rebuild with the wrong sign",
             (("sbpbench/solvers/smo.py", "G[t] += y[t] * float(self.kernel.entries(t, act) @ coef)",
               "G[t] -= y[t] * float(self.kernel.entries(t, act) @ coef)"),
              ("sbpbench/solvers/smo.py", "G[inactive] += (alpha[s] * y[s]) * y_in * self.kernel.row(s)[inactive]",
               "G[inactive] -= (alpha[s] * y[s]) * y_in * self.kernel.row(s)[inactive]")),
             tests=("tests/test_smo_shrinking.py",)),
    Mutation("cache-hit-computed", "a cache hit counted as a computed evaluation",
             (("sbpbench/kernels/kernel.py", "            self._cache.move_to_end(i)\n            return cached[1]\n",
               "            self._cache.move_to_end(i)\n            self.kernel_evals_computed += self.n\n"
               "            return cached[1]\n"),),
             tests=("tests/test_kernels.py",)),
    Mutation("epoch-checkpoint+1", "epoch checkpoint shifted by one iteration",
             (("sbpbench/execution/loop.py", "target_it = min(target_it, (solver.iteration // n + 1) * n)",
               "target_it = min(target_it, (solver.iteration // n + 1) * n + 1)"),),
             tests=("tests/test_runner.py",)),
    Mutation("sbp-average-divisor", "SBP's averaging divisor off by one",
             (("sbpbench/solvers/sbp.py", "        T = max(self.iteration, 1)\n",
               "        T = self.iteration + 1\n"),),
             tests=("tests/test_sbp.py",)),
    Mutation("cheat-numpy-half-rows", "a solver takes every other row from numpy on kernel.X, counting half",
             ((EXAMPLE, "        f_i = float(self.kernel.row(i) @ (self.alpha * self.y))\n",
               "        X = self.kernel.X.toarray()\n"
               "        row = self.kernel.row(i) if self.iteration % 2 == 0 else np.exp(\n"
               "            -((X - X[i]) ** 2).sum(1) / (2.0 * self.kernel.spec.sigma2))\n"
               "        f_i = float(row @ (self.alpha * self.y))\n"),
              (EXAMPLE, "        return float(self.n * self.iteration)",
               "        return float(self.n * ((self.iteration + 1) // 2))")),
             solver_files=(EXAMPLE,)),
    Mutation("cheat-hash-seed", "a solver draws from its seed and a string's hash (another trajectory per process)",
             ((EXAMPLE, "        i = int(self.rng.integers(self.n))\n",
               "        i = int(np.random.default_rng([self.iteration, hash(self.name) % 2**32])"
               ".integers(self.n))\n"),),
             solver_files=(EXAMPLE,)),
    Mutation("fourier-sigma2-doubled", "Fourier features of a kernel twice as wide (sigma2 doubled)",
             (("sbpbench/solvers/fourier.py", "self.sigma = np.sqrt(self.kernel.spec.sigma2)",
               "self.sigma = np.sqrt(2.0 * self.kernel.spec.sigma2)"),),
             tests=(_OWN_FEATURES,)),
    Mutation("one-generator-for-all-runs", "every run of a solver draws from run 0's generator",
             (("sbpbench/execution/loop.py", "run_rng(exp.seed, run, stream_of(spec.name))",
               "run_rng(exp.seed, 0, stream_of(spec.name))"),),
             tests=(_RANDOMNESS + "test_each_run_of_a_solver_draws_from_a_stream_of_its_own",)),
    Mutation("dcd-pass-order-fixed", "DCD draws its order for the first pass only (every pass the same)",
             (("sbpbench/solvers/dcd.py", "        self.index[:active] = self.rng.permutation(self.index[:active])\n",
               "        if self.passes == 0:\n"
               "            self.index[:active] = self.rng.permutation(self.index[:active])\n"),),
             tests=(_RANDOMNESS + "test_every_pass_visits_the_examples_in_a_fresh_order",
                    _RANDOMNESS + "test_the_solvers_drawing_an_order_per_pass_are_those_tested")),
    Mutation("interval-level-95", "the report's t intervals at 95% (two-sided quantile) instead of 90%",
             (("sbpbench/papers/comparisons.py",
               "return float(stats.norm.isf(ALPHA) if not math.isfinite(df) else stats.t.isf(ALPHA, df))",
               "return float(stats.norm.isf(ALPHA / 2) if not math.isfinite(df) else stats.t.isf(ALPHA / 2, df))"),),
             tests=("tests/test_comparisons.py::test_intervals_are_the_textbook_ones_at_the_documented_level",)),
    Mutation("subsample-with-replacement", "a subsample drawn with replacement (repeated rows)",
             (("sbpbench/data/split.py", "rng.choice(split.n, size=size, replace=False)",
               "rng.choice(split.n, size=size, replace=True)"),),
             tests=("tests/test_data.py::test_a_subsample_holds_distinct_rows_in_file_order",)),
]


def stage_command(stage: str, chosen: Sequence[Mutation]) -> list[str] | None:
    """The command of ``stage`` for the mutations ``chosen`` (one mutation, or for the baseline
    every mutation the run tries: their selections together), or None when the stage has nothing
    to run for them."""
    python = sys.executable
    pytest = [python, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
    if stage == "tests":
        tests = sorted({t for m in chosen for t in m.tests})
        return [*pytest, *tests] if tests else None
    if stage == "check-solver":
        files = sorted({f for m in chosen for f in m.solver_files})
        return [python, "-m", "sbpbench", "check-solver", *files] if files else None
    if stage == "reference":
        return [*pytest, "tests/test_regression.py", "-k", "matches_its_reference"]
    if stage == "speed-gate":
        return [python, "scripts/speed_gate.py"]
    raise ValueError(f"no stage {stage!r}")


#: The stages in the order they run, as ``--stages`` names them.
STAGES = ("tests", "check-solver", "reference", "speed-gate")


def run_stage(command: list[str], timeout: float) -> tuple[bool, float, str]:
    """Run ``command`` in the checkout, in a process group of its own: ``(failed, seconds, its first
    line saying FAILED, else its last line)``; past ``timeout`` the group is killed and that
    counts as failing."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return True, time.perf_counter() - t0, f"timed out after {timeout:g} s"
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    lines = [line for line in out.splitlines() if line.strip()]
    shown = next((line for line in lines if "FAILED" in line), lines[-1] if lines else "")
    return proc.returncode != 0, time.perf_counter() - t0, shown


def dirty() -> str:
    """What ``git status --porcelain`` says about the checkout ('' when clean)."""
    return subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


@contextmanager
def applied(mutation: Mutation) -> Iterator[None]:
    """The checkout with ``mutation``'s edits while open; every edited file written back (bytes and
    modification time) when it closes, however it closes.

    Raises
    ------
    LookupError
        An old text does not occur exactly once (nothing is changed then).
    """
    saved: dict[Path, tuple[bytes, int]] = {}
    texts: dict[Path, str] = {}
    for file, old, new in mutation.edits:
        path = ROOT / file
        if path not in texts:
            saved[path] = (path.read_bytes(), path.stat().st_mtime_ns)
            texts[path] = saved[path][0].decode()
        if texts[path].count(old) != 1:
            raise LookupError(f"{file}: the old text occurs {texts[path].count(old)} times, not once")
        texts[path] = texts[path].replace(old, new)
    try:
        for path, text in texts.items():
            path.write_text(text, encoding="utf-8")
        yield
    finally:
        for path, (data, mtime) in saved.items():
            path.write_bytes(data)
            os.utime(path, ns=(mtime, mtime))


def _terminate(signum, frame) -> None:
    """SIGTERM ends the script as Ctrl-C does (the mutation is restored on the way out)."""
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", default=",".join(STAGES),
                        help=f"comma-separated stages, run in this order (default {','.join(STAGES)})")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these mutations")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per stage (default 600)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the stages on the unchanged code")
    parser.add_argument("--list", action="store_true", help="list the mutations and stop")
    args = parser.parse_args()
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    names = {m.name for m in MUTATIONS}
    for bad in [s for s in stages if s not in STAGES] + [n for n in args.only or () if n not in names]:
        parser.error(f"{bad!r} is neither a stage ({', '.join(STAGES)}) nor a mutation ({', '.join(sorted(names))})")
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    if args.list:
        for m in chosen:
            print(f"{m.name}: {m.does}")
        return
    if (status := dirty()):
        print(f"mutation_check.py: error: the checkout has uncommitted changes; commit or stash them first:\n{status}",
              file=sys.stderr)
        sys.exit(2)
    signal.signal(signal.SIGTERM, _terminate)
    if not args.no_baseline:
        for stage in stages:
            command = stage_command(stage, chosen)
            if command is None:
                continue
            failed, seconds, last = run_stage(command, args.timeout)
            print(f"baseline {stage}: {'FAILED' if failed else 'passed'} ({seconds:.0f} s) {last}", flush=True)
            if failed:
                print(f"mutation_check.py: error: stage {stage!r} fails on the unchanged code", file=sys.stderr)
                sys.exit(2)
    rows = []
    for m in chosen:
        verdict = "ESCAPED"
        try:
            with applied(m):
                for stage in stages:
                    command = stage_command(stage, [m])
                    if command is None:
                        continue
                    failed, seconds, last = run_stage(command, args.timeout)
                    print(f"{m.name} / {stage}: {'caught' if failed else 'passed'} ({seconds:.0f} s) {last}",
                          flush=True)
                    if failed:
                        verdict = f"{stage} ({seconds:.0f} s{', timeout' if 'timed out' in last else ''})"
                        break
        except LookupError as exc:
            verdict = f"NOT APPLIED ({exc})"
        finally:
            if (status := dirty()):  # never expected: applied() writes every file back
                print(f"mutation_check.py: error: the checkout is not clean after {m.name}:\n{status}", file=sys.stderr)
                sys.exit(2)
        rows.append((m, verdict))
    print("\n| mutation | what it does | caught by |\n|---|---|---|")
    for m, verdict in rows:
        print(f"| {m.name} | {m.does} | {verdict} |")
    if any(v == "ESCAPED" for _, v in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()

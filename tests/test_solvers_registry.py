"""The solver registry imports a built-in solver's module when the solver is first looked up
(issue #48: each module's compiled functions cost a short run's process some milliseconds to set
up, some 40 ms for all of them)."""

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import sbpbench.solvers
from sbpbench.solvers.base import BUILT_IN, SOLVERS

ROOT = Path(__file__).resolve().parents[1]


def test_the_table_of_built_in_solvers_is_what_the_modules_register():
    for module in pkgutil.iter_modules(sbpbench.solvers.__path__):
        importlib.import_module(f"sbpbench.solvers.{module.name}")
    registered = {name: cls.__module__.rpartition(".")[2] for name, cls in dict.items(SOLVERS)
                  if cls.__module__.startswith("sbpbench.solvers.")}
    assert registered == BUILT_IN


def test_a_run_imports_the_module_of_its_own_solver_only():
    """The modules ``sbpbench run`` imports, then one solver looked up, then every one listed."""
    code = "\n".join([
        "import sys",
        "import sbpbench.cli, sbpbench.execution.executors, sbpbench.execution.sweep, sbpbench.results.store",
        "from sbpbench.solvers import SOLVERS",
        "def solvers(): return sorted(m.rpartition('.')[2] for m in sys.modules if m.startswith('sbpbench.solvers.'))",
        "print(solvers())",
        "assert 'dcd' in SOLVERS and SOLVERS['dcd'].name == SOLVERS.get('dcd').name == 'dcd'",
        "print(solvers())",
        "print(len(SOLVERS) == len(set(SOLVERS.values())) == len(dict(SOLVERS.items())), 'nothing' in SOLVERS)",
    ])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    start, looked_up, listed = done.stdout.splitlines()
    assert start == "['base', 'external']"
    assert looked_up == "['base', 'dcd', 'external', 'linear']"
    assert listed == "True False"

"""A run's process imports no pandas (issue #37: importing it is some 0.2 s of a short run's fixed
costs); only the readers of results (tables, figures, pages, resume, check, report) import it."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The modules a run imports (``sbpbench run``), besides the command line's own.
RUN_PATH = ("sbpbench.execution.sweep", "sbpbench.execution.executors", "sbpbench.experiment.config",
            "sbpbench.results.store", "sbpbench.results.lookup")


def test_the_run_path_and_its_writer_import_no_pandas(tmp_path):
    """Importing the modules of a run, then writing a run's files (``curves.csv`` included)."""
    code = "\n".join([
        "import math, sys",
        "from pathlib import Path",
        *(f"import {module}" for module in RUN_PATH),
        "from sbpbench.results.store import ResultsWriter, read_meta",
        f"writer = ResultsWriter(Path({str(tmp_path)!r}), {{}})",
        "row = {'experiment': 'e', 'dataset': 'd', 'solver': 's', 'solver_name': 'sbp', 'params': '', 'seed': 0,",
        "       'run': 0, 'checkpoint': 0, 'iteration': 1, 'epoch': 0.5, 'kernel_evals': 2, 'test_error': 0.25,",
        "       'kernel_evals_computed': math.nan, 'objective': None, 'n_support': 1, 'mistakes': 1.0}",
        "writer.add_run([row], {'solver': 's', 'run': 0, 'status': 'budget'})",
        "writer.flush(finished=True)",
        "assert read_meta(Path(writer.directory))['runs'][0]['status'] == 'budget'",
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pandas'))",
    ])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert (tmp_path / "curves.csv").read_text().splitlines()[1].startswith("e,d,s,sbp,,0,0,0,1,0.5,2,,")

"""Every script in scripts/ starts as its usage line says, ``python scripts/NAME.py``, from any
folder and without PYTHONPATH: the scripts import their helper modules (``bench_common``,
``cause_records``, ``sgd_references``, ``authors_sbp``) by name, never as ``scripts.NAME``."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
RUNNABLE = sorted(p.name for p in SCRIPTS.glob("*.py") if 'if __name__ == "__main__":' in p.read_text())


def test_the_runnable_scripts_are_found():
    assert {"sgd_causes.py", "sbp_causes.py", "pegasos_causes.py", "sgd_claim_causes.py"} <= set(RUNNABLE)


@pytest.mark.slow  # a process a script, each importing numpy, numba and scipy: a minute in all
@pytest.mark.parametrize("script", RUNNABLE)
def test_a_script_starts_from_any_folder_without_pythonpath(tmp_path, script):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, str(SCRIPTS / script), "--help"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout

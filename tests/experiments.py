"""The small experiments the tests of whole runs use: their configs, and a run in this process."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from sbpbench.execution import loop
from sbpbench.execution.executors import SequentialExecutor
from sbpbench.execution.sweep import run_experiments
from sbpbench.experiment import config


def adult_config(name: str | None = "tiny", *, n_train: int = 200, n_test: int = 200, **sections: Any) -> dict:
    """A config, as a mapping, of a small experiment on Adult (the bundled copy: no download).

    SBP and Pegasos, twice each from seed 0, for one epoch on ``n_train`` training and
    ``n_test`` test rows, with the Gaussian kernel of sigma^2 = 10 (Table 2 of the SBP paper),
    lambda = 1/n and nu = 0.011: cheap, and with real numbers to compare.

    Parameters
    ----------
    name : str or None
        The experiment's name (None: none given, the config file's stem names it).
    n_train, n_test : int
        The sample sizes.
    **sections
        Top-level keys (``kernel``, ``problem``, ``solvers``, ``budget``, ``runs``, ``seed``,
        ``description``...) replacing the defaults'; None leaves the key out.
    """
    doc = {"name": name, "dataset": {"name": "adult", "n_train": n_train, "n_test": n_test},
           "kernel": {"name": "gaussian", "sigma2": 10}, "problem": {"lambda": "1/n", "nu": 0.011},
           "solvers": ["sbp", "pegasos"], "budget": {"epochs": 1}, "runs": 2, "seed": 0, **sections}
    return {key: value for key, value in doc.items() if value is not None}


def write_config(path: Path, doc: dict) -> Path:
    """Write the config ``doc`` (a mapping, e.g. :func:`adult_config`'s) as YAML to ``path``; return ``path``."""
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def write_adult_config(folder: Path, name: str = "tiny", **changes: Any) -> Path:
    """``folder/NAME.yaml`` holding ``adult_config(name, **changes)``."""
    return write_config(folder / f"{name}.yaml", adult_config(name, **changes))


def interrupt_run(monkeypatch, at: int) -> None:
    """Make the ``at``-th run started in this process from now on end in Ctrl-C
    (:class:`KeyboardInterrupt`) as it starts; the others run as they would."""
    real, calls = loop.run_one, []

    def interrupted(*args: Any, **kwargs: Any) -> loop.RunResult:
        calls.append(1)
        if len(calls) == at:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(loop, "run_one", interrupted)


def run_sequentially(path: Path, results: Path, overrides: Sequence[str] = (), **options: Any) -> Path:
    """Run the config at ``path`` (with ``--set`` ``overrides``) in this process; its run folder under
    ``results``. ``options`` are :func:`~sbpbench.execution.sweep.run_experiments`'s (``resume``...)."""
    exp = config.load(path, list(overrides))
    return run_experiments([exp], results, SequentialExecutor(), **options)[0]

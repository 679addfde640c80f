"""What a run folder holds, read for comparisons between runs."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from sbpbench.results.store import read_curves


def curves(directory: Path) -> pd.DataFrame:
    """The curves without the wall-clock column (which legitimately differs between runs)."""
    return read_curves(directory / "curves.csv").drop(columns=["train_time_s"])


def meta(directory: Path) -> dict:
    """The run folder's meta.json."""
    return json.loads((directory / "meta.json").read_text())

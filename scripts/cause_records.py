"""What the cause scripts share: a record's readable page and writing the record.

``scripts/sgd_causes.py``, ``sgd_claim_causes.py``, ``sbp_causes.py`` and ``pegasos_causes.py``
each write a JSON record under ``results/paper/analyses/`` (``{"rows": {row: {"cause": ...,
"evidence": ...}}, ...}``, read by :class:`sbpbench.papers.declarations.Cause`) and, beside it, a
Markdown page of the same name with one line per row.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sbpbench.files import atomic_write


def cause_page(title: str, intro: str, rows: Iterable[tuple[str, str, str]], heading: str = "row") -> str:
    """A record as a page: ``title``, ``intro`` (a paragraph), then a table of ``rows``, each
    ``(what, cause, evidence)``, its first column headed ``heading``."""
    lines = [f"# {title}", "", intro, "", f"| {heading} | cause | evidence |", "|---|---|---|"]
    lines += [f"| {what} | {cause} | {evidence} |" for what, cause, evidence in rows]
    return "\n".join(lines) + "\n"


def write_record(out: Path, found: dict[str, Any], page: str) -> None:
    """Write the record ``found`` to ``out`` (JSON) and ``page`` beside it (``.md``), each at once
    (:func:`sbpbench.files.atomic_write`), and say so on stderr."""
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, json.dumps(found, indent=1) + "\n")
    atomic_write(out.with_suffix(".md"), page)
    print(f"wrote {out}", file=sys.stderr)

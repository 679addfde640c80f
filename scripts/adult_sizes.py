"""Adult's sizes as the SBP paper prints them, tested against the raw UCI files: a measurement
behind a difference in data sizes.

Usage: python scripts/adult_sizes.py [--raw DIR] [--out results/paper/analyses/sizes-adult.json]

The SBP paper's Table 2 prints 31562 training and 16282 test rows for Adult; our copy (LIBSVM's
a9a / a9a.t, which UCI's adult.data / adult.test give row for row) has 32561 and 16281. Two
hypotheses, each tested on the raw files UCI distributes (``DIR``: where ``sbpbench datasets
fetch adult`` keeps its downloads, by default):

* the test size counts the lines of ``adult.test``, its header line (``|1x3 Cross validator``)
  included: the file's non-blank lines;
* the training size is 32561 with two of its digits swapped (a typo): the printed number is a
  transposition of a count of the file and equals none of the counts (all rows, rows without a
  missing value ``?``, non-blank lines).

The record (JSON) holds every count and whether each hypothesis holds; ``sbpbench report``
quotes it in the size rows.
"""

from __future__ import annotations

import argparse
import json
import sys
from itertools import combinations
from pathlib import Path

from sbpbench.data.cache import cache_dir
from sbpbench.errors import UserError

#: Table 2's Adult sizes.
PRINTED = {"n_train": 31562, "n_test": 16282}
#: The raw file behind each size.
FILES = {"n_train": "adult.data", "n_test": "adult.test"}


def counts(path: Path) -> dict[str, int]:
    """Lines of a raw UCI Adult file: non-blank, header (``|``...), example rows, and example rows
    without a missing value (``?``)."""
    lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    filled = [line for line in lines if line]
    rows = [line for line in filled if not line.startswith("|")]
    return {"non_blank_lines": len(filled), "header_lines": len(filled) - len(rows), "rows": len(rows),
            "rows_without_missing_values": sum("?" not in row for row in rows)}


def transpositions(number: int) -> set[int]:
    """The numbers made from ``number`` by swapping two of its digits (no leading zero)."""
    digits = str(number)
    out = set()
    for i, j in combinations(range(len(digits)), 2):
        swapped = list(digits)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        if swapped[0] != "0" and swapped != list(digits):
            out.add(int("".join(swapped)))
    return out


def analyse(raw: Path) -> dict[str, object]:
    """Counts of both files and the verdict on each printed size (module docstring)."""
    found: dict[str, object] = {"printed": PRINTED}
    for split, name in FILES.items():
        path = raw / name
        if not path.is_file():
            raise UserError(f"{path}: no raw UCI file (run `sbpbench datasets fetch adult`, or pass --raw DIR)")
        c = counts(path)
        printed = PRINTED[split]
        equal = sorted(key for key, value in c.items() if value == printed)
        swapped = sorted(key for key, value in c.items() if printed in transpositions(value))
        found[split] = {"file": name, **c, "printed_equals": equal, "printed_is_a_transposition_of": swapped}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw", type=Path, default=None, help="folder holding adult.data and adult.test")
    parser.add_argument("--out", type=Path, default=Path("results") / "paper" / "analyses" / "sizes-adult.json")
    args = parser.parse_args()
    try:
        found = analyse(args.raw or cache_dir() / "downloads")
    except UserError as exc:
        sys.exit(f"adult_sizes.py: error: {exc}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()

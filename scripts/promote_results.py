"""Copy a finished run into the committed results: results/paper/<experiment>/.

Usage: python scripts/promote_results.py RUN_DIR [RUN_DIR ...] [--dest results/paper]

RUN_DIR is a folder written by ``sbpbench run`` (results/<experiment>/<run-id>/), or a promoted
copy completed in place with ``sbpbench run CONFIG --resume-from results/paper/<experiment>``. Its
meta.json is copied as is (with ``run_id`` and ``source`` added unless there already); curves.csv is
copied, gzip-compressed (``curves.csv.gz``, deterministic: no timestamp in the header) when larger
than 100 kB. The
experiment's previous copy is replaced. `sbpbench figures` and `sbpbench report` read from here.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
from pathlib import Path

#: Larger curves.csv files are stored gzip-compressed.
GZIP_ABOVE_BYTES = 100_000


def promote(run_dir: Path, dest_root: Path) -> Path:
    """Copy ``run_dir``'s curves.csv and meta.json to ``dest_root/<experiment>/``; returns that folder."""
    meta = json.loads((run_dir / "meta.json").read_text())
    data = (run_dir / "curves.csv").read_bytes()  # read first: run_dir may be dest (a resumed copy)
    dest = dest_root / meta["experiment"]
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    meta.setdefault("run_id", run_dir.name)  # a resumed promoted copy keeps its run's id and source
    meta.setdefault("source", str(run_dir))
    (dest / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    if len(data) > GZIP_ABOVE_BYTES:
        with open(dest / "curves.csv.gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
            gz.write(data)
    else:
        (dest / "curves.csv").write_bytes(data)
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--dest", type=Path, default=Path("results") / "paper")
    args = parser.parse_args()
    for run_dir in args.runs:
        print(promote(run_dir, args.dest))


if __name__ == "__main__":
    main()

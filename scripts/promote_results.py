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
import sys
from pathlib import Path

from sbpbench.errors import UserError
from sbpbench.results.store import curves_file, read_meta

#: Larger curves.csv files are stored gzip-compressed.
GZIP_ABOVE_BYTES = 100_000


def promote(run_dir: Path, dest_root: Path, extra: dict[str, bytes] | None = None) -> Path:
    """Copy ``run_dir``'s curves and meta.json to ``dest_root/<experiment>/``; returns that folder.

    ``extra`` maps further file names to their contents, written into the same folder (the
    redo script keeps the replaced curves so). The copy is written into a staging folder beside
    it and then put in place, so an interruption leaves the previous copy (or, promoting in
    place, ``run_dir`` itself) whole.

    Raises
    ------
    UserError
        ``run_dir`` has no readable meta.json naming its experiment, or no curves.
    """
    meta = read_meta(run_dir)
    experiment = meta.get("experiment")
    if not isinstance(experiment, str) or Path(experiment).name != experiment or experiment in ("", ".", ".."):
        raise UserError(f"{run_dir}/meta.json: key 'experiment': expected the experiment's name, "
                        f"got {experiment!r}")
    source = curves_file(run_dir)
    if source is None:
        raise UserError(f"{run_dir}: no curves.csv (expected a folder written by sbpbench run)")
    data = gzip.decompress(source.read_bytes()) if source.suffix == ".gz" else source.read_bytes()
    meta.setdefault("run_id", run_dir.name)  # a resumed promoted copy keeps its run's id and source
    meta.setdefault("source", str(run_dir))

    dest = dest_root / experiment
    staging, replaced = dest_root / f".{experiment}.promoting", dest_root / f".{experiment}.replaced"
    for stale in (staging, replaced):
        shutil.rmtree(stale, ignore_errors=True)
    staging.mkdir(parents=True)
    (staging / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    if len(data) > GZIP_ABOVE_BYTES:
        with open(staging / "curves.csv.gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
            gz.write(data)
    else:
        (staging / "curves.csv").write_bytes(data)
    for name, content in (extra or {}).items():
        (staging / name).write_bytes(content)
    if dest.exists():
        dest.rename(replaced)
    staging.rename(dest)
    shutil.rmtree(replaced, ignore_errors=True)
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--dest", type=Path, default=Path("results") / "paper")
    args = parser.parse_args()
    for run_dir in args.runs:
        try:
            print(promote(run_dir, args.dest))
        except (UserError, OSError) as exc:
            print(f"promote_results.py: error: {' '.join(str(exc).split())}", file=sys.stderr)
            sys.exit(2)


if __name__ == "__main__":
    main()

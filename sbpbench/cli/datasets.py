"""``sbpbench datasets list|fetch|info|verify``: the dataset cache from the command line.

The cache folder is ``$SBPBENCH_DATA``, or ``./datasets`` relative to the working directory
when unset. ``--mirror URL`` (or ``$SBPBENCH_MIRROR``) fetches every file as ``URL/<file
name>`` instead of from its original address (``http(s)://``, ``file://`` or a folder).
"""

from __future__ import annotations

import click

from sbpbench.data import sources
from sbpbench.data.fetch import MIRROR_ENV, FetchOptions, cache_dir, mirror_root, recorded_sha256
from sbpbench.errors import UserError


def _names(names: tuple[str, ...]) -> list[str]:
    unknown = [n for n in names if n not in sources.SOURCES]
    if unknown:
        raise UserError(f"unknown dataset {unknown[0]!r} (valid: {', '.join(sources.SOURCES)})")
    return list(names)


def _size(n_bytes: int) -> str:
    return f"{n_bytes / 1e6:.1f} MB" if n_bytes else "-"


@click.group()
def datasets() -> None:
    """Fetch, convert, inspect and verify the datasets of the papers.

    Cache: $SBPBENCH_DATA, else ./datasets in the current directory. Mirror: --mirror URL
    or $SBPBENCH_MIRROR (a folder, file:// or http(s):// root holding the files by name).
    """


@datasets.command("list")
def list_() -> None:
    """Every dataset: source, train/test sizes, features, task, cached or not, size on disk."""
    click.echo(f"cache: {cache_dir().resolve()}")
    click.echo(f"{'name':<15} {'train':>7} {'test':>7} {'features':>8}  {'cached':<6} {'size':>9}  task; source")
    for name, src in sources.SOURCES.items():
        cached = "yes" if sources.is_cached(name) else "no"
        click.echo(f"{name:<15} {src.n_train:>7} {src.n_test or '-':>7} {src.n_features:>8}  {cached:<6} "
                   f"{_size(sources.disk_size(name)):>9}  {src.task}; {src.origin.split(';')[0]}")


@datasets.command()
@click.argument("names", nargs=-1, required=True)
@click.option("--mirror", metavar="URL", help=f"Fetch every file as URL/<file name> (default ${MIRROR_ENV}).")
@click.option("--force", is_flag=True, help="Convert again even when cached.")
def fetch(names: tuple[str, ...], mirror: str | None, force: bool) -> None:
    """Download, verify, convert and cache NAMES (see `sbpbench datasets list`)."""
    options = FetchOptions(mirror=mirror_root(mirror))
    for name in _names(names):
        folder = sources.prepare(name, options, force=force)
        click.echo(f"{name}: {folder} ({_size(sources.disk_size(name))})")


@datasets.command()
@click.argument("name")
def info(name: str) -> None:
    """Provenance, checksums, conversion and cache paths of NAME."""
    src = sources.SOURCES[_names((name,))[0]]
    root = cache_dir().resolve()
    click.echo(f"{src.name}: {src.description}\n  task: {src.task}\n  source: {src.origin}")
    click.echo(f"  examples: {src.n_train} train / {src.n_test or 'no'} test; {src.n_features} features")
    if src.notes:
        click.echo(f"  notes: {src.notes}")
    for role, remote in src.files.items():
        path = sources.paths_in_cache(remote, root)
        click.echo(f"  file {remote.name} ({role}):")
        for url in remote.urls:
            click.echo(f"    url: {url}")
        for digest in remote.digests:
            click.echo(f"    pinned: {digest.describe()}")
        if not remote.digests:
            recorded = recorded_sha256(path)
            click.echo("    no published checksum: trusted on first download, then checked against the "
                       f"recorded sha256 ({recorded or 'not downloaded yet'})")
        click.echo(f"    cache: {path}{'' if path.exists() else ' (not downloaded)'}")
    manifest = sources.read_manifest(name, root)
    click.echo(f"  converted: {sources.dataset_dir(name, root)}" + ("" if manifest else " (not converted)"))
    for filename, sha in (manifest or {}).get("files", {}).items():
        click.echo(f"    {filename}: sha256 {sha}")


@datasets.command()
@click.argument("names", nargs=-1)
def verify(names: tuple[str, ...]) -> None:
    """Re-check the cached downloads and converted files of NAMES (default: every dataset in the cache).

    Prints each dataset's verdict (ok, INCOMPLETE, DAMAGED) and each file's state (ok,
    missing, partial: a .part file left by an interrupted download, damaged). Exit code 2
    when a dataset is damaged or incomplete.
    """
    bad = []
    names_checked = _names(names) or [name for name in sources.SOURCES if sources.in_cache(name)]
    for name in names_checked:
        state = sources.verify(name)
        click.echo(f"{name}: {state.verdict}")
        for file in state.files:
            click.echo(f"  {file.describe()}")
        if not state.ok:
            bad.append(name)
    if bad:
        raise UserError(f"{len(bad)} dataset(s) damaged or incomplete in {cache_dir()} "
                        f"(run: sbpbench datasets fetch --force {' '.join(bad)})")
    click.echo(f"{len(names_checked)} dataset(s) checked in {cache_dir()}")


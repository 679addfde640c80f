"""``sbpbench datasets list|fetch|info|verify``: the dataset cache from the command line.

The cache folder is ``$SBPBENCH_DATA``, or the per-user cache folder when unset
(:func:`sbpbench.data.cache.cache_dir`). ``--mirror URL`` (or ``$SBPBENCH_MIRROR``) fetches every file as ``URL/<file
name>`` instead of from its original address (``http(s)://``, ``file://`` or a folder).
"""

from __future__ import annotations

import click

from sbpbench.errors import UserError

# The data modules (numpy, scipy, requests) are imported by each command, so that
# `sbpbench --help` starts fast.


def _names(names: tuple[str, ...]) -> list[str]:
    from sbpbench.data.registry import REGISTRY

    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise UserError(f"unknown dataset {unknown[0]!r} (valid: {', '.join(REGISTRY)})")
    return list(names)


def _size(n_bytes: int) -> str:
    return f"{n_bytes / 1e6:.1f} MB" if n_bytes else "-"


@click.group()
def datasets() -> None:
    """Fetch, convert, inspect and verify the datasets of the papers.

    Cache: $SBPBENCH_DATA, else the user cache folder (~/.cache/sbpbench on Linux;
    `sbpbench datasets list` shows it). Mirror: --mirror URL
    or $SBPBENCH_MIRROR (a folder, file:// or http(s):// root holding the files by name).
    """


@datasets.command("list")
def list_() -> None:
    """Every dataset: source, train/test sizes, features, task, cached or not, size on disk."""
    from sbpbench.data import cache
    from sbpbench.data.cache import cache_dir, cache_origin
    from sbpbench.data.registry import REGISTRY

    click.echo(f"cache: {cache_dir().resolve()} ({cache_origin()})")
    click.echo(f"{'name':<15} {'train':>7} {'test':>7} {'features':>8}  {'cached':<6} {'size':>9}  task; source")
    for name, dataset in REGISTRY.items():
        cached = "yes" if cache.is_cached(name) else "no"
        click.echo(f"{name:<15} {dataset.n_train:>7} {dataset.n_test or '-':>7} {dataset.n_features:>8}  "
                   f"{cached:<6} {_size(cache.disk_size(name)):>9}  {dataset.task}; {dataset.origin.split(';')[0]}")


@datasets.command()
@click.argument("names", nargs=-1, required=True)
@click.option("--mirror", metavar="URL", help="Fetch every file as URL/<file name> (default $SBPBENCH_MIRROR).")
@click.option("--force", is_flag=True, help="Convert again even when cached.")
def fetch(names: tuple[str, ...], mirror: str | None, force: bool) -> None:
    """Download, verify, convert and cache NAMES (see `sbpbench datasets list`)."""
    from sbpbench.data import cache
    from sbpbench.data.fetch import FetchOptions, mirror_root

    options = FetchOptions(mirror=mirror_root(mirror))
    for name in _names(names):
        folder = cache.prepare(name, options, force=force)
        click.echo(f"{name}: {folder} ({_size(cache.disk_size(name))})")


@datasets.command()
@click.argument("name")
def info(name: str) -> None:
    """Provenance, checksums, conversion and cache paths of NAME."""
    from sbpbench.data import cache
    from sbpbench.data.cache import cache_dir
    from sbpbench.data.fetch import recorded_sha256
    from sbpbench.data.registry import REGISTRY

    dataset = REGISTRY[_names((name,))[0]]
    root = cache_dir().resolve()
    click.echo(f"{dataset.name}: {dataset.description}\n  task: {dataset.task}\n  source: {dataset.origin}")
    click.echo(f"  examples: {dataset.n_train} train / {dataset.n_test or 'no'} test; {dataset.n_features} features")
    if dataset.notes:
        click.echo(f"  notes: {dataset.notes}")
    for role, remote in dataset.files.items():
        path = cache.download_path(remote, root)
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
    manifest = cache.read_manifest(name, root)
    click.echo(f"  converted: {cache.dataset_dir(name, root)}" + ("" if manifest else " (not converted)"))
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
    from sbpbench.data import cache
    from sbpbench.data.cache import cache_dir
    from sbpbench.data.registry import REGISTRY

    bad = []
    names_checked = _names(names) or [name for name in REGISTRY if cache.in_cache(name)]
    for name in names_checked:
        state = cache.verify(name)
        click.echo(f"{name}: {state.verdict}")
        for file in state.files:
            click.echo(f"  {file.describe()}")
        if not state.ok:
            bad.append(name)
    if bad:
        raise UserError(f"{len(bad)} dataset(s) damaged or incomplete in {cache_dir()} "
                        f"(run: sbpbench datasets fetch --force {' '.join(bad)})")
    click.echo(f"{len(names_checked)} dataset(s) checked in {cache_dir()}")


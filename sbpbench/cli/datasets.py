"""``sbpbench datasets list|fetch|info|verify``: the dataset cache from the command line.

The cache folder is ``$SBPBENCH_DATA``, or the per-user cache folder when unset
(:func:`sbpbench.data.cache.cache_dir`). ``--mirror URL`` (or ``$SBPBENCH_MIRROR``) fetches every file as ``URL/<file
name>`` instead of from its original address (``http(s)://``, ``file://`` or a folder).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from sbpbench.cli.progress import wrap
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


def _download(name: str) -> str:
    """The bytes to download for ``name``: ``6.0 MB``, ``>3.5 MB`` when a file's size is not
    published, ``?`` when none is."""
    from sbpbench.data import cache

    size, known = cache.download_size(name)
    return _size(size) if known else f">{_size(size)}" if size else "?"


def _state(name: str) -> str:
    """Where ``name`` stands here: converted in the cache (and its size), bundled, partly fetched, or not."""
    from sbpbench.data import cache
    from sbpbench.data.registry import REGISTRY

    try:
        if cache.is_cached(name):
            return f"cached ({_size(cache.disk_size(name))})"
    except UserError:
        return f"DAMAGED (sbpbench datasets verify {name})"
    if REGISTRY[name].fallback is not None:
        return "bundled copy"
    return "fetched, not converted" if cache.in_cache(name) else "not fetched"


@click.group()
def datasets() -> None:
    """Fetch, convert, inspect and verify the datasets of the papers.

    Cache: $SBPBENCH_DATA, else the user cache folder (~/.cache/sbpbench on Linux;
    `sbpbench datasets list` shows it). Mirror: --mirror URL
    or $SBPBENCH_MIRROR (a folder, file:// or http(s):// root holding the files by name).
    """


def cache_root() -> Path:
    """The dataset cache's folder, its symbolic links resolved.

    Raises
    ------
    UserError
        When they loop (pathlib says so with a RuntimeError before Python 3.13, an OSError
        after, which the command line reports as such).
    """
    from sbpbench.data.cache import cache_dir, cache_origin

    root = cache_dir()
    try:
        return root.resolve()
    except RuntimeError:
        raise UserError(f"{root}: a loop of symbolic links; the dataset cache ({cache_origin()}) must be "
                        "a folder or a link to one") from None


@datasets.command("list")
def list_() -> None:
    """Every dataset: train/test sizes, features, download size, and whether it is here.

    "bundled copy": the dataset ships with sbpbench and needs no download; "cached": converted
    in the cache (size on disk). `sbpbench datasets info NAME` shows its task, sources and checksums.
    """
    from sbpbench.data.cache import cache_origin
    from sbpbench.data.registry import REGISTRY

    click.echo(wrap(f"cache: {cache_root()} ({cache_origin()})"))
    click.echo(f"{'name':<14} {'train':>7} {'test':>7} {'features':>9} {'download':>9}  state")
    for name, dataset in REGISTRY.items():
        click.echo(f"{name:<14} {dataset.n_train:>7} {dataset.n_test or '-':>7} {dataset.n_features:>9} "
                   f"{_download(name):>9}  {_state(name)}")
    click.echo(wrap("download: the published files' size (? where not published); "
                    "sbpbench datasets info NAME: task, sources, checksums"))


@datasets.command()
@click.argument("names", nargs=-1, required=True)
@click.option("--mirror", metavar="URL", help="Fetch every file as URL/<file name> (default $SBPBENCH_MIRROR).")
@click.option("--force", is_flag=True,
              help="Convert again even when cached; damaged downloads are fetched again (replaced once verified).")
def fetch(names: tuple[str, ...], mirror: str | None, force: bool) -> None:
    """Download, verify, convert and cache NAMES (see `sbpbench datasets list`).

    Then deletes the remembered checksums (<cache>/.checksums) of files gone or changed since.
    """
    from sbpbench.data import cache
    from sbpbench.data.fetch import MIRROR_ENV, FetchOptions, mirror_root

    options = FetchOptions(mirror=mirror_root(mirror), mirror_advice=f"pass --mirror DIR (or set {MIRROR_ENV})")
    for name in _names(names):
        folder = cache.prepare(name, options, force=force)
        click.echo(f"{name}: {folder} ({_size(cache.disk_size(name))})")
    cache.prune_checksums()


@datasets.command()
@click.argument("name")
def info(name: str) -> None:
    """Provenance, checksums, conversion and cache paths of NAME (and its bundled copy, if it has one)."""
    from sbpbench.data import cache
    from sbpbench.data.fetch import recorded_sha256
    from sbpbench.data.registry import REGISTRY

    dataset = REGISTRY[_names((name,))[0]]
    root = cache_root()
    try:
        manifest, damage = cache.read_manifest(name, root), ""
    except UserError as exc:
        manifest, damage = None, f" (damaged: {exc})"
    converted = manifest is not None
    bundled = dataset.fallback is not None and not converted
    click.echo(wrap(f"{dataset.name}: {dataset.description}"))
    click.echo(wrap(f"  task: {dataset.task}"))
    click.echo(wrap(f"  source: {dataset.origin}"))
    click.echo(f"  examples: {dataset.n_train} train / {dataset.n_test or 'no'} test; {dataset.n_features} features")
    if dataset.notes:
        click.echo(wrap(f"  notes: {dataset.notes}"))
    if dataset.fallback is not None:
        use = (f"runs use it while {name} is not converted here, with no download; `sbpbench datasets fetch "
               f"{name}` downloads and converts the files below instead") if bundled else \
            f"not used: {name} is converted here"
        click.echo(wrap(f"  bundled: {dataset.fallback.what}, shipped with sbpbench and checked at every load; {use}"))
    for role, remote in dataset.files.items():
        path = cache.download_path(remote, root)
        click.echo(f"  file {remote.name} ({role}" + (f", {_size(remote.size)}" if remote.size else "") + "):")
        for url in remote.urls:
            click.echo(f"    url: {url}")
        for digest in remote.digests:
            click.echo(f"    pinned: {digest.describe()}")
        if not remote.digests:
            try:
                recorded = recorded_sha256(path)
            except UserError as exc:
                recorded = f"damaged: {exc}"
            click.echo(wrap("    no published checksum: trusted on first download, then checked against the "
                            f"recorded sha256 ({recorded or 'not downloaded yet'})"))
        missing = "" if os.path.lexists(path) else \
            " (not downloaded" + ("; not needed)" if bundled or converted else ")")
        click.echo(f"    cache: {path}{missing}")
    state = damage or ("" if converted else " (not converted)")
    click.echo(wrap(f"  converted: {cache.dataset_dir(name, root)}{state}"))
    for filename, sha in (manifest or {}).get("files", {}).items():
        click.echo(f"    {filename}: sha256 {sha}")


@datasets.command()
@click.argument("names", nargs=-1)
def verify(names: tuple[str, ...]) -> None:
    """Re-check the cached downloads and converted files of NAMES (default: every dataset in the cache).

    Prints each dataset's verdict (ok, "ok (bundled copy)", INCOMPLETE, DAMAGED) and each
    file's state (ok, missing, partial: a .part file left by an interrupted download, damaged);
    a dataset shipped with sbpbench and not converted here is its bundled copy, checked too (by
    default every such dataset is checked). Exit code 2 when a dataset is damaged or incomplete.
    Remembered checksums of files gone or changed are deleted (as by `fetch`).
    """
    from sbpbench.data import cache
    from sbpbench.data.cache import cache_dir
    from sbpbench.data.registry import REGISTRY

    bad = []
    names_checked = _names(names) or [name for name, dataset in REGISTRY.items()
                                      if cache.in_cache(name) or dataset.fallback is not None]
    for name in names_checked:
        state = cache.verify(name)
        click.echo(f"{name}: {state.verdict}")
        for file in ((state.bundled,) if state.bundled else ()) + state.files:
            click.echo(wrap(f"  {file.describe()}"))
        if not state.ok:
            bad.append(name)
    cache.prune_checksums()
    if bad:
        raise UserError(f"{len(bad)} dataset(s) damaged or incomplete in {cache_dir()} "
                        f"(run: sbpbench datasets fetch --force {' '.join(bad)})")
    click.echo(f"{len(names_checked)} dataset(s) checked in {cache_dir()}")


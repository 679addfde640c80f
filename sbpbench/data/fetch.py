"""Downloading dataset files: verified, resumable, locked, atomic.

A :class:`RemoteFile` names one file of a dataset, the addresses it can be fetched from
and the checksums that identify it. :func:`fetch_file` puts it at a given path (the cache
decides which, see :mod:`sbpbench.data.cache`) and guarantees that what is there is
complete and verified:

- requests streams the body with connect and read timeouts; 5xx answers and connection
  errors (reset, dropped, stalled past the read timeout) are retried with exponential
  backoff, resuming with an HTTP ``Range`` request where the server allows it;
- an address is abandoned when it is too slow: below a minimum average rate after a grace
  period (a server trickling bytes), or past an overall time limit, retries included;
- when standard error is not a terminal, a plain line every few seconds says how the
  download goes or how long no data came, so that a stalled download is never silent;
- the bytes go to ``<name>.part`` and are moved into place (``os.replace``) only after the
  checksum matches; a mismatch deletes the partial file;
- a file already at the path is verified (its pinned checksum, or the sha256 recorded at its
  download) before it is returned, and refused (:class:`DamagedDownload`) when it does not match
  or is no regular file: a damaged cache is never used. Asked to replace it (``datasets fetch
  --force``), the download goes to ``<name>.part`` as any other and replaces the damaged file only
  once verified: a failed or interrupted download leaves it as it was;
- an exclusive lock (:func:`~sbpbench.data.lock.file_lock`) makes two processes (or threads)
  that fetch the same file download it once: the second waits and then finds it there.

Checksums: each file carries one or more :class:`Digest`; the file is accepted when one of
them matches (for example MNIST: the md5 of the canonical ``.gz`` archive, or the sha256
of the decompressed content, because some mirrors re-compress). A file with no pinned
checksum is accepted on first download and its sha256 is recorded beside it
(``<file>.sha256``, trust on first use); later verification compares against that record.

Mirrors: with ``mirror`` (``--mirror`` or ``SBPBENCH_MIRROR``), every file is looked up as
``<mirror>/<name>`` instead of at its original addresses. A mirror is an ``http(s)://``
root, a ``file://`` URL or a plain folder.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sbpbench.data.checksums import MAX_RECORD_BYTES, digests, sha256_of
from sbpbench.data.lock import file_lock
from sbpbench.errors import UserError
from sbpbench.files import atomic_write, read_regular

if TYPE_CHECKING:  # imported where a download starts: a run from the cache does without them (issue #37)
    import requests

#: Environment variable naming a mirror root.
MIRROR_ENV = "SBPBENCH_MIRROR"
#: Environment variable that forbids downloads from anywhere but a mirror or this machine's
#: loopback addresses (the test suite sets it, so it can never reach the internet).
OFFLINE_ENV = "SBPBENCH_OFFLINE"
NET_CHUNK = 1 << 16  # network reads: bytes of a read cut short are lost, so keep them small


def mirror_root(explicit: str | None = None) -> str | None:
    """The mirror to use: ``explicit`` (``--mirror``) or ``$SBPBENCH_MIRROR``, else None."""
    return explicit or os.environ.get(MIRROR_ENV) or None


#: ``Digest.source`` of a checksum taken from a byte-exact copy of the published file, checked for sbpbench.
CHECKED_COPY = "taken from a byte-exact copy of the published file, checked for sbpbench"


@dataclass(frozen=True)
class Digest:
    """A checksum: ``algo`` (``sha256`` or ``md5``) of the file or of its decompressed content.

    Parameters
    ----------
    algo : str
        ``"sha256"`` or ``"md5"``.
    hexdigest : str
        The expected digest.
    content : bool
        True when the digest is of the decompressed content (``.gz``/``.bz2``), so that a
        re-compressed copy of the same data is accepted.
    source : str
        Where the value comes from (shown by ``sbpbench datasets info``).
    """

    algo: str
    hexdigest: str
    content: bool = False
    source: str = ""

    def describe(self) -> str:
        """``sha256 abc... (of the file)`` style text."""
        what = "decompressed content" if self.content else "file"
        return f"{self.algo} {self.hexdigest} of the {what}" + (f" [{self.source}]" if self.source else "")


@dataclass(frozen=True)
class RemoteFile:
    """One downloadable file.

    Parameters
    ----------
    name : str
        File name in the cache and under a mirror root (unique across all datasets).
    urls : tuple of str
        Original addresses, tried in order.
    digests : tuple of Digest
        Accepted checksums (any one matching is enough); empty means trust on first use.
    size : int, optional
        Bytes of the published file, where known (shown by ``sbpbench datasets list``; a mirror's
        re-compressed copy may differ).
    """

    name: str
    urls: tuple[str, ...]
    digests: tuple[Digest, ...] = field(default=())
    size: int | None = None


@dataclass
class FetchOptions:
    """How downloads behave.

    Parameters
    ----------
    mirror : str, optional
        Mirror root replacing the original addresses.
    connect_timeout, read_timeout : float
        Seconds to wait for a connection, and between two received chunks.
    attempts : int
        Tries per address (5xx and connection errors); each later try resumes.
    backoff : float
        Seconds before the second try, doubled for each further one.
    min_rate, grace : float
        An address that has delivered less than ``min_rate`` bytes per second on average
        (its tries together) once ``grace`` seconds have passed is abandoned.
    deadline : float
        Seconds at most for one file from one address, tries included.
    progress : bool
        Show progress on standard error: a redrawn line on a terminal, else a plain line
        every ``notice_every`` seconds.
    notice_every : float
        Seconds between the plain progress lines.
    mirror_advice : str
        How to point at a folder holding the files, in the words of the interface that fetches
        (errors suggest it after "copy the file into a folder and"): the environment variable by
        default; ``sbpbench datasets fetch`` names its ``--mirror``.
    """

    mirror: str | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    attempts: int = 4
    backoff: float = 0.5
    min_rate: float = 20e3
    grace: float = 60.0
    deadline: float = 4 * 3600.0
    progress: bool = True
    notice_every: float = 15.0
    mirror_advice: str = f"set {MIRROR_ENV} to it"


class DamagedDownload(UserError):
    """A download already in the cache that fails its checksum (one line naming it): never used."""


class _Retry(Exception):
    """A transient failure worth another try (5xx, dropped or stalled connection)."""


class _Fail(Exception):
    """A failure of one address that another try cannot fix (404, unreachable host, too slow).

    ``kind`` says what to suggest: ``"missing"`` (the address does not hold the file),
    ``"server"`` (the server failed or was too slow) or ``"network"`` (no connection).
    """

    def __init__(self, reason: str, kind: str):
        super().__init__(reason)
        self.kind = kind


# ----------------------------------------------------------------------------- checksums


def check_file(remote: RemoteFile, path: Path, store: Path | None = None) -> tuple[bool, str]:
    """Whether ``path`` matches one of ``remote``'s digests, and the actual digests as text
    (``store``: where the digests are remembered, see :func:`~sbpbench.data.checksums.digests`)."""
    wanted = {(d.algo, d.content) for d in remote.digests} | {("sha256", False)}
    actual = digests(path, wanted, remote.name, store, "cached download")
    ok = any(actual.get((d.algo, d.content)) == d.hexdigest.lower() for d in remote.digests)
    shown = ", ".join(
        f"{algo} {hexd} of the {'decompressed content' if content else 'file'}"
        for (algo, content), hexd in sorted(actual.items())
        if any((d.algo, d.content) == (algo, content) for d in remote.digests)
    )
    return ok, shown or f"sha256 {actual[('sha256', False)]}"


def record_path(path: Path) -> Path:
    """The record beside a download (``<name>.sha256``): its sha256 and where it came from."""
    return path.with_name(path.name + ".sha256")


def recorded_sha256(path: Path) -> str | None:
    """The sha256 recorded beside a download (``<name>.sha256``), or None when there is no record.

    Raises
    ------
    UserError
        The record is there but is no regular file, too large, or not a record sbpbench wrote.
    """
    record = record_path(path)
    if not os.path.lexists(record):
        return None
    data = read_regular(record, "download record", MAX_RECORD_BYTES)
    try:
        sha = json.loads(data)["sha256"]
    except (ValueError, KeyError, TypeError):
        sha = None
    if not (isinstance(sha, str) and len(sha) == 64):
        raise UserError(f"{record}: damaged download record (expected {{\"sha256\": ...}} as sbpbench writes it)")
    return sha


def verify_download(remote: RemoteFile, path: Path, store: Path | None = None) -> str | None:
    """Re-check a cached download; None when good, else what is wrong (one line naming the file).

    A pinned file must match one of its digests; a file without a pinned checksum, the sha256
    recorded at its download (trust on first use). The digests are remembered in ``store``
    (see :func:`~sbpbench.data.checksums.digests`), so an unchanged file is not hashed again.
    Something that is no regular file (a folder, a device, a named pipe) is reported, not read.
    """
    if not os.path.lexists(path):
        return f"{path}: missing"
    try:
        if remote.digests:
            ok, actual = check_file(remote, path, store)
            return None if ok else f"{path}: checksum mismatch (expected {_expected(remote)}; got {actual})"
        recorded = recorded_sha256(path)
        actual = sha256_of(path, store, "cached download")
    except UserError as exc:
        return str(exc)
    if recorded is not None and recorded != actual:
        return f"{path}: sha256 {actual} differs from the {recorded} recorded at download"
    return None


def _expected(remote: RemoteFile) -> str:
    return " or ".join(d.describe() for d in remote.digests)


# ----------------------------------------------------------------------------- downloading


class _Progress:
    """What one download from one address has received, shown on standard error.

    On a terminal a line is redrawn as data arrive. Otherwise a background thread prints a
    plain line every ``every`` seconds while the download runs (``downloading NAME: 12.3 MB,
    0.50 MB/s`` or ``waiting for NAME: no data for 30 s``). Use it as a context manager.
    """

    def __init__(self, name: str, enabled: bool, every: float):
        self.name = name
        self.enabled = enabled
        self.every = every
        self.tty = sys.stderr.isatty()
        self.t0 = self.last_data = time.monotonic()
        self.received = 0  # bytes from this address, every try together
        self.size = 0  # bytes of the file so far
        self.total: int | None = None
        self._drawn = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._notices, name=f"progress {name}", daemon=True)

    def __enter__(self) -> _Progress:
        if self.enabled and not self.tty:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def update(self, new: int, size: int, total: int | None, final: bool = False) -> None:
        """``new`` bytes arrived; the file now has ``size`` of ``total`` (None: unknown) bytes."""
        now = time.monotonic()
        self.received += new
        self.size, self.total = size, total
        if new:
            self.last_data = now
        if not (self.enabled and self.tty) or (not final and now - self._drawn < 0.2):
            return
        self._drawn = now
        sys.stderr.write(f"\r  {self.name:<40} {self._amount()}  {self._rate(now)}" + ("\n" if final else ""))
        sys.stderr.flush()

    def elapsed(self) -> float:
        """Seconds since the first try at this address."""
        return time.monotonic() - self.t0

    def _amount(self) -> str:
        return f"{self.size / 1e6:.1f}" + (f"/{self.total / 1e6:.1f}" if self.total else "") + " MB"

    def _rate(self, now: float) -> str:
        return f"{self.received / max(now - self.t0, 1e-9) / 1e6:.2f} MB/s"

    def _notices(self) -> None:
        while not self._stop.wait(self.every):
            now = time.monotonic()
            idle = now - self.last_data
            line = (f"waiting for {self.name}: no data for {idle:.0f} s ({self._amount()} so far)"
                    if idle >= self.every else f"downloading {self.name}: {self._amount()}, {self._rate(now)}")
            print(line, file=sys.stderr, flush=True)


def _too_slow(progress: _Progress, opts: FetchOptions) -> str | None:
    """Why the address should be abandoned for slowness (see :class:`FetchOptions`), or None."""
    elapsed = progress.elapsed()
    if elapsed > opts.deadline:
        return f"not complete after {opts.deadline:g} s (the limit per file)"
    if elapsed > opts.grace and progress.received < opts.min_rate * elapsed:
        return (f"too slow: {progress.received / 1e3:.1f} kB in {elapsed:.0f} s, below the minimum "
                f"{opts.min_rate / 1e3:g} kB/s")
    return None


def candidate_urls(remote: RemoteFile, mirror: str | None) -> list[str]:
    """The addresses to try: ``<mirror>/<name>`` with a mirror, else the original ones."""
    if not mirror:
        return list(remote.urls)
    if "://" not in mirror:
        return [Path(mirror).resolve().joinpath(remote.name).as_uri()]
    return [mirror.rstrip("/") + "/" + urllib.parse.quote(remote.name)]


def _is_loopback(url: str) -> bool:
    """True for addresses on this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    host = urllib.parse.urlparse(url).hostname or ""
    return host == "localhost" or host == "::1" or host.startswith("127.")


def _copy_local(url: str, part: Path) -> None:
    """Copy a ``file://`` URL to ``part``."""
    import urllib.request

    source = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
    try:
        shutil.copyfile(source, part)
    except OSError as exc:
        raise _Fail(exc.strerror or str(exc), "missing") from None


def _http_get(session: requests.Session, url: str, part: Path, opts: FetchOptions, progress: _Progress) -> None:
    """One try at streaming ``url`` into ``part``, resuming from its current size.

    The body is read as it arrives (``read1``), so that a server sending a byte now and then
    is measured, and abandoned by :func:`_too_slow`, between its bytes.
    """
    import requests
    import urllib3

    have = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    try:
        resp = session.get(url, stream=True, headers=headers,
                           timeout=(opts.connect_timeout, opts.read_timeout))
    except requests.exceptions.ConnectTimeout:
        raise _Fail("connection timed out", "network") from None
    except requests.exceptions.ConnectionError as exc:
        if _unreachable(exc):
            raise _Fail(_reason(exc), "network") from None
        raise _Retry(_reason(exc)) from None
    except requests.exceptions.RequestException as exc:
        raise _Retry(_reason(exc)) from None
    with resp:
        if resp.status_code == 416 and have:  # asked for bytes past the end: start again
            part.unlink()
            raise _Retry("range not satisfiable")
        if resp.status_code >= 500:
            raise _Retry(f"HTTP {resp.status_code}")
        if resp.status_code not in (200, 206):
            raise _Fail(f"HTTP {resp.status_code}", "missing")
        if resp.status_code == 200:
            have = 0  # the server ignored the range: start over
        length = resp.headers.get("Content-Length")
        expected_total = have + int(length) if length and length.isdigit() else None
        received = have
        try:
            with open(part, "ab" if have else "wb") as fh:
                while chunk := resp.raw.read1(NET_CHUNK, decode_content=True):
                    fh.write(chunk)
                    received += len(chunk)
                    progress.update(len(chunk), received, expected_total)
                    if slow := _too_slow(progress, opts):
                        raise _Fail(slow, "server")
        except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError) as exc:
            raise _Retry(f"connection lost after {received} bytes ({_reason(exc)})") from None
        if expected_total is not None and received < expected_total:
            raise _Retry(f"body truncated at {received} of {expected_total} bytes")
        progress.update(0, received, expected_total, final=True)


def _unreachable(exc: Exception) -> bool:
    """True for failures that retrying will not fix: unknown host, no route, refused."""
    text = repr(exc)
    return any(s in text for s in ("NameResolutionError", "Name or service not known", "nodename nor servname",
                                   "Temporary failure in name resolution", "Network is unreachable",
                                   "No route to host", "Connection refused"))


def _reason(exc: Exception) -> str:
    """A short reason: the innermost error's class and message, without the URL repeated."""
    text = repr(exc)
    for marker, short in (("NameResolutionError", "cannot resolve the host name"),
                          ("Connection refused", "connection refused"),
                          ("Network is unreachable", "network unreachable"),
                          ("No route to host", "no route to host"),
                          ("Read timed out", "read timed out"),
                          ("IncompleteRead", "incomplete read"),
                          ("Connection reset", "connection reset"),
                          ("RemoteDisconnected", "server closed the connection")):
        if marker in text:
            return short
    return (str(exc).splitlines()[0] if str(exc) else type(exc).__name__)[:120]


def partial_path(path: Path) -> Path:
    """Where a download to ``path`` keeps its bytes until they are verified (``<path>.part``);
    a file there was left by an interrupted download."""
    return path.with_name(path.name + ".part")


def fetch_file(remote: RemoteFile, path: Path, lock: Path, options: FetchOptions | None = None,
               store: Path | None = None, replace: bool = False) -> Path:
    """Download ``remote`` to ``path`` unless a file is already there, which is verified instead.

    Parameters
    ----------
    remote : RemoteFile
        What to fetch.
    path : pathlib.Path
        Where the verified file goes (its folder is created); its sha256 is recorded beside
        it, in ``<path>.sha256``.
    lock : pathlib.Path
        The lock file that makes concurrent fetches of ``remote`` download it once.
    options : FetchOptions, optional
        Mirror, timeouts, retries, progress.
    store : pathlib.Path, optional
        Where the digests of a file already there are remembered (see
        :func:`~sbpbench.data.checksums.digests`).
    replace : bool
        Download a file already there that does not verify again (``datasets fetch --force``).
        It stays as it was until the new bytes are complete and verified, then is replaced by
        them in one rename: a download that fails or is interrupted loses nothing. A folder in
        its place (which may hold anything) is refused, not replaced.

    Returns
    -------
    pathlib.Path
        ``path``, verified.

    Raises
    ------
    UserError
        When no address delivers the file (the message lists the addresses tried and how to
        use a mirror), or when the bytes do not match the pinned checksum (naming the file,
        the expected and the actual checksum). Nothing partial is left behind, and a file
        already there is as it was.
    DamagedDownload
        When the file already there does not verify (or is no regular file) and ``replace``
        is false: it is not used.
    """
    opts = options or FetchOptions()
    path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(lock):
        if os.path.lexists(path):  # verified, offline too
            problem = verify_download(remote, path, store)
            if problem is None:
                return path
            if not replace:
                raise DamagedDownload(problem)
            if path.is_dir() and not path.is_symlink():
                raise UserError(f"{path}: it is a folder where the cache keeps the download {remote.name}; "
                                "remove it and fetch again")
        urls = _addresses(remote, opts)
        part = partial_path(path)
        if os.path.isdir(part) and not os.path.islink(part):
            raise UserError(f"{part}: it is a folder where a download keeps its partial file; remove it")
        part.unlink(missing_ok=True)  # left by a killed process (its source may differ), or no file
        tried: list[str] = []
        kinds: list[str] = []
        mismatch: str | None = None
        import requests

        session = requests.Session()
        try:
            for url in urls:
                try:
                    _try_url(session, url, part, opts, remote)
                except _Fail as exc:
                    tried.append(f"{url} ({exc})")
                    kinds.append(exc.kind)
                else:
                    ok, actual = check_file(remote, part) if remote.digests else (True, "")
                    if ok:  # the record first: cut short before the rename, the file left fails it
                        atomic_write(record_path(path),
                                     json.dumps({"sha256": sha256_of(part), "url": url,
                                                 "pinned": bool(remote.digests)}).encode())
                        os.replace(part, path)
                        return path
                    mismatch = f"{url}: checksum mismatch for {remote.name}: expected {_expected(remote)}; got {actual}"
                    tried.append(f"{url} (checksum mismatch)")
                part.unlink(missing_ok=True)
        finally:
            session.close()
            part.unlink(missing_ok=True)
    if mismatch is not None:
        raise UserError(mismatch)
    raise UserError(f"cannot download {remote.name}: tried {'; '.join(tried)}; "
                    f"{_hint(kinds, opts.mirror, opts.mirror_advice)}")


def _addresses(remote: RemoteFile, opts: FetchOptions) -> list[str]:
    """The addresses to try (:func:`candidate_urls`), only loopback ones under ``$SBPBENCH_OFFLINE``
    without a mirror; none is a :class:`UserError` saying how to give a mirror."""
    urls = candidate_urls(remote, opts.mirror)
    if not opts.mirror and os.environ.get(OFFLINE_ENV, "") not in ("", "0"):
        urls = [u for u in urls if _is_loopback(u)]
        if not urls:
            raise UserError(f"cannot download {remote.name}: {OFFLINE_ENV} is set and no mirror is given "
                            f"(the sources are {', '.join(remote.urls)}); to use a folder holding the file, "
                            f"{opts.mirror_advice}")
    return urls


def _hint(kinds: list[str], mirror: str | None, advice: str) -> str:
    """What to do about failures of the kinds given (see :class:`_Fail`), each said once;
    ``advice`` says how to give a mirror (:attr:`FetchOptions.mirror_advice`)."""
    copy = f"copy the file into a folder and {advice}"
    hints = {
        "missing": "check the mirror holds the file under that name" if mirror else
                   f"the file is not (or no longer) at that address: {copy}",
        "server": "the server is in trouble: try again later"
                  + (", or use another mirror" if mirror else f", or {copy}"),
        "network": "check the mirror's address and the network" if mirror else f"without network, {copy}",
    }
    return "; ".join(dict.fromkeys(hints[kind] for kind in kinds))


def _try_url(session: requests.Session, url: str, part: Path, opts: FetchOptions, remote: RemoteFile) -> None:
    """Fetch ``url`` into ``part`` with retries, within the time limits of ``opts``.

    Raises
    ------
    _Fail
        Why the address did not deliver the file.
    """
    if url.startswith("file://"):
        _copy_local(url, part)
        return
    reason = "no attempt"
    with _Progress(remote.name, opts.progress, opts.notice_every) as progress:
        for attempt in range(max(1, opts.attempts)):
            if attempt:
                if slow := _too_slow(progress, opts):
                    raise _Fail(f"{slow}; last: {reason}", "server")
                time.sleep(opts.backoff * 2 ** (attempt - 1))
            try:
                _http_get(session, url, part, opts, progress)
                return
            except _Retry as exc:
                reason = str(exc)
            except OSError as exc:
                if exc.errno == errno.ENOSPC:
                    raise UserError(f"{part}: no space left on the device") from None
                raise
    raise _Fail(f"{reason}, after {opts.attempts} tries", "server")

"""The sample outputs of the docs, made by running the commands they show, so that none goes stale.

Usage: python scripts/doc_samples.py [--check] [PAGE ...]   (``make docs``; default: README.md and docs/*.md)

A sample is a ``console`` block right after a marker line; the block's first line is the command
after ``$ ``, the rest is what it printed::

    <!-- sample: from='^best setting:' until='^Test error' -->
    ```console
    $ sbpbench run examples/side-by-side.yaml --no-plot
    best setting: ...
    ```

Without ``--check`` the script runs each sample's command and rewrites the lines below the command;
with it, it rewrites nothing and exits 1 naming each sample whose committed output differs from the
new one after masking (tests/test_doc_samples.py does the same check as a test).

How a command runs: in a new temporary folder holding ``configs`` (a link to the checkout's) and a
copy of ``examples/``, with ``SBPBENCH_OFFLINE=1`` and an empty ``SBPBENCH_DATA`` (so the bundled
data and no network), ``COLUMNS=80``; ``sbpbench`` is ``python -m sbpbench`` with the checkout first
on ``PYTHONPATH``, ``python`` this interpreter. What it printed is written as it is, except that
the temporary folder's path is removed and ``python -m sbpbench`` is written ``sbpbench``.

The marker's options (shell words, ``KEY=VALUE``):

* ``setup=COMMAND``: a command run first, its output not shown (repeatable);
* ``stream=stderr``: show the standard error (default: the standard output);
* ``from=REGEX``: start at the first line matching; ``until=REGEX``: stop before the first later
  line matching, and write ``...`` for the lines left out;
* ``interrupt=REGEX``: press Ctrl-C (send SIGINT) when a line of the standard error matches;
* ``mask=REGEX``: a part that varies from run to run, such as a time (repeatable).

The masking rule (for the comparison only: the docs keep the output as printed): run ids (UTC
start times such as ``20261129T033711Z``) and the matches of each ``mask`` become ``…``, then every
run of spaces becomes one space (so that a masked number of another width moves no column).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The marker line before a sample's block.
MARKER = re.compile(r"^<!-- sample:(.*)-->$")
#: What a command's own run ids look like (the UTC time it started).
RUN_ID = re.compile(r"\b\d{8}T\d{6}Z\b")
#: The options a marker may give.
OPTIONS = {"setup", "stream", "from", "until", "interrupt", "mask"}
#: What stands for a masked part.
MASKED = "…"


@dataclass
class Sample:
    """One sample: where it is (the page and the line numbers of its block's fences), its command,
    the output written below it and the marker's options."""

    page: Path
    start: int
    end: int
    command: str
    output: list[str]
    options: dict[str, list[str]] = field(default_factory=dict)

    def option(self, key: str) -> str | None:
        """The marker's value of ``key``, or None when it gives none."""
        values = self.options.get(key)
        return values[-1] if values else None

    def where(self) -> str:
        """``page:line`` of the block, for messages."""
        return f"{shown(self.page)}:{self.start + 1}"


def shown(page: Path) -> Path:
    """``page`` relative to the checkout when it is inside it."""
    return page.relative_to(ROOT) if page.is_relative_to(ROOT) else page


def pages() -> list[Path]:
    """README.md and every page of docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def samples(page: Path) -> list[Sample]:
    """The samples of ``page``, in order.

    Raises
    ------
    ValueError
        A marker not followed by a ``console`` block whose first line is ``$ COMMAND``, an
        unknown option, or a block left open.
    """
    lines = page.read_text(encoding="utf-8").split("\n")
    found = []
    for k, line in enumerate(lines):
        marker = MARKER.match(line)
        if marker is None:
            continue
        place = f"{page}:{k + 1}"
        if k + 2 >= len(lines) or lines[k + 1] != "```console" or not lines[k + 2].startswith("$ "):
            raise ValueError(f"{place}: a sample marker must be followed by ```console and a line '$ COMMAND'")
        end = next((j for j in range(k + 3, len(lines)) if lines[j] == "```"), None)
        if end is None:
            raise ValueError(f"{place}: the sample's block is not closed")
        options: dict[str, list[str]] = {}
        for word in shlex.split(marker.group(1)):
            key, sep, value = word.partition("=")
            if not sep or key not in OPTIONS:
                raise ValueError(f"{place}: unknown sample option {word!r} (valid: {', '.join(sorted(OPTIONS))})")
            options.setdefault(key, []).append(value)
        found.append(Sample(page, k + 1, end, lines[k + 2][2:], lines[k + 3:end], options))
    return found


def argv(command: str) -> list[str]:
    """The program and arguments of a command as the docs write it: ``sbpbench`` runs this
    interpreter's ``-m sbpbench``, ``python`` this interpreter."""
    words = shlex.split(command)
    head = {"sbpbench": [sys.executable, "-m", "sbpbench"], "python": [sys.executable]}.get(words[0], words[:1])
    return head + words[1:]


def environment(folder: Path) -> dict[str, str]:
    """The environment of a sample's commands: the checkout first on ``PYTHONPATH``, no network,
    an empty data cache inside ``folder``, 80 columns."""
    env = dict(os.environ)
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
               SBPBENCH_OFFLINE="1", SBPBENCH_DATA=str(folder / "data"), COLUMNS="80")
    env.pop("SBPBENCH_MIRROR", None)
    return env


def ctrl_c_heard() -> None:
    """Make SIGINT stop the command again where this process ignores it (a job started in the
    background of a shell does), since a process inherits an ignored SIGINT and Python keeps it so."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def execute(command: str, folder: Path, interrupt: str | None = None) -> tuple[int, str, str]:
    """Run ``command`` in ``folder``; return its exit code, standard output and error. With ``interrupt``,
    send it SIGINT when a line of its standard error matches that regular expression (its standard
    output meanwhile goes to a file, so that a full pipe cannot stop it before that line)."""
    if interrupt is None:
        done = subprocess.run(argv(command), cwd=folder, env=environment(folder), capture_output=True, text=True)
        return done.returncode, done.stdout, done.stderr
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        process = subprocess.Popen(argv(command), cwd=folder, env=environment(folder), text=True,
                                   stdout=out, stderr=subprocess.PIPE, preexec_fn=ctrl_c_heard)
        assert process.stderr is not None
        seen = []
        for line in process.stderr:
            seen.append(line)
            if re.search(interrupt, line):
                process.send_signal(signal.SIGINT)
                break
        seen.append(process.stderr.read())
        code = process.wait()
        out.seek(0)
        return code, out.read(), "".join(seen)


def regenerate(sample: Sample) -> list[str]:
    """The output lines of ``sample``'s command, run afresh in a temporary folder (see the module's
    docstring), cut by its ``from`` and ``until``.

    Raises
    ------
    RuntimeError
        A setup command failed, or ``from`` or ``until`` matched no line.
    """
    with tempfile.TemporaryDirectory(prefix="sbpbench-sample-") as name:
        folder = Path(name).resolve()
        (folder / "configs").symlink_to((ROOT / "configs").resolve(), target_is_directory=True)
        shutil.copytree(ROOT / "examples", folder / "examples", ignore=shutil.ignore_patterns("*.svm", "__pycache__"))
        for setup in sample.options.get("setup", []):
            code, _, err = execute(setup, folder)
            if code != 0:
                raise RuntimeError(f"{sample.where()}: setup {setup!r} failed:\n{err}")
        _, out, err = execute(sample.command, folder, sample.option("interrupt"))
        text = err if sample.option("stream") == "stderr" else out
        text = text.replace(" ".join([sys.executable, "-m", "sbpbench"]), "sbpbench")
        text = text.replace(f"{folder}{os.sep}", "").replace(str(folder), ".")
    lines = [line.rstrip() for line in text.strip("\n").split("\n")]
    return cut(lines, sample.option("from"), sample.option("until"), sample.where())


def cut(lines: list[str], start: str | None, stop: str | None, where: str) -> list[str]:
    """``lines`` from the first matching ``start`` to before the next matching ``stop`` (each a
    regular expression, or None for the first or past the last line), ``...`` standing for what
    follows a cut end.

    Raises
    ------
    RuntimeError
        ``start`` or ``stop`` matched no line (the output is not what the docs expect).
    """
    first = 0
    if start is not None:
        first = next((k for k, line in enumerate(lines) if re.search(start, line)), -1)
        if first < 0:
            raise RuntimeError(f"{where}: no line of the output matches from={start!r}:\n" + "\n".join(lines))
    if stop is None:
        return lines[first:]
    last = next((k for k in range(first + 1, len(lines)) if re.search(stop, lines[k])), -1)
    if last < 0:
        raise RuntimeError(f"{where}: no line of the output matches until={stop!r}:\n" + "\n".join(lines))
    return [*lines[first:last], "..."]


def masked(lines: list[str], sample: Sample) -> list[str]:
    """``lines`` as compared (the masking rule of the module's docstring)."""
    patterns = [RUN_ID, *map(re.compile, sample.options.get("mask", []))]
    result = []
    for line in lines:
        for pattern in patterns:
            line = pattern.sub(MASKED, line)
        result.append(re.sub(r" +", " ", line).rstrip())
    return result


def rewrite(page: Path, outputs: dict[int, list[str]]) -> None:
    """Write into ``page`` the new output of each sample, given by the line of its opening fence."""
    lines = page.read_text(encoding="utf-8").split("\n")
    for sample in reversed(samples(page)):
        if sample.start in outputs:
            lines[sample.start + 2:sample.end] = outputs[sample.start]
    page.write_text("\n".join(lines), encoding="utf-8")


def main(args: list[str] | None = None) -> int:
    """Regenerate (or with ``--check`` compare) the samples of the pages given, or of all; return
    the exit code (1: a sample differs)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pages", nargs="*", type=Path, help="Markdown pages (default: README.md and docs/*.md)")
    parser.add_argument("--check", action="store_true", help="compare only, rewrite nothing; exit 1 on a difference")
    options = parser.parse_args(args)
    stale = []
    for page in [path.resolve() for path in options.pages] or pages():
        new = {sample.start: regenerate(sample) for sample in samples(page)}
        for sample in samples(page):
            if masked(sample.output, sample) != masked(new[sample.start], sample):
                stale.append(sample.where())
        if new and not options.check:
            rewrite(page, new)
        print(f"{shown(page)}: {len(new)} sample(s)", file=sys.stderr)
    if stale and options.check:
        print("stale samples (run `make docs`): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

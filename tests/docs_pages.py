"""The user docs as tests read them: the README and the reference pages under ``docs/``, by heading.

A fact is looked up by the heading it is under (:func:`section`), whichever page holds it, so
that a section moved between pages keeps its checks.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

#: A fenced code block (its lines are no headings and hold no links).
FENCE = re.compile(r"^```.*?^```[^\n]*$", flags=re.M | re.S)


def pages() -> list[Path]:
    """The README, then every page of ``docs/``."""
    return [README, *sorted(DOCS.glob("*.md"))]


def without_code(text: str) -> str:
    """``text`` with its fenced code blocks blanked (every character but line breaks made a space, so that
    offsets stay those of ``text``): ``# comment`` lines of a shell block are no headings."""
    return FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def headings(text: str) -> list[tuple[int, str, int]]:
    """``(level, title, offset)`` of each heading of a Markdown text, outside code blocks."""
    return [(len(m.group(1)), m.group(2).strip(), m.start())
            for m in re.finditer(r"^(#{1,6}) (.+)$", without_code(text), flags=re.M)]


def section(title: str, page: Path | None = None) -> str:
    """The text under the heading ``title`` in the README or a page of ``docs/`` (or in ``page``), up to
    the next heading of its level or above (a page's ``# Title`` holds the text before its first ``##``).

    Raises
    ------
    AssertionError
        No page has that heading, or more than one does.
    """
    found = []
    for path in pages() if page is None else [page]:
        text = path.read_text()
        marks = headings(text)
        for k, (level, name, start) in enumerate(marks):
            if name == title:
                end = next((s for lv, _, s in marks[k + 1:] if lv <= max(level, 2)), len(text))
                found.append(text[start:end])
    assert len(found) == 1, f"{len(found)} sections titled {title!r} in {page or 'README.md and docs/'}"
    return found[0]


def everything() -> str:
    """The README and every page of ``docs/``, one text with whitespace runs made single spaces."""
    return " ".join(" ".join(page.read_text().split()) for page in pages())


def python_block(text: str) -> str:
    """The first ``python`` code block of ``text``."""
    found = re.search(r"```python\n(.*?)```", text, flags=re.S)
    assert found is not None, "no python block"
    return found.group(1)


def anchor(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces made hyphens (``Python (scikit-learn) API`` -> ``python-scikit-learn-api``)."""
    plain = re.sub(r"`", "", title).strip().lower()
    return re.sub(r"[^\w\- ]", "", plain).replace(" ", "-")

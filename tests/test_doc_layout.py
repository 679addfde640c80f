"""Docs a researcher can scan: each page of docs/ opens with what it is for and a short example, a
table cell holds a line or two (details go below the table), no line of prose runs on, and the
README and docs/ together stay within a word budget."""

import re
from pathlib import Path

import pytest

from tests.docs_pages import DOCS, pages, without_code

#: Longest table cell, in characters of Markdown source: about two lines of a rendered table.
MAX_CELL = 200
#: Longest line outside tables and code blocks, in characters.
MAX_LINE = 300
#: Longest opening paragraph of a page (its one or two sentences on what the page is for).
MAX_OPENING = 400
#: Most words in README.md and docs/*.md together (``cat README.md docs/*.md | wc -w``). Issue #49
#: found the docs too long to scan at about 20,900 words, and they had grown to 31,000 before being
#: cut back below this: a new fact should replace words (say a thing once and link to it; numbers
#: belong in BENCHMARKS.md and REPRODUCTION.md, history in git), not raise the budget.
MAX_WORDS = 20000


def cells(line: str) -> list[str]:
    """The cells of a table row (``|`` escaped as ``\\|`` stays inside its cell)."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def long_cells(text: str) -> list[str]:
    """The cells of ``text``'s tables longer than :data:`MAX_CELL`, each as its first 60 characters."""
    return [cell[:60] for line in without_code(text).splitlines() if line.lstrip().startswith("|")
            for cell in cells(line) if len(cell) > MAX_CELL]


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.name)
def test_table_cells_are_at_most_two_lines(page):
    assert long_cells(page.read_text()) == [], f"{page.name}: cells over {MAX_CELL} characters"


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.name)
def test_no_line_of_prose_runs_on(page):
    lines = without_code(page.read_text()).splitlines()
    long = [k + 1 for k, line in enumerate(lines) if len(line) > MAX_LINE and not line.lstrip().startswith("|")]
    assert long == [], f"{page.name}: lines over {MAX_LINE} characters"


def opening_problems(text: str) -> list[str]:
    """What is wrong with the opening of a page (before its first ``##`` section): it must be the
    title, a paragraph of at most :data:`MAX_OPENING` characters saying what the page is for, and a
    fenced example."""
    if not text.startswith("# "):
        return ["no title"]
    head = text.split("\n## ")[0]
    parts = head.split("\n\n")
    opening = parts[1] if len(parts) > 1 else ""
    problems = []
    if not opening or opening.startswith(("```", "|", "-", "<!--")) or len(opening) > MAX_OPENING:
        problems.append(f"no opening paragraph of at most {MAX_OPENING} characters: {opening[:60]!r}")
    if "\n```" not in head:
        problems.append("no example before the first section")
    return problems


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda page: page.name)
def test_each_page_opens_with_its_purpose_and_an_example(page: Path):
    assert opening_problems(page.read_text()) == [], page.name


def words(paths: list[Path]) -> int:
    """The words of ``paths`` together, as ``wc -w`` counts them (runs of non-whitespace)."""
    return sum(len(path.read_text().split()) for path in paths)


def test_the_docs_stay_within_their_word_budget():
    counts = {path.name: words([path]) for path in pages()}
    largest = sorted(counts.items(), key=lambda item: -item[1])
    assert sum(counts.values()) <= MAX_WORDS, f"README.md and docs/ over {MAX_WORDS} words: {largest}"


def test_the_word_count_is_that_of_wc(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# T\n\nTwo  words,\tthree\n| a | b |\n```\ncode\n```\n")
    assert words([page]) == 13  # every run of non-whitespace, headings, tables and code included
    assert words([page, page]) == 26


def test_the_checks_catch_a_long_cell_and_a_page_without_an_example():
    assert long_cells("| a | b |\n|---|---|\n| `x` | " + "word " * 50 + "|\n") == ["word " * 12]
    assert long_cells("| a \\| b | " + "c" * MAX_CELL + " |\n") == []
    assert cells("| `a\\|b` | c |") == ["`a\\|b`", "c"]
    assert opening_problems("# T\n\nWhat it is for.\n\n```bash\nls\n```\n\n## S\n") == []
    assert opening_problems("# T\n\nWhat it is for.\n\n## S\n\n```bash\nls\n```\n") == \
        ["no example before the first section"]
    assert len(opening_problems("# T\n\n" + "long " * 100 + "\n\n```bash\nls\n```\n")) == 1

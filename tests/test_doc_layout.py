"""Docs a researcher can scan: each page of docs/ opens with what it is for and a short example, a
table cell holds a line or two (details go below the table), and no line of prose runs on."""

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


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda page: page.name)
def test_each_page_opens_with_its_purpose_and_an_example(page: Path):
    """The title, a short paragraph (what the page is for), and a fenced example before the first
    section."""
    text = page.read_text()
    assert text.startswith("# "), page.name
    head = text.split("\n## ")[0]
    opening = head.split("\n\n")[1]
    assert not opening.startswith(("```", "|", "-")) and len(opening) <= MAX_OPENING, (page.name, opening[:80])
    assert "\n```" in head, f"{page.name}: no example before the first section"


def test_the_checks_catch_a_long_cell_and_a_page_without_an_example():
    assert long_cells("| a | b |\n|---|---|\n| `x` | " + "word " * 50 + "|\n") == ["word " * 12]
    assert long_cells("| a \\| b | " + "c" * MAX_CELL + " |\n") == []
    assert cells("| `a\\|b` | c |") == ["`a\\|b`", "c"]

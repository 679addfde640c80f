"""Markdown of the papers' sections: the one source of REPRODUCTION.md's tables and of the tables
written with the figures (``sbpbench figures``)."""

from __future__ import annotations

from sbpbench.papers.declarations import Results, Section, Table


def table(t: Table) -> str:
    """A Markdown table: header, separator, one line per row."""
    lines = ["| " + " | ".join(t.headers) + " |", "|" + "---|" * len(t.headers)]
    lines += ["| " + " | ".join(row) + " |" for row in t.rows]
    return "\n".join(lines)


def section_body(declared: Section, results: Results) -> str:
    """A section without its heading: its paragraph, then each table under its sub-heading and note."""
    blocks = [declared.intro] if declared.intro else []
    for source in declared.tables:
        t = results.table(source)
        blocks += [f"### {t.heading}"] if t.heading else []
        blocks += [t.note] if t.note else []
        blocks.append(table(t))
    return "\n\n".join(blocks)


def section(declared: Section, results: Results) -> str:
    """A section with its heading."""
    return f"## {declared.heading}\n\n{section_body(declared, results)}"

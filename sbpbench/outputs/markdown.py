"""Markdown of the papers' sections: the one source of REPRODUCTION.md's tables and of the tables
written with the figures (``sbpbench figures``)."""

from __future__ import annotations

from sbpbench.papers.declarations import Results, Section, Table


def table(t: Table) -> str:
    """A Markdown table: header, separator, one line per row; a '|' in a cell is escaped (``||w||``
    would otherwise split it)."""
    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(t.headers), "|" + "---|" * len(t.headers), *map(line, t.rows)])


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
    """A section with its heading, and the figures its claims are judged on as image links
    (``figures/<stem>.png``, beside REPRODUCTION.md)."""
    images = " ".join(f"![{stem}](figures/{stem}.png)" for stem in declared.figures)
    return f"## {declared.heading}\n\n" + (f"{images}\n\n" if images else "") + section_body(declared, results)

"""The design contracts are in the repository, true to the code, and nothing points outside the repository."""

import re
import subprocess
from pathlib import Path

import pytest

from sbpbench.results.store import COLUMNS

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design.md"

#: A pointer to the folders beside the checkout that a user's clone does not have.
OUTSIDE = re.compile(r"\bshared/(?:datasets|papers|design)|/work/")


def tracked(*paths: str) -> list[Path]:
    """The files git tracks under ``paths`` (text files of the repository)."""
    names = subprocess.run(["git", "ls-files", *paths], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    return [ROOT / name for name in names]


def without_tests_section(text: str) -> str:
    """README without its "Tests" section, which says where CI finds the real data beside the checkout."""
    return re.sub(r"\n## Tests\n.*?(?=\n## )", "\n", text, flags=re.S)


def test_design_contracts_are_in_the_repository_and_linked():
    assert "## Kernel evaluations are the unit of work" in DESIGN.read_text()
    for doc in ("README.md", "CONTRIBUTING.md"):
        assert "](docs/design.md)" in (ROOT / doc).read_text(), doc


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
def test_nothing_points_outside_the_repository():
    files = tracked("sbpbench", "configs", "docs", "examples", "CONTRIBUTING.md")
    texts = {path: path.read_text() for path in files if path.suffix in {".py", ".md", ".yaml", ".js"}}
    texts[ROOT / "README.md"] = without_tests_section((ROOT / "README.md").read_text())
    assert len(texts) > 50
    found = [f"{path.relative_to(ROOT)}: {match.group()}" for path, text in texts.items()
             for match in OUTSIDE.finditer(text)]
    assert found == []
    assert OUTSIDE.search((ROOT / "README.md").read_text())  # the Tests section does say where CI's data are


def test_design_page_lists_the_result_columns_the_code_writes():
    text = " ".join(DESIGN.read_text().split())
    listed = re.search(r"with the columns `([^`]*)` in this order \(`COLUMNS`\)", text)
    assert listed is not None
    assert listed.group(1).split(", ") == COLUMNS


def test_files_the_design_page_names_exist():
    named = set(re.findall(r"`((?:sbpbench|tests|scripts|docs|configs|results)/[\w./-]*\w)`", DESIGN.read_text()))
    assert len(named) >= 5
    assert sorted(name for name in named if not (ROOT / name).exists()) == []


def readme_value(text: str) -> object:
    """A default as the README writes it: ``none``, ``true``/``false``, a number or a word in backticks."""
    text = text.strip().strip("`")
    words = {"none": None, "true": True, "false": False}
    if text in words:
        return words[text]
    try:
        return float(text)
    except ValueError:
        return text


def test_readme_table_of_config_keys_gives_the_declared_defaults():
    """Each declared key of the kernel, problem, budget and checkpoints sections has a row in README's
    table of keys, whose default column is the declaration's default."""
    from sbpbench.experiment.config import DECLARED, declared_keys

    section = (ROOT / "README.md").read_text().split("\n## Experiment configs\n", 1)[1].split("\n## ", 1)[0]
    documented = {}
    for row in re.findall(r"^\| (`[^|]*`) \|.*\| ([^|]*) \|$", section, flags=re.M):
        keys = re.findall(r"`([\w.]+)`", row[0])
        prefix = keys[0].rpartition(".")[0]
        if prefix not in DECLARED:
            continue
        defaults = row[1].split(" / ")
        assert len(defaults) == len(keys), row
        documented.update({key if "." in key else f"{prefix}.{key}": readme_value(default)
                           for key, default in zip(keys, defaults)})
    declared = {key: p.default for key, p in declared_keys().items()}
    assert len(declared) == 13
    assert {key: documented.get(key, "(no row)") for key in declared} == declared

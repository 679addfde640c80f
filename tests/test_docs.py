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
    assert len(declared) == 14
    assert {key: documented.get(key, "(no row)") for key in declared} == declared


# ----------------------------------------------------------------------------- what the recipes ask for


def readme_table_names(section: str) -> list[set[str]]:
    """The names in backticks (or plain) of the first column of the table in README's ``section``,
    one set per row."""
    text = (ROOT / "README.md").read_text().split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in text.splitlines() if line.startswith("| ") and not line.startswith("|---")]
    return [set(re.findall(r"`([^`]+)`", cell)) or {cell.strip()} for cell in rows[1:]]  # the header row aside


def test_the_readme_solver_table_lists_every_built_in_solver():
    """CONTRIBUTING, "Add a solver": a solver of the package has a row in the README's table."""
    from sbpbench.solvers import SOLVERS

    built_in = {name for name, cls in SOLVERS.items() if cls.__module__.startswith("sbpbench.solvers.")}
    listed = [name for row in readme_table_names("Solvers and how kernel evaluations are counted") for name in row]
    assert sorted(listed) == sorted(built_in)


def test_the_readme_dataset_table_lists_every_registered_dataset():
    """CONTRIBUTING, "Add a dataset": a registered dataset has a place in the README's table."""
    from sbpbench.data import REGISTRY

    listed = [name for row in readme_table_names("Datasets") for name in row]
    assert sorted(listed) == sorted(REGISTRY)


def test_the_readme_estimator_table_lists_every_estimator_and_its_solver():
    """CONTRIBUTING, "Add a solver", step 5: an estimator has a row in the README's table, naming its solver."""
    from sbpbench.estimators import ESTIMATORS

    text = (ROOT / "README.md").read_text().split("\n## Python (scikit-learn) API\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| `([\w-]+)` \|", text, flags=re.M)
    assert rows == [(cls.__name__, cls.solver) for cls in ESTIMATORS]


def test_files_the_contributing_recipes_name_exist():
    """Every file or folder CONTRIBUTING names (those with a ``<placeholder>`` aside) is where it says."""
    named = set(re.findall(r"`((?:sbpbench|tests|scripts|docs|configs|results|examples)/[\w./-]*\w/?)`",
                           (ROOT / "CONTRIBUTING.md").read_text()))
    assert len(named) >= 10
    assert sorted(name for name in named if not (ROOT / name).exists()) == []

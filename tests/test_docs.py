"""The docs (README.md, the pages of docs/, CONTRIBUTING.md) are true to the code, linked, and point nowhere
outside the repository; each fact is read from the page that now holds it (tests/docs_pages.py)."""

import re
import subprocess
from pathlib import Path

import pytest

from sbpbench.results.store import COLUMNS
from tests.docs_pages import DOCS, README, ROOT, anchor, headings, pages, python_block, section, without_code

DESIGN = DOCS / "design.md"
TESTING = DOCS / "testing.md"

#: A pointer to the folders beside the checkout that a user's clone does not have.
OUTSIDE = re.compile(r"\bshared/(?:datasets|papers|design)|/work/")


def tracked(*paths: str) -> list[Path]:
    """The files git tracks under ``paths`` (text files of the repository)."""
    names = subprocess.run(["git", "ls-files", *paths], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    return [ROOT / name for name in names]


def without_real_data_section(text: str) -> str:
    """docs/testing.md without its section "Tests that read real data", which says where CI finds the real
    data beside the checkout."""
    return re.sub(r"\n## Tests that read real data\n.*?(?=\n## )", "\n", text, flags=re.S)


def test_design_contracts_are_in_the_repository_and_linked():
    assert "## Kernel evaluations are the unit of work" in DESIGN.read_text()
    for doc in ("README.md", "CONTRIBUTING.md"):
        assert "](docs/design.md)" in (ROOT / doc).read_text(), doc


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
def test_nothing_points_outside_the_repository():
    files = tracked("sbpbench", "configs", "docs", "examples", "CONTRIBUTING.md", "README.md")
    texts = {path: path.read_text() for path in files if path.suffix in {".py", ".md", ".yaml", ".js"}}
    texts[TESTING] = without_real_data_section(TESTING.read_text())
    assert len(texts) > 50 and README in texts
    found = [f"{path.relative_to(ROOT)}: {match.group()}" for path, text in texts.items()
             for match in OUTSIDE.finditer(text)]
    assert found == []
    assert OUTSIDE.search(TESTING.read_text())  # its real-data section does say where CI's data are


def test_design_page_lists_the_result_columns_the_code_writes():
    text = " ".join(DESIGN.read_text().split())
    listed = re.search(r"with the columns `([^`]*)` in this order \(`COLUMNS`\)", text)
    assert listed is not None
    assert listed.group(1).split(", ") == COLUMNS


def test_files_the_design_page_names_exist():
    named = set(re.findall(r"`((?:sbpbench|tests|scripts|docs|configs|results)/[\w./-]*\w)`", DESIGN.read_text()))
    assert len(named) >= 5
    assert sorted(name for name in named if not (ROOT / name).exists()) == []


def doc_value(text: str) -> object:
    """A default as the docs write it: ``none``, ``true``/``false``, a number or a word in backticks."""
    text = text.strip().strip("`")
    words = {"none": None, "true": True, "false": False}
    if text in words:
        return words[text]
    try:
        return float(text)
    except ValueError:
        return text


def test_the_table_of_config_keys_gives_the_declared_defaults():
    """Each declared key of the kernel, problem, budget and checkpoints sections has a row in the table of
    keys (docs/configs.md), whose default column is the declaration's default."""
    from sbpbench.experiment.config import DECLARED, declared_keys

    documented = {}
    for row in re.findall(r"^\| (`[^|]*`) \|.*\| ([^|]*) \|$", section("Experiment configs"), flags=re.M):
        keys = re.findall(r"`([\w.]+)`", row[0])
        prefix = keys[0].rpartition(".")[0]
        if prefix not in DECLARED:
            continue
        defaults = row[1].split(" / ")
        assert len(defaults) == len(keys), row
        documented.update({key if "." in key else f"{prefix}.{key}": doc_value(default)
                           for key, default in zip(keys, defaults)})
    declared = {key: p.default for key, p in declared_keys().items()}
    assert len(declared) == 14
    assert {key: documented.get(key, "(no row)") for key in declared} == declared


# ----------------------------------------------------------------------------- what the recipes ask for


def table_names(title: str) -> list[set[str]]:
    """The names in backticks (or plain) of the first column of the table in the docs' section ``title``,
    one set per row."""
    text = section(title)
    rows = [line.split("|")[1] for line in text.splitlines() if line.startswith("| ") and not line.startswith("|---")]
    return [set(re.findall(r"`([^`]+)`", cell)) or {cell.strip()} for cell in rows[1:]]  # the header row aside


def test_the_solver_table_lists_every_built_in_solver():
    """CONTRIBUTING, "Add a solver": a solver of the package has a row in the table of docs/solvers.md."""
    from sbpbench.solvers import SOLVERS

    built_in = {name for name, cls in SOLVERS.items() if cls.__module__.startswith("sbpbench.solvers.")}
    listed = [name for row in table_names("Solvers and how kernel evaluations are counted") for name in row]
    assert sorted(listed) == sorted(built_in)


def test_the_solver_table_says_what_each_solver_needs():
    """The "needs" column of docs/solvers.md names lambda, nu and a bias exactly where the solver's declaration
    (``needs``, ``requires_bias``) does, as ``sbpbench solvers`` says it."""
    from sbpbench.solvers import SOLVERS

    rows = re.findall(r"^\| (`[^|]*`) \|.*\| ([^|]*) \|$", section("Solvers and how kernel evaluations are counted"),
                      flags=re.M)
    wrong = []
    for names, needs in rows:
        said = set(re.findall(r"\b(lambda|nu|bias)\b", needs))
        for name in re.findall(r"`([\w-]+)`", names):
            cls = SOLVERS[name]
            if said != set(cls.needs) | ({"bias"} if cls.requires_bias else set()):
                wrong.append((name, needs))
    assert len(rows) > 10 and wrong == []


def test_the_dataset_table_lists_every_registered_dataset():
    """CONTRIBUTING, "Add a dataset": a registered dataset has a place in the table of docs/datasets.md."""
    from sbpbench.data import REGISTRY

    listed = [name for row in table_names("Datasets") for name in row]
    assert sorted(listed) == sorted(REGISTRY)


def test_the_estimator_table_lists_every_estimator_and_its_solver():
    """CONTRIBUTING, "Add a solver", step 7: an estimator has a row in the table of docs/estimators.md, naming
    its solver."""
    from sbpbench.estimators import ESTIMATORS

    rows = re.findall(r"^\| `(\w+)` \| `([\w-]+)` \|", section("Python (scikit-learn) API"), flags=re.M)
    assert rows == [(cls.__name__, cls.solver) for cls in ESTIMATORS]


def test_files_the_contributing_recipes_name_exist():
    """Every file or folder CONTRIBUTING names (those with a ``<placeholder>`` aside) is where it says."""
    named = set(re.findall(r"`((?:sbpbench|tests|scripts|docs|configs|results|examples)/[\w./-]*\w/?)`",
                           (ROOT / "CONTRIBUTING.md").read_text()))
    assert len(named) >= 10
    assert sorted(name for name in named if not (ROOT / name).exists()) == []


# ----------------------------------------------------------------------------- pages and links


def markdown_links(text: str) -> list[str]:
    """The targets of the Markdown links of ``text``, code blocks and code spans aside."""
    prose = re.sub(r"`[^`\n]*`", "", without_code(text))
    return re.findall(r"\[[^\]]*\]\(([^)\s]+)\)", prose)


def test_every_page_of_docs_is_linked_from_the_readme_with_one_line():
    linked = set(markdown_links(README.read_text()))
    assert sorted(f"docs/{page.name}" for page in DOCS.glob("*.md") if f"docs/{page.name}" not in linked) == []
    where_to_go = section("Where to go next")
    assert sorted(re.findall(r"^- \[[^\]]*\]\((docs/[\w-]+\.md)\): \S", where_to_go, flags=re.M)) == \
        sorted(f"docs/{page.name}" for page in DOCS.glob("*.md"))


def test_the_readme_is_a_few_screens():
    assert len(README.read_text().encode()) < 8000


def test_every_relative_link_of_the_docs_reaches_its_file_and_heading():
    broken, checked = [], 0
    for page in [*pages(), ROOT / "CONTRIBUTING.md"]:
        for target in markdown_links(page.read_text()):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, fragment = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            checked += 1
            if not file.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif fragment and fragment not in {anchor(title) for _, title, _ in headings(file.read_text())}:
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert checked > 60
    assert broken == []


def test_the_first_experiment_shows_the_quickstart_config_as_it_is():
    config = (ROOT / "configs" / "quickstart.yaml").read_text()
    assert f"```yaml\n{config}```" in section("A first experiment")


# ----------------------------------------------------------------------------- commands


def test_the_commands_table_names_every_command_option_and_choice():
    """A row per command of ``sbpbench`` (a group's subcommands in its row), naming each of its options and
    each value a choice option takes; the top-level options in the page."""
    import click

    from sbpbench.cli import cli

    text = section("Commands")
    rows = [line for line in text.splitlines() if line.startswith("| `sbpbench ")]
    missing = []
    for name, command in cli.commands.items():
        (row,) = [r for r in rows if re.match(rf"\| `sbpbench {re.escape(name)}[ `]", r)]
        subcommands = command.commands.values() if isinstance(command, click.Group) else [command]
        for sub in subcommands:
            if sub is not command and not re.search(rf"\b{sub.name}\b", row):
                missing.append(f"{name} {sub.name}")
            for option in (p for p in sub.params if isinstance(p, click.Option)):
                words = [*option.opts, *getattr(option.type, "choices", ())]
                missing += [f"{name} {option.opts[0]}: {word}" for word in words
                            if word.startswith("--") or word not in option.opts
                            if not re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", row)]
    for option in cli.params:
        missing += [f"sbpbench {opt}" for opt in option.opts if f"sbpbench {opt}" not in text]
    assert missing == []


# ----------------------------------------------------------------------------- writing a solver


def test_every_parameter_check_is_documented_with_the_error_text_it_gives():
    """docs/writing-a-solver.md, "Parameters and their checks": a row per type, per ``choices`` and per check
    of ``sbpbench/params.py`` (every public function there but ``param``), each refusing its example with the
    error text the row gives."""
    import ast
    import inspect

    import yaml

    from sbpbench import params
    from sbpbench.experiment.config import coerce

    class Refused(Exception):
        pass

    def fail(text: str):
        raise Refused(text)

    def coerced(value, kind) -> str | None:
        try:
            coerce(value, kind, fail)
        except Refused as exc:
            return str(exc)
        return None

    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in section("Parameters and their checks").splitlines() if line.startswith("| `")]
    types, checks, wrong = set(), set(), []
    for first, _accepts, refused, error in rows:
        name = first.strip("`")
        example, _, n = refused.partition(" (n = ")
        example, expected = example.strip("`"), error.strip("`")
        if name in {"int", "float", "bool", "str"}:
            types.add(name)
            got = coerced(yaml.safe_load(example), {"int": int, "float": float, "bool": bool, "str": str}[name])
        elif name.startswith("choices="):
            choices = ast.literal_eval(name.removeprefix("choices="))
            got = params.Param(str, choices[0], "doc", choices=choices).error(yaml.safe_load(example))
        else:
            checks.add(name)
            check = getattr(params, name)
            value = ast.literal_eval(example)
            got = check(value, int(n.rstrip(")")), 1) if n else check(value)
        if got != expected:
            wrong.append((first, example, got, expected))
    assert wrong == []
    assert types == {"int", "float", "bool", "str"}
    public = {name for name, f in inspect.getmembers(params, inspect.isfunction)
              if f.__module__ == params.__name__ and not name.startswith("_") and name != "param"}
    assert checks == public


def test_the_tables_of_what_a_solver_sees_name_what_the_code_has():
    """The attributes ``Solver.__init__`` sets, the kernel methods named and ``Snapshot``'s fields with their
    defaults, as docs/writing-a-solver.md lists them."""
    import dataclasses
    import inspect

    from sbpbench.kernels.kernel import Kernel
    from sbpbench.solvers import Snapshot, Solver

    text = section("What a solver sees and what it returns")
    attributes = re.findall(r"^\| `self\.(\w+)` \|", text, flags=re.M)
    assigned = set(re.findall(r"self\.(\w+)(?::[^=\n]*)? = ", inspect.getsource(Solver.__init__)))
    assert sorted(attributes) == sorted(assigned)
    methods = re.findall(r"^\| `kernel\.(\w+)\(", text, flags=re.M)
    assert len(methods) >= 5 and all(callable(getattr(Kernel, name, None)) for name in methods)
    documented = {name: default.strip("`") for name, default in re.findall(r"^\| `(\w+)` \| [^|]* \| ([^|]+) \|$",
                                                                            text, flags=re.M)}
    fields = {f.name: "required" if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
              else str(f.default_factory() if f.default is dataclasses.MISSING else f.default)
              for f in dataclasses.fields(Snapshot)}
    assert documented == fields


def test_the_contributing_solver_snippet_has_its_imports_and_defines_its_solver(monkeypatch):
    """CONTRIBUTING, "Add a solver", step 2: the class as shown, run as shown (registered into an empty
    registry, so that this test registers nothing)."""
    import textwrap

    from sbpbench.params import positive
    from sbpbench.solvers import base

    code = textwrap.dedent(python_block((ROOT / "CONTRIBUTING.md").read_text()))
    monkeypatch.setattr(base, "SOLVERS", {})
    namespace: dict = {}
    exec(compile(code, "CONTRIBUTING.md", "exec"), namespace)
    assert list(base.SOLVERS) == ["my-solver"] and base.SOLVERS["my-solver"] is namespace["MySolver"]
    assert namespace["MySolver"].Params.declared()["eta0"].check is positive


# ----------------------------------------------------------------------------- results


def test_the_results_table_lists_every_column_and_design_names_the_measured_ones():
    from sbpbench.solvers.base import MEASURED_COLUMNS, TRAITS

    cells = re.findall(r"^ *\| ([^|]+) \|", section("Results", DOCS / "results.md"), flags=re.M)  # the column's table
    listed = {name for cell in cells for name in re.findall(r"`(\w+)`", cell)}
    assert set(COLUMNS) | {"test_hinge_loss", "validation_error"} <= listed
    design = DESIGN.read_text()
    assert sorted(c for c in MEASURED_COLUMNS - set(COLUMNS) - set(TRAITS) if f"`{c}`" not in design) == []
    assert "`interrupted`" in design


def test_the_pages_the_code_points_to_exist():
    """A message, help text or docstring of the package that sends its reader to a page of docs/ names one
    that exists."""
    named = {name for path in (ROOT / "sbpbench").rglob("*.py")
             for name in re.findall(r"\bdocs/[\w-]+\.md\b", path.read_text())}
    assert {"docs/writing-a-solver.md", "docs/design.md"} <= named
    assert sorted(name for name in named if not (ROOT / name).exists()) == []

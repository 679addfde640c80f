"""The package's architecture: imports flow one way through the stages, with no cycle.

Every ``import`` in ``sbpbench/`` is read from the source (lazy imports inside functions
too), so a back-edge cannot hide behind a function-level import.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sbpbench"

#: The stages in the order a module may depend on them: a module imports only its own
#: stage and earlier ones (docs/layout.md); stages of one rank are siblings, which do not
#: import each other.
LAYERS = (
    ("errors",),
    ("files", "memory", "params", "threads"),
    ("data",),
    ("kernels",),
    ("problem",),
    ("solvers",),
    ("experiment", "estimators"),
    ("results",),
    ("execution",),
    ("papers",),
    ("outputs",),
    ("cli",),
    ("__main__",),
)
RANK = {stage: rank for rank, stages in enumerate(LAYERS) for stage in stages}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(name: str) -> set[str]:
    """The sbpbench modules that module ``name`` imports, anywhere in its body."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from pkg import sub` imports the submodule pkg.sub when there is one
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        found.update(t for t in targets if t.split(".")[0] == "sbpbench" and t != "sbpbench")
    return {t for t in found if t != name}


GRAPH = {name: imports(name) for name in MODULES}


def stage(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_module_belongs_to_a_stage():
    assert {stage(m) for m in MODULES} - {None} <= set(RANK), "a new top-level module needs a place in LAYERS"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_imports_a_later_stage(name):
    own = stage(name)
    if own is None:
        return
    later = sorted(t for t in GRAPH[name] if RANK[stage(t)] > RANK[own])
    assert not later, f"{name} ({own}) imports a later stage: {later}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_imports_a_sibling_stage(name):
    own = stage(name)
    if own is None:
        return
    siblings = sorted(t for t in GRAPH[name] if stage(t) != own and RANK[stage(t)] == RANK[own])
    assert not siblings, f"{name} ({own}) imports a sibling stage: {siblings}"


def test_a_sibling_import_is_caught(tmp_path, monkeypatch):
    """The check itself: experiment importing estimators (the same rank) is found."""
    fake = tmp_path / "sbpbench" / "experiment" / "assemble.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from sbpbench.estimators import SBPClassifier\n")
    monkeypatch.setitem(MODULES, "sbpbench.experiment.assemble", fake)
    monkeypatch.setitem(GRAPH, "sbpbench.experiment.assemble", imports("sbpbench.experiment.assemble"))
    with pytest.raises(AssertionError, match="imports a sibling stage"):
        test_no_module_imports_a_sibling_stage("sbpbench.experiment.assemble")


def test_no_import_cycle():
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(GRAPH.get(node, ())):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt in GRAPH and state.get(nxt) is None:
                visit(nxt)
        path.pop()
        state[node] = 2

    for name in sorted(GRAPH):
        if state.get(name) is None:
            visit(name)


def test_a_back_edge_is_caught(tmp_path, monkeypatch):
    """The check itself: a lazy import of a later stage is found."""
    fake = tmp_path / "sbpbench" / "kernels.py"
    fake.parent.mkdir()
    fake.write_text("def f():\n    from sbpbench.execution import loop\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setitem(MODULES, "sbpbench.kernels", fake)
    assert imports("sbpbench.kernels") == {"sbpbench.execution.loop"}


def test_help_imports_no_heavy_library():
    """`sbpbench --help` starts fast: neither scikit-learn, numba, pandas nor matplotlib is imported."""
    code = ("import sys\nfrom sbpbench.cli import cli\n"
            "try:\n    cli.main(['--help'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'numba', 'pandas', 'matplotlib'})\n"
            "print('HEAVY', heavy)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "HEAVY []" in out, out

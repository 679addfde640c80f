"""Every experiment config shipped in configs/ (and configs/ci/) passes validation."""

from pathlib import Path

import pytest

from sbpbench import papers
from sbpbench.experiment import config

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").rglob("*.yaml"))


def test_the_papers_declare_every_paper_config_and_every_declared_experiment_has_its_config():
    prefixes = tuple(f"{paper.key}-" for paper in papers.PAPERS)
    assert sorted(prefixes) == ["pegasos-", "sbp-", "sgd-"]
    configs = {p.stem for p in CONFIGS}
    declared = papers.experiments()
    assert sorted({name for name in configs if name.startswith(prefixes)}) == sorted(declared)
    assert len(set(declared)) == len(declared), "an experiment is declared by one paper"
    for paper in papers.PAPERS:
        assert all(name.startswith(f"{paper.key}-") for name in paper.experiments), paper.key
    assert papers.CONFIGS == (ROOT / "configs").resolve()  # what the report reads, wherever it runs from


@pytest.mark.parametrize("path", CONFIGS, ids=[str(p.relative_to(ROOT / "configs")) for p in CONFIGS])
def test_config_validates(path):
    exp = config.load(path)
    if path.stem.startswith(("sbp-", "pegasos-", "sgd-", "ci-")):
        assert exp.name == path.stem, "a paper experiment is named after its file (and its results folder)"

"""Every experiment config shipped in configs/ (and configs/ci/) passes validation."""

from pathlib import Path

import pytest

from sbpbench.experiment import config

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").rglob("*.yaml"))


def test_there_is_a_config_per_paper_experiment():
    names = {p.stem for p in CONFIGS}
    for expected in ("sbp-figure2-reuters", "sbp-figure2-adult", "sbp-figure2-mnist", "sbp-figure2-mnist-t10k",
                     "sbp-libsvm-adult", "sbp-libsvm-mnist", "sbp-libsvm-forest", "sbp-figure3-reuters",
                     "sbp-figure3-adult", "sbp-figure3-mnist", "pegasos-table1-ccat",
                     "pegasos-table1-covertype", "pegasos-figure2-norma", "pegasos-figure2-sgd",
                     "pegasos-figure3-k", "sgd-table2-c1-adult", "sgd-table4-c10-adult",
                     "sgd-table6-c0.05-adult", "sgd-table2-c1-w8a", "sgd-table4-c10-w8a", "sgd-table6-c0.05-w8a"):
        assert expected in names


@pytest.mark.parametrize("path", CONFIGS, ids=[str(p.relative_to(ROOT / "configs")) for p in CONFIGS])
def test_config_validates(path):
    exp = config.load(path)
    if path.stem.startswith(("sbp-", "pegasos-", "sgd-", "ci-")):
        assert exp.name == path.stem, "a paper experiment is named after its file (and its results folder)"

"""An installed wheel holds what the package reads at run time: the papers find their configs there."""

import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wheel_files() -> dict[str, Path]:
    """What a wheel built from ``pyproject.toml`` holds, as setuptools selects it: the modules of every
    package ``packages.find`` includes and each package's declared package data (path in the wheel -> file)."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    include = setuptools["packages"]["find"]["include"]
    packages = [".".join(init.parent.relative_to(ROOT).parts) for init in ROOT.glob("sbpbench/**/__init__.py")]
    packages = [name for name in packages if any(fnmatch.fnmatchcase(name, pattern) for pattern in include)]
    files = {}
    for package in packages:
        folder = ROOT.joinpath(*package.split("."))
        patterns = ["*.py", *setuptools["package-data"].get(package, [])]
        for path in (path for pattern in patterns for path in folder.glob(pattern) if path.is_file()):
            files[path.relative_to(ROOT).as_posix()] = path
    return files


def test_the_papers_find_their_configs_in_an_installed_wheel(tmp_path):
    site = tmp_path / "site-packages"
    for name, path in wheel_files().items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, site / name)
    code = ("import json, sbpbench, sbpbench.papers as p; "
            "print(json.dumps([sbpbench.__file__, str(p.CONFIGS), p.experiments(), "
            "[n for n in p.experiments() if not (p.CONFIGS / f'{n}.yaml').is_file()]]))")
    elsewhere = tmp_path / "elsewhere"  # not a checkout: no configs/ beside it
    elsewhere.mkdir()
    out = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(site)}).stdout
    module, configs, experiments, missing = json.loads(out)
    assert Path(module).is_relative_to(site) and Path(configs).is_relative_to(site)
    assert len(experiments) > 20 and missing == []
    assert (Path(configs) / "quickstart.yaml").is_file() and (Path(configs) / "ci" / "ci-adult.yaml").is_file()


def test_the_checkout_configs_folder_is_the_packaged_one():
    # one source of truth: configs/ where users find it is the package data the wheel ships
    assert (ROOT / "configs").resolve() == (ROOT / "sbpbench" / "configs").resolve()
    assert {p.name for p in (ROOT / "configs").glob("*.yaml")} >= {"quickstart.yaml", "adult.yaml"}

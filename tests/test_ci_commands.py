"""CI runs what the README tells a user to run, and the tests ``make test`` leaves out."""

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    """The commands of the README's first code block, without their comments."""
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    assert block, "README.md has no bash code block"
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.split("#")[0].strip()]


def make_recipe(target: str) -> list[list[str]]:
    """The command lines of ``target``'s recipe in the Makefile, as words."""
    recipe = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), flags=re.M)
    assert recipe, f"the Makefile has no target {target!r}"
    return [shlex.split(line) for line in recipe.group(1).splitlines()]


def marker_expression(words: list[str]) -> str:
    """The value of pytest's last ``-m`` (the first is Python's ``-m pytest``)."""
    return words[len(words) - words[::-1].index("-m")]


def test_ci_runs_the_readmes_test_command_then_the_slow_tests():
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "make install test" in readme_commands()
    assert ci.index("make install test") < ci.index("make test-slow")


def test_make_test_and_make_test_slow_split_the_suite_by_the_slow_marker():
    (test,), (slow,) = make_recipe("test"), make_recipe("test-slow")
    assert marker_expression(test) == "not slow" and marker_expression(slow) == "slow"
    assert "-n" in test and "-n" in slow  # one worker per core
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert "--strict-markers" in pyproject and re.search(r'^\s*"slow: ', pyproject, flags=re.M)

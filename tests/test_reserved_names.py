"""Solver parameter names that would collide with a config's own keys, and how ``sbpbench solvers``
words a solver's stand on the bias."""

from __future__ import annotations

from sbpbench.solvers import SOLVERS
from tests.cli_runner import sbpbench


def test_solvers_says_whether_the_bias_is_required_supported_or_refused(monkeypatch, capsys):
    assert sbpbench(monkeypatch, "solvers") == 0
    out = "\n" + capsys.readouterr().out
    assert "\nlibsvm: " in out and "needs: lambda; bias: required" in out.split("\nlibsvm: ")[1].split("\n")[1]
    said = {name: out.split(f"\n{name}: ", 1)[1].split("\n")[1] for name in ("sbp", "smo", "pegasos", "sdca")}
    assert said["sbp"].endswith("bias: supported") and said["smo"].endswith("bias: supported")
    assert said["pegasos"].endswith("bias: refused") and said["sdca"].endswith("bias: refused")
    assert "bias: yes" not in out and "bias: no" not in out
    for name, cls in SOLVERS.items():
        word = "required" if cls.requires_bias else "supported" if cls.supports_bias else "refused"
        assert out.split(f"\n{name}: ", 1)[1].split("\n")[1].endswith(f"bias: {word}"), name

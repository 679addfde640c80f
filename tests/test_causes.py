"""A posed row's cause (:class:`sbpbench.papers.declarations.Cause`): named in the verdict of a row
whose comparison contradicts it, read from its script's record, and nowhere else."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from sbpbench.errors import UserError
from sbpbench.outputs.report import CAUSE
from sbpbench.papers.comparisons import Evidence, Outcome
from sbpbench.papers.declarations import CAUSE_WORDS, Cause, Posed, Results
from sbpbench.results.lookup import ExperimentResult
from tests.test_verdicts import _write, curve, synthetic

RECORD = "analyses/causes-test.json"


@dataclass(frozen=True)
class Decides:
    """A question whose comparison has the outcome ``outcome`` (no runs read)."""

    outcome: Outcome

    def decide(self, found: Sequence[ExperimentResult]) -> tuple[Evidence, str]:
        return Evidence("Welch", "a difference", 1.0, (0.5, 1.5), (3, 3), self.outcome), "measured"

    def solvers(self) -> tuple[str, ...]:
        return ()


def _results(root: Path, record: dict | None) -> Results:
    files = () if record is None else ((RECORD, json.dumps(record)),)
    return _write(root, "exp", synthetic(curve("sbp", {"test_error": [0.2, 0.1]}), files=files))


def _verdict(results: Results, outcome: Outcome, kind: str = "claim") -> tuple[str, str]:
    row = Posed("a claim", "Section 5", "yes", Decides(outcome), ("exp",), kind=kind,  # type: ignore[arg-type]
                cause=Cause(RECORD, "the row", "causes_test.py"))
    (_, _, measured, verdict), _ = row.decided(results)[0]
    return measured, verdict


@pytest.mark.parametrize("word", CAUSE_WORDS)
def test_a_contradicted_row_names_its_recorded_cause_and_quotes_the_evidence(tmp_path, word):
    results = _results(tmp_path, {"rows": {"the row": {"cause": word, "evidence": "what was shown"}}})
    measured, verdict = _verdict(results, "contradicts")
    assert verdict == f"did not hold: cause: {word}"
    assert CAUSE.search(verdict).group(1) == word
    assert measured == f"measured (exp); scripts/causes_test.py ({RECORD}): what was shown"
    assert _verdict(results, "contradicts", kind="number")[1] == f"differs: cause: {word}"


def test_a_supported_or_open_row_names_no_cause(tmp_path):
    results = _results(tmp_path, {"rows": {"the row": {"cause": "data", "evidence": "what was shown"}}})
    assert _verdict(results, "supports") == ("measured (exp)", "held")
    assert "cause" not in _verdict(results, "inconclusive")[1]


def test_a_row_missing_from_its_record_is_not_established_and_says_which_script(tmp_path):
    measured, verdict = _verdict(_results(tmp_path, None), "contradicts")
    assert verdict == "did not hold: cause: not established"
    assert f"no record of the row in {RECORD}: run scripts/causes_test.py" in measured


def test_a_cause_outside_the_fixed_words_is_refused_naming_the_record(tmp_path):
    results = _results(tmp_path, {"rows": {"the row": {"cause": "bad luck", "evidence": ""}}})
    with pytest.raises(UserError, match=r"causes-test.json: not the output of scripts/causes_test.py.*bad luck"):
        _verdict(results, "contradicts")

"""scripts/adult_sizes.py: the SBP paper's Adult sizes tested against UCI's raw files."""

import json
from pathlib import Path

import pytest

from sbpbench.papers import sbp
from scripts.adult_sizes import analyse, counts, transpositions
from tests.problems import SHARED

ROOT = Path(__file__).resolve().parents[1]
RAW = SHARED / "adult"


def test_transpositions_swap_two_digits():
    assert transpositions(32561) >= {31562, 23561, 35261}
    assert 32561 not in transpositions(32561) and 16282 not in transpositions(16281)
    assert all(str(n)[0] != "0" for n in transpositions(10203))


def test_counts_tell_a_header_line_and_missing_values_apart(tmp_path):
    raw = tmp_path / "adult.test"
    raw.write_text("|1x3 Cross validator\n25, Private, ?, <=50K.\n38, Private, 89814, >50K.\n\n", encoding="utf-8")
    assert counts(raw) == {"non_blank_lines": 3, "header_lines": 1, "rows": 2, "rows_without_missing_values": 1}


@pytest.mark.skipif(not (RAW / "adult.test").is_file(), reason="../shared/datasets/adult is not available")
def test_the_paper_counts_the_test_files_lines_and_transposes_the_training_size():
    found = analyse(RAW)
    assert found["n_test"]["rows"] == 16281 and found["n_test"]["printed_equals"] == ["non_blank_lines"]
    assert found["n_train"]["rows"] == 32561 and found["n_train"]["printed_equals"] == []
    assert "rows" in found["n_train"]["printed_is_a_transposition_of"]
    committed = json.loads((ROOT / "results" / "paper" / "analyses" / "sizes-adult.json").read_text())
    assert committed == json.loads(json.dumps(found))  # the committed record is this measurement


def test_the_size_rows_name_their_cause_and_quote_the_record():
    rows = [row for row in sbp.SETTINGS.rows if "Adult" in row.what and "size" in row.what]
    assert len(rows) == 2
    for row in rows:
        assert row.outcomes[1].startswith("differs: cause: the paper's procedure")
        assert row.question.reader.sizes == "analyses/sizes-adult.json"

"""One number format on a run's page (notation.py): the tables, the static figures' tick labels, and
the interactive plot's (page.js)."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sbpbench.outputs import page
from sbpbench.outputs.notation import number, tick_labels

PAGE_JS = Path(page.__file__).with_name("page.js")


@pytest.mark.parametrize("value,text", [
    (0.04979, "0.04979"), (0.053, "0.05300"), (14.92, "14.92"), (2.51, "2.510"), (1234.0, "1234"),
    (9.99996, "10.00"), (99999.5, "1.000e5"), (123456789, "1.235e8"), (4_500_000_000, "4.500e9"),
    (0.0001234, "1.234e-4"), (-3.2, "-3.200"), (0, "0"), (0.0, "0"), (7, "7"), (99999, "99999"),
    (float("nan"), "n/a"),
])
def test_one_format_for_every_number_of_the_tables(value, text):
    assert number(value) == text


def test_the_runs_table_shows_test_errors_in_percent_as_the_summary_does():
    meta = {"runs": [{"solver": "sbp", "run": 0, "status": "budget", "checkpoints": 3, "iterations": 300,
                      "kernel_evals": 90000, "train_time_s": 0.05, "test_error": 0.04979, "wall_time_s": 1.25},
                     {"solver": "sbp", "run": 1, "status": "interrupted", "checkpoints": 0, "iterations": 0,
                      "kernel_evals": 0, "train_time_s": 0.0, "test_error": None, "wall_time_s": 0.0}]}
    html = page._runs(meta)
    assert "<th>test error (%)</th>" in html
    cells = re.findall(r"<td class='num'>([^<]*)</td>", html)
    assert cells[:7] == ["0", "3", "300", "90000", "0.05000", "4.98", "1.250"]
    assert cells[7:] == ["1", "0", "0", "0", "0", "0"]


def _labels(ticks: list[float], log: bool) -> list[str]:
    """The tick labels page.js writes for ticks (in axis units: log10 on a log axis), run in node."""
    source = PAGE_JS.read_text()
    value = re.search(r"  const value = .*?;\n", source).group(0)
    labels = re.search(r"  function labels\(us, log\) \{.*?\n  \}\n", source, re.S).group(0)
    program = f"{value}{labels}\nconsole.log(JSON.stringify(labels({json.dumps(ticks)}, {json.dumps(log)})));"
    done = subprocess.run(["node", "-e", program], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


TICKS = [
    ([3, 4, 5, 6], True, ["1e3", "1e4", "1e5", "1e6"]),  # not 1000 beside 1e4
    ([2, 3, 4], True, ["100", "1000", "10000"]),
    ([0, 0.5, 1, 1.5], False, ["0.0", "0.5", "1.0", "1.5"]),
    ([12, 14, 16], False, ["12", "14", "16"]),
    ([0, 200000, 400000], False, ["0", "2e5", "4e5"]),
    ([-4, -3, -2], True, ["1e-4", "1e-3", "1e-2"]),
    ([4, 4.301029995663981, 4.698970004336019, 5], True, ["1e4", "2e4", "5e4", "1e5"]),  # 1, 2, 5 times
    ([-2, -1.5, -1], True, ["0.01000", "0.03162", "0.10000"]),
    ([0.1, 0.2, 0.30000000000000004], False, ["0.1", "0.2", "0.3"]),  # added up steps, shown rounded
    ([-0.0, 2.5e-4, 5e-4], False, ["0", "2.5e-4", "5e-4"]),
]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("ticks,log,expected", TICKS)
def test_the_tick_labels_of_an_axis_share_one_notation(ticks, log, expected):
    assert _labels(ticks, log) == expected


@pytest.mark.parametrize("ticks,log,expected", TICKS)
def test_the_static_figures_label_their_ticks_as_the_script_does(ticks, log, expected):
    assert tick_labels([10.0**t if log else t for t in ticks]) == expected

"""The test error at fixed budgets (sbpbench/outputs/budgets.py), against a hand computation."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from sbpbench.errors import UserError
from sbpbench.experiment import config
from sbpbench.outputs.budgets import budget_table, budget_text, default_budgets

#: entry -> runs, each (kernel evaluations of its checkpoints, test errors there)
RUNS = {"a[C=1]": [([0, 50, 200, 1500], [0.5, 0.4, 0.3, 0.2]), ([0, 50, 200, 1500], [0.5, 0.3, 0.3, 0.1])],
        "b": [([0, 100, 2000], [0.5, 0.25, 0.15]), ([0, 120, 3000], [0.5, 0.35, 0.05])],
        "c": [([20, 3000], [0.45, 0.05])]}


def synthetic() -> pd.DataFrame:
    rows = [{"solver": label, "solver_name": label[0], "run": run, "checkpoint": k, "kernel_evals": float(x),
             "train_time_s": x / 1000, "test_error": e}
            for label, runs in RUNS.items() for run, (xs, es) in enumerate(runs)
            for k, (x, e) in enumerate(zip(xs, es))]
    return pd.DataFrame(rows).sample(frac=1, random_state=0)  # the checkpoints' order, not the rows', counts


def test_the_test_error_at_a_budget_is_each_runs_last_checkpoint_by_then():
    table = budget_table(synthetic(), "kernel_evals", [10, 100, 1000, 2500])
    assert table.budgets == (10, 100, 1000, 2500)
    rows = {r.solver: r for r in table.rows}
    a, b, c = rows["a[C=1]"], rows["b"], rows["c"]
    assert (a.runs, b.runs, c.runs) == (2, 2, 1)
    # at 100: a's runs at 50 (40%, 30%), b's at 100 (25%) and at 0 (50%); at 2500 b's second run is
    # still at 120 (15%, 35%: a standard error of 10)
    assert a.means == pytest.approx((50, 35, 30, 15)) and a.ses == pytest.approx((0, 5, 0, 5))
    assert b.means == pytest.approx((50, 37.5, 30, 25)) and b.ses == pytest.approx((0, 12.5, 5, 10))
    # c has no checkpoint by 10 (n/a), and one run: no standard error
    assert math.isnan(c.means[0]) and c.means[1:] == pytest.approx((45, 45, 45)) and all(map(math.isnan, c.ses))
    assert a.best == (True, True, True, True) and b.best == (True, False, True, False)  # 30 = 30 at 1000: a tie
    assert c.best == (False, False, False, False)
    seconds = budget_table(synthetic(), "seconds", [0.1])
    assert {r.solver: r.means[0] for r in seconds.rows} == pytest.approx({"a[C=1]": 35, "b": 37.5, "c": 45})


def test_the_default_budgets_are_the_powers_of_ten_every_entry_covers():
    # every run reaches 120 kernel evaluations positive and lasts past 1500: 1000 only
    assert default_budgets(synthetic(), "kernel_evals") == (1000,)
    assert default_budgets(synthetic(), "seconds") == (1,)
    assert budget_table(synthetic(), "kernel_evals").budgets == (1000,)
    wide = synthetic()
    wide["kernel_evals"] *= 1e6
    assert default_budgets(wide, "kernel_evals") == (1e9,)
    no_evals = synthetic().assign(kernel_evals=float("nan"))
    assert default_budgets(no_evals, "kernel_evals") == () and budget_table(no_evals, "kernel_evals").rows == ()


def test_the_budget_text_marks_the_best_and_says_how_a_value_is_taken():
    text = budget_text(synthetic()).splitlines()
    assert "last checkpoint at or before the budget" in text[0] and "kernel evaluations" in text[0]
    assert text[1].split() == ["entry", "runs", "1000"]
    cells = {line.split()[0]: line.split()[1:] for line in text[2:5]}
    assert cells["a[C=1]"] == ["2", "30.00", "±", "0.00", "*"] and cells["b"] == ["2", "30.00", "±", "5.00", "*"]
    assert cells["c"] == ["1", "45.00", "±", "n/a"]  # one run: no spread, spelt as the summary spells it
    assert "standard error over runs (n/a for one run)" in text[0]
    assert "training seconds" in text[5]
    one = synthetic()
    assert budget_text(one[one["solver"] == "b"]) == "" == budget_text(one.iloc[:0])


def test_the_page_shows_the_same_budget_table_with_the_best_in_bold():
    from sbpbench.outputs import page

    html = page._budgets(synthetic(), {})
    assert html.count("<table class='sortable'>") == 2 and "bold marks the lowest mean" in html
    kernel = html.split("<table")[1]
    assert kernel.count("<td class='best num'>") == 2 and "<td class='best num'>30.00 ± 0.00</td>" in kernel
    assert "<td class='num'>45.00 ± n/a</td>" in kernel and "<th>1000</th>" in kernel
    assert page._budgets(synthetic().iloc[:0], {}) == ""
    chosen = page._budgets(synthetic(), {"kernel_evals": (100.0, 2500.0)})  # a config's report section
    assert "<th>100</th><th>2500</th>" in chosen and "<th>1</th>" in chosen  # seconds: the default


def test_a_config_sets_the_budgets_in_its_report_section(tmp_path):
    path = tmp_path / "exp.yaml"
    text = "dataset: {name: adult}\nproblem: {C: 1}\nsolvers: [smo]\n"
    path.write_text(text + "report: {kernel_evals: [3e6, 1e6], seconds: 10}\n")
    assert config.load(path).report == {"kernel_evals": (1e6, 3e6), "seconds": (10.0,)}
    path.write_text(text)
    assert config.load(path).report == {}
    assert budget_text(synthetic(), {"kernel_evals": [100, 2500]}).splitlines()[1].split() == [
        "entry", "runs", "100", "2500"]
    for report, message in (("{kernel_evals: [1e6, 0]}", "key 'report.kernel_evals[1]': must be positive"),
                            ("{evals: 1}", "key 'report.evals': unknown key (valid: kernel_evals, seconds)"),
                            ("[1e6]", "key 'report': expected a mapping")):
        path.write_text(text + f"report: {report}\n")
        with pytest.raises(UserError) as info:
            config.load(path)
        assert message in str(info.value) and str(path) in str(info.value) and "\n" not in str(info.value)


def test_the_console_breaks_the_captions_at_its_width():
    lines = budget_text(synthetic(), columns=60).splitlines()
    assert max(map(len, lines[:4])) <= 59 and "last checkpoint at or" in " ".join(lines[:4])
    assert lines.index(next(line for line in lines if line.startswith("entry"))) > 1
    # four budgets: 78 characters a row, 72 without the label
    narrow = budget_text(synthetic(), {"kernel_evals": [10, 100, 1000, 2500]}, columns=73).splitlines()
    assert max(map(len, narrow)) <= 72 and "a[C=1]" in narrow  # the label on a line of its own
    below = narrow[narrow.index("a[C=1]") + 1]
    assert below.startswith("  ") and below.split()[:4] == ["2", "50.00", "±", "0.00"]

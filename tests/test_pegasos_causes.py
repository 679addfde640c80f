"""scripts/pegasos_causes.py: the causes of the two Pegasos Figure 2 rows that differ, and the rows that quote them."""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sbpbench import papers
from sbpbench.errors import UserError
from sbpbench.experiment.config import parse
from sbpbench.papers import declarations, pegasos
from sbpbench.results.lookup import ExperimentResult

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))  # the scripts import their helpers by name
from pegasos_causes import (  # noqa: E402
    LONGER,
    OPTIMUM_TOL,
    decide_norma,
    decide_sgd,
    least_along_the_way,
    longer_norma_config,
    main,
    norma_params,
    optimum,
    optimum_config,
    sgd_config,
    sgd_etas,
)

ROOT = Path(__file__).resolve().parents[1]
BASE = {"name": "pegasos-figure2-norma", "dataset": {"name": "reuters"}, "kernel": {"name": "linear"},
        "problem": {"lambda": 2e-4, "bias": False}, "solvers": ["pegasos", {"name": "norma", "label": "norma"}],
        "budget": {"epochs": 128.7}, "runs": 5, "seed": 0}


def _eta(eta: float, reached: str, ratio: str, estimate: float = 0.55) -> dict:
    return {"eta": eta, "runs": 5, "reached": {"estimate": 1.0, "interval": [0.65, 1.0], "outcome": reached},
            "ratio": {"estimate": estimate, "interval": [estimate - 0.03, estimate + 0.03], "outcome": ratio}}


def test_decide_sgd_names_data_and_the_eta_where_one_keeps_pace():
    etas = [_eta(0.01, "supports", "contradicts", 0.307), _eta(0.03, "supports", "supports", 0.556),
            _eta(0.1, "contradicts", "contradicts", 0.191)]
    cause, why = decide_sgd(etas)
    assert cause == "data"
    assert "(against 1/2), eta = 0.03: 0.556 [0.526, 0.586] (most runs get there)" in why
    assert "slower: 0.01: 0.307 [0.277, 0.337]; most runs never get there: eta = 0.1" in why
    assert why.endswith(": at eta = 0.03 fixed-rate SGD converges about as fast as Pegasos, between the decades of "
                        "the paper's grid, which was for astro-ph")


def test_decide_sgd_needs_both_comparisons_to_support():
    assert decide_sgd([_eta(0.03, "supports", "inconclusive")])[0] == "not established"
    assert decide_sgd([_eta(0.03, "inconclusive", "supports")])[0] == "not established"
    cause, why = decide_sgd([_eta(0.01, "supports", "contradicts", 0.3)])
    assert cause == "not established" and "eta = none passing" in why and "slower: 0.01: 0.3 [0.27, 0.33]" in why
    assert why.endswith("no eta keeps pace; tried: a finer grid of eta")


def _runs(label: str, name: str, reach_at: float, rng: np.random.Generator) -> list[dict]:
    """Five runs falling from 1 to 0.05 (Pegasos) or to 0.0505, at the iteration ``reach_at`` (jittered)."""
    rows = []
    for run in range(5):
        at = reach_at * (1 + 0.02 * rng.standard_normal())
        for checkpoint, iteration in enumerate(np.geomspace(1, 10 * reach_at, 60)):
            level = 0.05 + (0.0005 if name == "sgd" else 0.0)
            objective = level if iteration >= at else 1.0
            rows.append({"solver": label, "solver_name": name, "run": run, "checkpoint": checkpoint,
                         "iteration": iteration, "primal_objective": objective})
    return rows


def test_sgd_etas_judge_each_eta_by_the_claims_own_comparisons():
    rng = np.random.default_rng(0)
    curves = pd.DataFrame(_runs("pegasos", "pegasos", 1000, rng) + _runs("sgd eta=0.03", "sgd", 1500, rng)
                          + _runs("sgd eta=0.01", "sgd", 4000, rng))
    res = ExperimentResult("pegasos-causes-sgd", Path("."), curves, {})
    found = {e["eta"]: e for e in sgd_etas(res, (0.01, 0.03))}
    assert found[0.03]["reached"]["outcome"] == found[0.03]["ratio"]["outcome"] == "supports"
    assert found[0.01]["ratio"]["outcome"] == "contradicts" and found[0.01]["runs"] == 5
    assert decide_sgd(list(found.values()))[0] == "data"


def _norma(**changes: dict) -> dict:
    record = {"lambda": 2e-4, "norma_params": {"p": 0.7071, "mini_batch": 1, "projection": False, "paper": True},
              "final": {"pegasos": {"test_hinge_loss": 0.0918, "primal_objective": 0.0628},
                        "norma": {"test_hinge_loss": 0.088, "primal_objective": 0.166}},
              "optima": {"0.0001": {"test_hinge_loss": 0.0943, "primal_objective": 0.042, "duality_gap": 3e-10},
                         "0.0002": {"test_hinge_loss": 0.0919, "primal_objective": 0.0625, "duality_gap": 3e-10}},
              "pegasos_least": {"test_hinge_loss": 0.0814, "iteration": 3982.0},
              "longer": {"factor": LONGER, "iterations": 1e7, "test_hinge_loss": 0.084, "primal_objective": 0.094}}
    for key, value in changes.items():
        record[key] = {**record[key], **value}
    return record


def test_decide_norma_names_data_where_the_test_loss_is_least_before_the_optimum():
    cause, why = decide_norma(_norma())
    assert cause == "data"
    assert "the optimum at lambda = 0.0002 (DCD, duality gap 3e-10): 0.0919" in why
    assert "Pegasos' own runs pass 0.0814 at 3.98e+03 iterations" in why and "Norma, not converged, ends lower" in why


def test_decide_norma_flips_on_each_hypothesis():
    assert decide_norma(_norma(norma_params={"p": 0.5, "paper": False}))[0] == "setup"
    cause, why = decide_norma(_norma(final={"pegasos": {"test_hinge_loss": 0.095, "primal_objective": 0.07},
                                            "norma": {"test_hinge_loss": 0.088, "primal_objective": 0.166}}))
    assert cause == "not established" and "fails: Pegasos at the optimum's test hinge loss" in why
    low = {"test_hinge_loss": 0.085, "primal_objective": 0.04, "duality_gap": 1e-9}
    cause, why = decide_norma(_norma(optima={"0.0001": low}))
    assert cause == "not established" and "fails: no lambda's optimum as low as Norma" in why
    cause, why = decide_norma(_norma(pegasos_least={"test_hinge_loss": 0.09}))
    assert cause == "not established" and "fails: Pegasos' iterates below Norma on the way" in why


def _meta_result(**norma: object) -> ExperimentResult:
    params = {"p": 2 ** -0.5, "mini_batch": 1, "projection": False, **norma}
    meta = {"resolved": {"solvers": [{"label": "pegasos", "params": {}}, {"label": "norma", "params": params}]}}
    return ExperimentResult("pegasos-figure2-norma", Path("."), pd.DataFrame(), meta)


def test_norma_params_are_the_papers_only_in_its_range_at_k_1_without_projection():
    assert norma_params(_meta_result())["paper"]
    assert not norma_params(_meta_result(p=0.5))["paper"]
    assert not norma_params(_meta_result(mini_batch=2))["paper"]
    assert not norma_params(_meta_result(projection=True))["paper"]


def test_the_configs_keep_the_committed_settings_and_validate():
    sgd = sgd_config(BASE, (0.01, 0.03))
    assert sgd["solvers"] == ["pegasos", {"name": "sgd", "label": "sgd eta=0.01", "eta": 0.01},
                              {"name": "sgd", "label": "sgd eta=0.03", "eta": 0.03}]
    opt = optimum_config(BASE, 1e-4)
    assert opt["problem"] == {"lambda": 1e-4, "bias": False} and opt["runs"] == 1
    assert opt["solvers"] == [{"name": "dcd", "tol": OPTIMUM_TOL}] and BASE["problem"]["lambda"] == 2e-4
    longer = longer_norma_config(BASE)
    assert longer["budget"]["epochs"] == pytest.approx(128.7 * LONGER) and longer["seed"] == 0
    for config in (sgd, opt, longer):
        assert parse(config, "test").lam == config["problem"]["lambda"]


def test_least_along_the_way_and_the_optimum_read_the_curves():
    curves = pd.DataFrame({"solver": ["pegasos"] * 6 + ["norma"] * 2, "run": [0, 0, 0, 1, 1, 1, 0, 0],
                           "checkpoint": [0, 1, 2, 0, 1, 2, 0, 1], "iteration": [1, 10, 100, 1, 10, 100, 1, 10],
                           "test_hinge_loss": [0.5, 0.07, 0.09, 0.5, 0.09, 0.09, 0.01, 0.02],
                           "primal_objective": [1, 0.5, 0.1, 1, 0.6, 0.1, 1, 1],
                           "duality_gap": [1, 1, 1e-9] * 2 + [0, 0]})
    res = ExperimentResult("x", Path("."), curves, {})
    assert least_along_the_way(res, "pegasos") == {"test_hinge_loss": pytest.approx(0.08), "iteration": 10.0}
    one = ExperimentResult("x", Path("."), curves[curves["solver"] == "pegasos"].iloc[:3], {})
    assert optimum(one) == {"primal_objective": 0.1, "duality_gap": 1e-9, "test_hinge_loss": 0.09}


def test_without_committed_runs_the_script_says_so_and_exits_2(tmp_path, capsys):
    assert main(["--results", str(tmp_path), "--out", str(tmp_path / "out.json")]) == 2
    assert "no committed runs of pegasos-figure2-sgd" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()


def _explained_rows() -> dict[str, declarations.Posed]:
    return {row.cause.row: row for row in pegasos.CLAIMS.groups
            if isinstance(row, declarations.Posed) and row.cause is not None}


def test_the_committed_record_covers_every_explained_row_with_a_fixed_cause():
    found = json.loads((ROOT / "results" / "paper" / pegasos.CAUSES_RECORD).read_text())
    assert found["script"] == "scripts/pegasos_causes.py"
    assert set(found["rows"]) == set(_explained_rows()) == {pegasos.SGD_ROW, pegasos.NORMA_ROW}
    assert all(record["cause"] in declarations.CAUSE_WORDS and record["evidence"] for record in found["rows"].values())
    assert (ROOT / "results" / "paper" / pegasos.CAUSES_RECORD).with_suffix(".md").is_file()


def test_the_rows_that_differ_quote_the_records_cause(monkeypatch):
    monkeypatch.chdir(ROOT)
    table = declarations.Claims(tuple(_explained_rows().values())).table(papers.results(papers.PAPER_RESULTS))
    found = json.loads((ROOT / "results" / "paper" / pegasos.CAUSES_RECORD).read_text())["rows"]
    for row, key in zip(table.rows, _explained_rows()):
        assert row[3].endswith(f": cause: {found[key]['cause']}"), row[0]
        assert f"scripts/pegasos_causes.py ({pegasos.CAUSES_RECORD}): {found[key]['evidence']}" in row[2], row[0]


def test_a_foreign_cause_in_the_record_is_refused(tmp_path):
    folder = tmp_path / "pegasos-figure2-sgd"
    folder.mkdir()
    res = ExperimentResult("pegasos-figure2-sgd", folder, pd.DataFrame(), {})
    cause = _explained_rows()[pegasos.SGD_ROW].cause
    assert cause is not None and cause.named(res)[0] == "not established"
    record = tmp_path / pegasos.CAUSES_RECORD
    record.parent.mkdir()
    record.write_text(json.dumps({"rows": {pegasos.SGD_ROW: {"cause": "bad luck", "evidence": ""}}}))
    with pytest.raises(UserError, match="not the output of scripts/pegasos_causes.py.*bad luck"):
        cause.named(res)

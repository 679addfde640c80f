"""scripts/bench_memory.py's staged run (a short run's memory and CPU stage by stage, issue #48) and
scripts/bench_fixed_cost.py's reading of ``python -X importtime``."""

from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


@pytest.fixture
def scripts(monkeypatch):
    """The two scripts as modules (they import bench_common and bench_native from their folder)."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import bench_fixed_cost
    import bench_memory

    return bench_memory, bench_fixed_cost


def test_a_staged_run_gives_each_stage_in_order_with_its_memory_and_cpu(scripts):
    """In a fresh process: the interpreter first (before numpy), then the imports, data, problem,
    warm-up, run and results; the peak and the CPU seconds never go down; the row cache is the
    kernel's count, within its cap."""
    bench_memory, _ = scripts
    found = bench_memory.run_staged({"dataset": {"name": "adult", "n_train": 300, "n_test": 100},
                                     "kernel": {"name": "gaussian", "sigma2": 10, "cache_mb": 0.5},
                                     "solvers": ["sbp"], "runs": 1, "budget": {"epochs": 2}})
    names = [stage[0] for stage in found["stages"]]
    assert names[0] == "interpreter" and names[1].startswith("imports") and names[-1].startswith("results")
    assert [n.split()[0] for n in names[2:6]] == ["data", "problem", "warm-up", "the"]
    peaks, cpu = [s[2] for s in found["stages"]], [s[3] for s in found["stages"]]
    assert peaks == sorted(peaks) and cpu == sorted(cpu)
    assert found["stages"][0][1] < 40 < found["stages"][1][1]  # numpy and numba are not in the interpreter
    assert 0 < found["cached_mb"] <= 0.5 and found["iterations"] == 600


def test_a_failing_staged_run_is_one_line(scripts):
    bench_memory, _ = scripts
    with pytest.raises(SystemExit, match="bench_memory.py: error: the staged run .* failed: .*no-such-solver"):
        bench_memory.run_staged({"solvers": ["no-such-solver"]})


def test_import_times_add_each_top_level_package_own_times(scripts):
    _, bench_fixed_cost = scripts
    report = ("import time: self [us] | cumulative | imported package\n"
              "import time:       100 |        100 |   numpy._core\n"
              "import time:        50 |        150 | numpy\n"
              "import time:       300 |        300 | sbpbench.solvers\n")
    assert bench_fixed_cost.import_times(report) == {"sbpbench": 300, "numpy": 150}

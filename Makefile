# sbpbench: install, run, test, figures. PYTHON may point at any interpreter with the package installed.
VENV   ?= .venv
PYTHON ?= $(VENV)/bin/python

.PHONY: install run test test-slow lint docs speed-gate compile-gate figures bench clean

$(PYTHON):
	python3 -m venv $(VENV)

# pip's own lines show its progress (a first install downloads numba, scipy, dask: a minute or
# two); setuptools' note on editable installs ("Editable installation", a warning that warns of
# nothing here) is silenced by its message.
# The last step compiles the numba loops of the built-in solvers on Adult into numba's cache beside
# the sources: the SBP paper's Figure 2 kernel solvers (the quick start's and configs/adult.yaml's
# among them), then the linear solvers of the SGD and Pegasos papers (in double and, for Table 8,
# single precision): about 40 s of CPU once, that their first runs would pay otherwise (later
# processes load them from the cache in a second).
WARM = $(PYTHON) -m sbpbench run configs/quickstart.yaml -q --no-plot --set runs=1
LINEAR = pegasos, sgd-r, sgd-s, sgd-m, svmperf, ocas, dcd, mpu, svmsgd, sgdqn, norma, sgd
SINGLE = {name: svmsgd, precision: single}, {name: sgdqn, precision: single}, \
	{name: sgd-m, precision: single}, {name: mpu, precision: single}
install: $(PYTHON)
	$(PYTHON) -m pip install -q --upgrade pip
	PYTHONWARNINGS="ignore:Editable installation" $(PYTHON) -m pip install -e ".[test,dask,lint]"
	@echo "Compiling the solvers' numba loops into numba's cache (once, about 40 s of CPU)"
	@warm=$$(mktemp -d) && $(WARM) --results "$$warm" --set "budget={kernel_evals: 100000}" \
		--set "solvers=[sbp, pegasos, sdca, perceptron, smo]" >/dev/null \
		&& $(WARM) --results "$$warm" --set "kernel={name: linear}" --set "budget={epochs: 1}" \
		--set "solvers=[$(LINEAR), $(SINGLE)]" >/dev/null; status=$$?; rm -rf "$$warm"; exit $$status

run:
	$(PYTHON) -m sbpbench run configs/quickstart.yaml

# The suite on every core (pytest-xdist), less the tests marked slow; `make test-slow` runs those
# (CI runs both). --dist loadfile runs each test file on one worker, so that a fixture its tests
# share is made once (the committed report of tests/test_figures_report.py: a minute of a core).
# The slow tests share nothing costly: spread one by one. `$(PYTHON) -m pytest tests/test_x.py`
# runs one file, slow tests included.
test:
	$(PYTHON) -m pytest -q -n logical --dist loadfile -m "not slow"

test-slow:
	$(PYTHON) -m pytest -q -n logical -m slow

# The gate CI runs besides the tests: ruff (style, imports, likely bugs) and mypy (types),
# both configured in pyproject.toml.
lint:
	$(PYTHON) -m ruff check sbpbench tests scripts
	$(PYTHON) -m mypy

# Rewrite every sample output in README.md and docs/*.md by running the command it shows (small
# runs in temporary folders, offline: about a minute); tests/test_doc_samples.py fails on a stale one.
docs:
	$(PYTHON) scripts/doc_samples.py

# The speed gate CI runs after the tests: the hot paths (kernel rows, cached rows, SBP iterations,
# SMO, SGD-s epochs) timed against numpy and LIBSVM in the same run; exit 1 on a slowdown beyond
# the limits stated in scripts/speed_gate.py. About a minute.
speed-gate:
	$(PYTHON) scripts/speed_gate.py

# The compile-time gate CI runs after the speed gate: each built-in solver's first run from an
# empty numba cache (a fresh process each, two at once), its compile time against a reference
# compiled in the same process; exit 1 beyond the limit stated in scripts/compile_gate.py.
# About 2 to 3 minutes on 2 cores.
compile-gate:
	$(PYTHON) scripts/compile_gate.py

# Redraw every figure of the papers from the committed results (results/paper/) into figures/,
# and REPRODUCTION.md from the same results.
figures:
	$(PYTHON) -m sbpbench figures --results results/paper --out figures
	$(PYTHON) -m sbpbench report --results results/paper --out REPRODUCTION.md

# Speed claims: each script times sbpbench and the reference tools in one process run and
# rewrites its section of BENCHMARKS.md (machine, versions, load, ratios). Takes about
# 25 minutes on 2 cores the first time (the exact optimum of the biased Adult problem is
# computed once and cached under $$SBPBENCH_DATA/optima). bench_figure2.py reports the committed
# Figure 2 runs on Adult and on full MNIST (core-hours); `--run` times a new one (Adult ~20 minutes).
# bench_native.py puts the native tools (issvm, svm-train, liblinear-train, svmocas) beside
# sbpbench, installing or building those missing (a few minutes); bench_fixed_cost.py splits a
# short linear run's process into its stages' CPU seconds.
bench:
	$(PYTHON) scripts/bench_kernels.py
	$(PYTHON) scripts/bench_sbp_iteration.py
	$(PYTHON) scripts/bench_vs_libsvm.py
	$(PYTHON) scripts/bench_memory.py
	$(PYTHON) scripts/bench_first_run.py
	$(PYTHON) scripts/bench_short_run.py
	$(PYTHON) scripts/bench_native.py
	$(PYTHON) scripts/bench_fixed_cost.py
	$(PYTHON) scripts/bench_figure2.py
	$(PYTHON) scripts/bench_figure2.py --experiment mnist

clean:
	rm -rf build dist *.egg-info .pytest_cache

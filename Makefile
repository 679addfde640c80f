# sbpbench: install, run, test, figures. PYTHON may point at any interpreter with the package installed.
VENV   ?= .venv
PYTHON ?= $(VENV)/bin/python

.PHONY: install run test figures clean

$(PYTHON):
	python3 -m venv $(VENV)

install: $(PYTHON)
	$(PYTHON) -m pip install -q --upgrade pip
	$(PYTHON) -m pip install -q -e ".[test,dask]"

run:
	$(PYTHON) -m sbpbench run configs/quickstart.yaml

test:
	$(PYTHON) -m pytest -q

# Redraw the figures from whatever is in results/ (the newest run of each experiment).
figures:
	$(PYTHON) -m sbpbench plot results --out figures

clean:
	rm -rf build dist *.egg-info .pytest_cache

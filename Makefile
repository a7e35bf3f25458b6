# The two commands that do all the set-up on a fresh machine:
#   make run    creates .venv, runs the default suite for the device present, writes the report
#   make test   creates .venv (with test extras and headless Chromium), runs the tests
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# torch is pinned to the release this machine serves from disk; any torch >= 2.4 works.
TORCH_PINS ?= torch==2.14.1 torchvision==0.29.1
# Test workers (pytest-xdist): one per core, at most 8 (each holds torch in memory).
TEST_JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 8 ] && n=8; echo $$n)

.PHONY: run test venv clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(TORCH_PINS)
	$(PY) -m pip install -q -e '.[models,report,test]'
	touch $@

venv: $(VENV)/.installed

run: venv
	$(VENV)/bin/gpuarena run

test: venv
	bash scripts/install_chromium.sh
	$(PY) -m pytest -q -n $(TEST_JOBS) --dist worksteal

clean:
	rm -rf $(VENV) reports gpuarena.db

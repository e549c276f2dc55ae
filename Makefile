# qmlir: `make demo` and `make test` each install everything into .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.qmlir-installed
BUILD := build

.PHONY: install demo test lint bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,cuda]'
	touch $(STAMP)

demo: $(STAMP)
	@mkdir -p $(BUILD)
	$(VENV)/bin/qmlir compile samples/mlp.py:build --recipe fp8-current -o $(BUILD)/mlp-fp8-current.vmfb
	$(VENV)/bin/qmlir run $(BUILD)/mlp-fp8-current.vmfb --random-inputs --seed 0 --compare samples/mlp.py:build

test: $(STAMP)
	$(VENV)/bin/ruff check compiler passes runtime_kernels tests samples benchmarks
	$(VENV)/bin/ruff format --check compiler passes runtime_kernels tests samples benchmarks
	$(VENV)/bin/lit -q tests/lit
	$(PY) -m pytest -q tests

lint: $(STAMP)
	$(VENV)/bin/ruff check --fix compiler passes runtime_kernels tests samples benchmarks
	$(VENV)/bin/ruff format compiler passes runtime_kernels tests samples benchmarks

bench: $(STAMP)
	$(PY) benchmarks/cpu.py
	$(PY) benchmarks/quantize_throughput.py

clean:
	rm -rf $(BUILD) tests/lit/Output

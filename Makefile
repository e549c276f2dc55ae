# qmlir: `make demo` and `make test` each install everything into .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.qmlir-installed
BUILD := build

.PHONY: install demo test test-fast test-architectures lint bench clean gpu-build gpu-runtime gpu-run gpu-check gpu-dry-run

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[compile,test,cuda]'
	touch $(STAMP)

demo: $(STAMP)
	@mkdir -p $(BUILD)
	$(VENV)/bin/qmlir compile samples/mlp.py:build --recipe fp8-current -o $(BUILD)/mlp-fp8-current.vmfb
	$(VENV)/bin/qmlir run $(BUILD)/mlp-fp8-current.vmfb --random-inputs --seed 0 --compare samples/mlp.py:build

test: $(STAMP)
	$(VENV)/bin/ruff check compiler passes runtime_kernels tests samples benchmarks
	$(VENV)/bin/ruff format --check compiler passes runtime_kernels tests samples benchmarks
	$(VENV)/bin/lit -q tests/lit
	$(PY) -m pytest -q -n 2 -m "not architectures" tests

# Every transformers family of the architecture sweep (tests/architectures; make test runs the
# families no other test builds).
test-architectures: $(STAMP)
	$(PY) -m pytest -q -n 2 tests/architectures

# No model compiles: lint, lit, unit tests and the quantize core's numerics (about 2 minutes).
test-fast: $(STAMP)
	$(VENV)/bin/ruff check compiler passes runtime_kernels tests samples benchmarks
	$(VENV)/bin/ruff format --check compiler passes runtime_kernels tests samples benchmarks
	$(VENV)/bin/lit -q tests/lit
	$(PY) -m pytest -q -n 2 -m "not models" tests

lint: $(STAMP)
	$(VENV)/bin/ruff check --fix compiler passes runtime_kernels tests samples benchmarks
	$(VENV)/bin/ruff format compiler passes runtime_kernels tests samples benchmarks

bench: $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[bench]'
	$(PY) benchmarks/cpu.py
	$(PY) benchmarks/quantize_throughput.py

# The cuda target: gpu-build needs no GPU (it writes build/gpu-check/); gpu-run needs one, with
# only iree-base-runtime, numpy and torch (it fails with a message when there is no cuda device).
CUDA_ARCH ?= sm_90

gpu-build: $(STAMP)
	PYTHONPATH=. $(PY) benchmarks/gpu_check_build.py --out $(BUILD)/gpu-check --cuda-arch $(CUDA_ARCH)

# The runtime for the GPU machine's Python, unpacked without its tools into wheels/site (git-
# ignored; ~3.6 MB to carry): there, PYTHONPATH=wheels/site:. replaces installing the wheel.
gpu-runtime: $(STAMP)
	$(PY) benchmarks/gpu_runtime.py --out wheels/site

gpu-run:
	PYTHONPATH=. $(PY) benchmarks/gpu_check_run.py --dir $(BUILD)/gpu-check

gpu-check: gpu-build gpu-run

# The same flow on this machine: every artifact built for llvm-cpu and run on local-task.
gpu-dry-run: $(STAMP)
	PYTHONPATH=. $(PY) benchmarks/gpu_check_build.py --target llvm-cpu --out $(BUILD)/gpu-check-cpu
	PYTHONPATH=. $(PY) benchmarks/gpu_check_run.py --dir $(BUILD)/gpu-check-cpu --device local-task

clean:
	rm -rf $(BUILD) tests/lit/Output

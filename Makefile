# Every target creates .venv and installs the project with its test, demo and ray extras when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo lab wheel test docs bench lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,demo,ray]"
	$(BIN)/jupyter-debug-relay install-kernel --sys-prefix
	touch $(STAMP)

demo: $(STAMP)
	@$(BIN)/jupyter-debug-relay demo

# The wheel users install (docs/install.md): dist/jupyter_debug_relay-VERSION-py3-none-any.whl.
wheel:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip wheel --quiet --no-deps -w dist .

# Jupyter refuses to run as root without --allow-root (containers, CI machines).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: $(STAMP)
	$(BIN)/jupyter lab --ip=127.0.0.1 $(ALLOW_ROOT) notebooks/01-quickstart.ipynb

# The suite runs on TEST_WORKERS processes (pytest-xdist), a test file per worker at a time (module fixtures are
# shared within a file); most tests wait on a debuggee or a kernel, so a worker more than the cores keeps them busy.
TEST_WORKERS ?= 3
# Run after the others, not beside them: each starts several relays, kernels and targets at once (debugpy versions,
# 500 stop/continue cycles, a launch per feature); beside them the Ray cluster's test failed on a loaded machine.
ALONE := tests/test_debugpy_versions.py tests/test_rapid_stops.py tests/test_feature_checks.py

test: $(STAMP)
	bash .ci/system-deps
	$(BIN)/ruff check .
	$(BIN)/python -m jupyter_debug_relay.kernel.comm_schema --check docs/comm-protocol.md
	$(BIN)/python -m jupyter_debug_relay.server.openapi --check docs/http-api.md
	$(BIN)/python -m jupyter_debug_relay.errors_page --check docs/python-api.md
	$(BIN)/python -m jupyter_debug_relay.backends.debugpy.features_page --check docs/debugpy.md
	$(BIN)/python -m jupyter_debug_relay.kernel.magics_page --check docs/magics.md
	$(BIN)/python -m jupyter_debug_relay.notebooks_page --check notebooks/README.md
	$(BIN)/python bench/figures.py --check
	$(BIN)/mkdocs build --strict --quiet
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=15 $(patsubst %,--ignore=%,$(ALONE))
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --durations=5 $(ALONE)
	$(BIN)/python -m tests.smoke
	$(BIN)/python -m pytest -q --nbval notebooks/ --nbval-sanitize-with notebooks/sanitize.cfg -p no:cacheprovider --nbval-cell-timeout=120

docs: $(STAMP)
	$(BIN)/python -m jupyter_debug_relay.kernel.comm_schema docs/comm-protocol.md
	$(BIN)/python -m jupyter_debug_relay.server.openapi docs/http-api.md
	$(BIN)/python -m jupyter_debug_relay.errors_page docs/python-api.md
	$(BIN)/python -m jupyter_debug_relay.backends.debugpy.features_page docs/debugpy.md
	$(BIN)/python -m jupyter_debug_relay.kernel.magics_page docs/magics.md
	$(BIN)/python -m jupyter_debug_relay.notebooks_page notebooks/README.md
	$(BIN)/python -m jupyter_debug_relay.cli.demo docs/index.md
	$(BIN)/python bench/figures.py
	$(BIN)/mkdocs build --strict --quiet

bench: $(STAMP)
	$(BIN)/python bench/core_bench.py
	$(BIN)/python bench/target_versions.py
	$(BIN)/python bench/hot_breakpoints.py
	$(BIN)/python bench/record_cost.py
	$(BIN)/python bench/launch_cost.py
	$(BIN)/python bench/instructions.py
	$(BIN)/python bench/backends_bench.py
	$(BIN)/python bench/kernel_bench.py
	$(BIN)/python bench/server_bench.py
	$(BIN)/python bench/mcp_bench.py
	$(BIN)/python bench/editors_bench.py
	$(BIN)/python bench/remote_bench.py
	$(BIN)/python bench/ray_bench.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check jupyter_debug_relay tests bench || true

clean:
	rm -rf $(VENV) build dist tests/artifacts

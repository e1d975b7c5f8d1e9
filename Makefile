# simul — two commands for users: `make reproduce` and `make test`.
# Both run `make setup` first; every step is idempotent.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check
SIMUL := $(VENV)/bin/simul
CORPUS := data/mini
ESPNET_VERSION := 202511
TORCHAUDIO_VERSION := 2.11.0
APT_PACKAGES := espeak-ng libespeak-ng1 festival festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts \
	apertium apertium-eng-spa apertium-es-pt sox libsndfile1 hunspell hunspell-de-de
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SITE := $(VENV)/lib/python3.11/site-packages

.PHONY: setup apt venv corpus test lint reproduce confirm bench docs clean

setup: apt venv

# Debian packages: speech synthesis, rule-based MT (the corpus targets), audio tools, and the
# German spelling dictionary a test checks every German word of the corpus against.
apt:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "apt: installing" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

venv: $(VENV)/.setup-done

# torch first, from its CPU build, so nothing later can pull CUDA wheels; espnet with
# --no-deps (its setuptools<74 pin conflicts with torch 2.13) plus its run-time needs;
# torchaudio without its compiled extension (see docs/reference/setup.md); the hub extra
# (transformers: the Speech2Text adapter and its tests), whose pins keep torch as it is.
$(VENV)/.setup-done: pyproject.toml requirements/constraints.txt requirements/espnet-runtime.txt \
		requirements/test.txt requirements/docs.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "simul needs Python 3.11"'
	[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PIP) torch==2.13.0
	$(PIP) -c requirements/constraints.txt -r requirements/espnet-runtime.txt
	$(PIP) --no-deps espnet==$(ESPNET_VERSION) torchaudio==$(TORCHAUDIO_VERSION)
	$(PIP) --no-deps -r requirements/test.txt
	rm -f $(SITE)/torchaudio/lib/*.so
	$(PIP) -c requirements/constraints.txt Cython  # builds eflomal (sdist only), no isolation
	$(PIP) -c requirements/constraints.txt --no-build-isolation -e '.[dev,lab,hub]'
	$(PIP) -c requirements/constraints.txt -r requirements/docs.txt
	$(PY) -m simul.commands.envcheck
	touch $@

# The embedded mini corpus (git-ignored); a no-op when it is up to date.
corpus: setup
	$(SIMUL) corpus build --corpus $(CORPUS)

# ruff, and the architecture contract of pyproject.toml ([tool.importlinter]): no import
# circle, no import from a higher layer.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache

# The suite on every core (pytest-xdist; TEST_WORKERS=0: in one process, as plain pytest).
# A worker takes a whole module at a time (a module's shared fixtures are made once); the
# notebooks' module first, then quick modules (tests/conftest.py), an order
# --no-loadscope-reorder keeps. (--dist loadgroup
# would split finer, but pytest 9.2 drops its groups: pytest-xdist issue 1386.)
TEST_WORKERS ?= $(shell nproc 2>/dev/null || echo 1)

test: setup corpus lint
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# Every notebook on the embedded corpus (figures/, notebooks/executed/), then the claims.
reproduce: setup corpus
	$(SIMUL) corpus info --corpus $(CORPUS)
	$(SIMUL) reproduce
	$(PY) -m pytest -q -m full_run tests/test_reproduce_full.py -rxX

# After make reproduce: its undecided claims decided again on fresh segments, as many as each
# needs to be decided with probability POWER (default 0.8) were its effect as measured
# (figures/confirm/claims.md); resumable.
confirm: setup corpus
	$(SIMUL) reproduce --confirm $(if $(POWER),--power $(POWER))
	$(PY) -m pytest -q -m full_run tests/test_reproduce_full.py -rxX

# Shared vs naive sweep of N21's grid, real-time factors and CA overheads (prints ratios);
# QUICK=1: the smoke run (two segments, a small grid, one model) that the tests run.
bench: setup corpus
	$(PY) benchmarks/sweep.py $(if $(QUICK),--quick)

# The documentation site in site/: mkdocs --strict (a broken link or a missing API object
# fails); the notebooks as pages with their outputs (docs/hooks.py): a full run's executed
# copies where make reproduce left them, else a quick run's, which this target makes first
# for the notebooks that have none (into notebooks/quick/); each page says which.
docs: venv
	@missing="$$($(PY) docs/hooks.py missing)"; \
	if [ -n "$$missing" ]; then \
	  echo "docs: no executed copy of: $$missing (make reproduce writes them); running them in quick mode into notebooks/quick/"; \
	  $(MAKE) corpus && \
	  $(SIMUL) reproduce --quick --only $$missing --executed notebooks/quick \
	    --figures notebooks/quick/figures || exit 1; \
	fi
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) $(CORPUS) notebooks/executed notebooks/quick figures/*/ site docs/notebooks docs/guide.md \
		docs/changelog.md

# Two commands: `make serve` (install, init on the embedded default, run the
# server) and `make test` (install, lint, type-check, run the whole suite,
# PostgreSQL included: the extra pbm[postgres] is installed with the tests).
VENV ?= .venv
PY ?= python3
BIN = $(VENV)/bin

.PHONY: install serve test lint

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,postgres]'
	touch $@

# This folder's pbm.toml, named: never a site's /etc/pbm/pbm.toml found on the search path.
# `make serve SMTP=2626 WEB=8181`: the ports it listens on (127.0.0.1), written into
# pbm.toml at the first start; given again later, they override pbm.toml for that run.
SMTP ?=
WEB ?=
serve: install
	test -f pbm.toml || $(BIN)/pbm --config pbm.toml init \
	    $(if $(SMTP),--smtp-port $(SMTP)) $(if $(WEB),--web-port $(WEB))
	$(if $(SMTP),PBM_SMTP_LISTEN=127.0.0.1:$(SMTP)) $(if $(WEB),PBM_WEB_LISTEN=127.0.0.1:$(WEB)) \
	    $(BIN)/pbm --config pbm.toml serve

lint: install
	$(BIN)/ruff check pbm tests scripts
	$(BIN)/ruff format --check pbm tests scripts
	$(BIN)/mypy

# The suite starts pbm processes by the score (servers, CLI commands): with
# PYTHONDONTWRITEBYTECODE set (as on some machines) each would compile pbm from its
# source again, so the compiled modules are kept (__pycache__, ignored by git): the
# end-to-end tests take a third less time.
test: install lint
	bash scripts/ensure-tools
	bash scripts/ensure-postgres
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest

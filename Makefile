# Two commands do all set-up on a fresh machine: `make run` (the app with demo data) and `make test`.
PYTHON ?= python3.12
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: run test test-fast venv lint bench clean-demo

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	scripts/run.sh

test: $(STAMP)
	scripts/test.sh

# The edit-test loop: everything but the browser and fuzz tests (make test runs them all).
test-fast: $(STAMP)
	scripts/test.sh -m "not browser and not fuzz"

lint: $(STAMP)
	scripts/lint.sh

bench: $(STAMP)
	scripts/bench.sh

clean-demo:
	rm -rf var/

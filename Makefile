# prunecheck — every target bootstraps .venv by itself from a clean clone.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
SEED   ?= 1

.PHONY: all report report-fresh test test-durations test-all lint format bench frameworks loops loops-render known-bugs known-bugs-pair docs clean node-deps node-deps-if-npm

all: test

$(STAMP): pyproject.toml Makefile
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "prunecheck needs Python 3.11+; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,all]'
	@touch $(STAMP)

# Reuses every run already in reports/results.jsonl for this code (it says so);
# report-fresh deletes that file first and simulates every run again.
report: $(STAMP)
	$(VENV)/bin/prunecheck report --out reports --seed $(SEED)

report-fresh: $(STAMP)
	rm -f reports/results.jsonl
	$(VENV)/bin/prunecheck report --out reports --seed $(SEED)

# The fast suite on every core (pytest-xdist; JOBS=1 runs it serially), naming
# the 20 slowest tests. Tests marked slow or integration are left out (make
# test-all runs them). COVERAGE=1 (CI: .ci/run) adds line coverage of the
# package and fails below the floor ([tool.coverage.report] in pyproject.toml).
#
# Budget: make test stays within 2 minutes on 2 idle cores, about 220 s of
# summed test time plus startup (measured in issue 23's closing note). Before
# adding a test of more than a few seconds, see make test-durations: a whole
# check (three placements) costs about 5 s, one placement about 1.5 s, a
# subprocess of the CLI about 1 s. Check one placement unless placements are
# the point, share a run through a session fixture (tests/conftest.py), call
# main([...]) in process with capsys, and put the thorough variant beside the
# cheap one as pytest.param(..., marks=pytest.mark.slow); real clusters, venvs
# and many child processes are @pytest.mark.integration (tests/conftest.py).
JOBS     ?= auto
COVERAGE ?=
TEST_COV := $(if $(COVERAGE),--cov --cov-report=term)
# Bytecode caches (__pycache__/, git-ignored) are written even where the
# environment sets PYTHONDONTWRITEBYTECODE: each xdist worker and each of
# the suite's child processes otherwise recompiles (and pytest re-rewrites)
# every module it imports, about 3.5 s of each worker's collection.
PYTEST   := PYTHONDONTWRITEBYTECODE= $(PY) -m pytest
test: $(STAMP)
	$(PYTEST) -q -m "not slow and not integration" -n $(JOBS) --dist worksteal --durations=20 $(TEST_COV)

# The fast suite's 30 slowest tests (setup, call and teardown each), and the
# summed test time against the budget above; JOBS as for make test.  Then the
# 30 costliest tests in CPU time and the CPU time of the tests and of the whole
# test processes (tests/cpu_times.py): on a shared machine, wall-clock time
# measures the load beside the run, CPU time what the suite costs.
test-durations: $(STAMP)
	rm -f .pytest-cpu.*.tsv
	PRUNECHECK_CPU_TIMES=$(CURDIR)/.pytest-cpu $(PYTEST) -q -m "not slow and not integration" -n $(JOBS) --dist worksteal --durations=30 --junitxml=.pytest-durations.xml
	$(PY) -c 'import xml.etree.ElementTree as E; c = list(E.parse(".pytest-durations.xml").iter("testcase")); print("%d tests, %.0f s of test time summed (budget: 220 s on 2 idle cores)" % (len(c), sum(float(x.get("time") or 0) for x in c)))'
	$(PY) tests/cpu_times.py $(CURDIR)/.pytest-cpu

# Every test, slow and integration ones too, with line coverage of the package;
# property tests get Hypothesis's full 100 examples (make test: 20; tests/conftest.py).
test-all: $(STAMP) node-deps-if-npm
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-full} $(PYTEST) -q -n $(JOBS) --dist worksteal --durations=20 --cov

# The npm packages of black-box mode's node tests, each from its committed lockfile (node
# 18+; the tests skip, saying so, without node or without them): the Vercel AI SDK provider
# packages tests/test_blackbox_ai_sdk.py reads the fake model endpoint with, into .node/ai_sdk,
# and each TypeScript example agent's, into its own node_modules/ (git-ignored; no bin links,
# so the source tree holds no symlink).
node-deps:
	mkdir -p .node/ai_sdk
	cp tests/node/ai_sdk/package.json tests/node/ai_sdk/package-lock.json .node/ai_sdk/
	cd .node/ai_sdk && npm ci --no-audit --no-fund
	for d in examples/blackbox/ts-*/; do (cd $$d && npm ci --no-audit --no-fund --no-bin-links) || exit 1; done

# make test-all's: node-deps when npm is on PATH and a lockfile is newer than the last install
# (the node tests are slow: make test never runs them). Without npm, or offline, the node tests
# skip, each naming what is missing and `make node-deps`; this says so and the suite goes on.
NODE_LOCKS := tests/node/ai_sdk/package-lock.json $(wildcard examples/blackbox/ts-*/package-lock.json)
.node/.installed-stamp: $(NODE_LOCKS)
	$(MAKE) node-deps
	touch $@
node-deps-if-npm:
	@if command -v npm >/dev/null 2>&1; then \
	  $(MAKE) .node/.installed-stamp || echo "make node-deps failed (offline?): the node tests will skip, saying so"; \
	else echo "npm is not on PATH: the node tests will skip (Debian: apt-get install nodejs npm)"; fi

lint: $(STAMP)
	$(VENV)/bin/ruff format --check src tests benchmarks examples docs/gen_cli.py known_bugs/*.py
	$(VENV)/bin/ruff check src tests benchmarks examples docs/gen_cli.py known_bugs/*.py
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-logo

# Apply the formatter and the fixable lint rules (make lint checks both).
format: $(STAMP)
	$(VENV)/bin/ruff format src tests benchmarks examples docs/gen_cli.py known_bugs/*.py
	$(VENV)/bin/ruff check --fix src tests benchmarks examples docs/gen_cli.py known_bugs/*.py

# The documentation site (mkdocs.yml, docs/) into site/, warnings as errors; the
# command-line and incident-class reference pages are generated first (docs/gen_cli.py).
docs: $(STAMP)
	$(PY) docs/gen_cli.py
	$(PY) -m prunecheck.sim.reports.strictness --out docs/reference/provider-strictness.md
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

# The verdict table of framework trimmers (reports/frameworks.md) and a standalone
# reproduction script per unsafe row (reports/frameworks/*.py), each run to confirm.
frameworks: $(STAMP)
	$(PY) -m prunecheck.sim.reports.frameworks --out reports/frameworks.md --scripts reports/frameworks --seed $(SEED)

# The scenario table of real agent loops (reports/loops.md): every example agent of
# examples/loops/ through its framework's own loop, and a standalone script per unsafe
# cell (reports/loops/*.py), each run once with the framework alone to confirm it.
# The committed table is made with `check`'s defaults; LOOP_SCHEDULES=N caps each agent at N
# schedules (split among its classes); ONLY='*guarded*' rechecks the matching rows and keeps
# the others (each row is saved as it is made, in reports/loops/rows.json).
LOOP_SCHEDULES ?=
ONLY ?=
loops: $(STAMP)
	$(PY) -m prunecheck.sim.reports.loops --out reports/loops.md --scripts reports/loops --seed $(SEED) $(if $(LOOP_SCHEDULES),--max-examples $(LOOP_SCHEDULES)) $(if $(ONLY),--only '$(ONLY)')

# The same table and scripts written again from the stored rows and schedules
# (reports/loops/rows.json, *.json) without searching: a script whose text changed runs again.
loops-render: $(STAMP)
	$(PY) -m prunecheck.sim.reports.loops --out reports/loops.md --scripts reports/loops --render-only

# The known-bug corpus (known_bugs/, reports/known-bugs.md): a venv per pinned release,
# built from PyPI (known_bugs/venvs.py), then each bug's ground truth and `prunecheck check`
# with its defaults on its buggy and its fixed release (known_bugs/run.py). Resumes where an
# interrupted run stopped; BUGS="name ..." limits it to some bugs. A venv that fails to
# build does not stop the others: its rows say so.
BUGS ?=
known-bugs: $(STAMP)
	-$(PY) known_bugs/venvs.py $(BUGS)
	$(PY) known_bugs/run.py $(BUGS)

# make test's one buggy/fixed pair (tests/test_known_bugs.py FAST_PAIR): its two venvs
# only, from PyPI (about a minute on an idle machine); CI builds them before make test,
# where the pair's test then runs instead of skipping.
KNOWN_BUGS_PAIR := strands-2085-sliding-window-starts-with-assistant
known-bugs-pair: $(STAMP)
	$(PY) known_bugs/venvs.py $(KNOWN_BUGS_PAIR)

bench: $(STAMP)
	$(PY) benchmarks/run.py --out reports/bench.md

clean:
	rm -rf $(VENV) build site *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis .import_linter_cache .coverage .pytest-durations.xml

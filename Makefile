# Everything runs inside .venv, created on first use from the machine's python3.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DATA ?= ../shared/data/rummikub-nvypk
PHOTOS ?= sample_images/*.jpg

.PHONY: run scan test lint eval bench train train-joker-look finetune clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

$(VENV)/.train-installed: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[dev,train]'
	touch $@

HOST ?= 0.0.0.0
PORT ?= 8000
## run: start the game server on the embedded database in data/ (it prints the address,
## with the table token, as a URL and a QR code for the phones); HTTPS=1 for the live camera
run: $(VENV)/.installed
	$(VENV)/bin/rummikub serve --host $(HOST) --port $(PORT) --data data $(if $(HTTPS),--https)

## scan: read the sample photos and print every tile, set and verdict
scan: $(VENV)/.installed
	$(VENV)/bin/rummikub scan $(PHOTOS) --annotate out/annotated || [ $$? -eq 1 ]  # 1: a table is invalid

## test: lint and the whole test suite, on two workers (pytest-xdist), a file's tests on one:
## the browser and server tests mostly wait, so two take 9.5 min where one took 15.8
test: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q -n 2 --dist loadfile

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

## eval: accuracy of the shipped models on the held-out valid/ photos (as taken, warped
## as a lower camera sees them: bench.eval_plane_view, squashed as a low phone sees tiles
## lying flat: bench.eval_low_phone, and re-lit as a room at home lights
## them: bench.eval_light; blurred, darkened and overexposed where the quality gate is set:
## bench.eval_quality; with a painted hand where the covered-photo gate is set:
## bench.eval_cover), on rendered editions never seen in training (bench.eval_editions)
## and on rendered stands of 1-3 tiers with depth in those editions (bench.eval_depth);
## white Original racks at 16 MP read as `rummikub score` reads them, the phone held sideways
## and upright (bench.eval_white_racks [--portrait]); the dataset's real photos of a black
## rack, every tile on it counted (bench.eval_real_racks);
## painted hands over rendered stands, as a rack photo's gate judges them (bench.eval_rack_hands);
## joker faces no edition of training prints, on those editions (bench.eval_jokers)
eval: $(VENV)/.installed
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.eval_vision
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.eval_table
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.eval_plane_view
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.eval_low_phone
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.eval_light
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.eval_quality
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.eval_cover
	$(PY) -m bench.eval_editions
	$(PY) -m bench.eval_depth
	$(PY) -m bench.eval_white_racks
	$(PY) -m bench.eval_white_racks --portrait
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.eval_real_racks
	$(PY) -m bench.eval_rack_hands
	$(PY) -m bench.eval_jokers

## bench: speed of the referee and of the photo path, each figure also as a ratio to a
## floor measured in the same run (JPEG decode + one pass of both models, bench/floor.py);
## phone-sized photos (12, 50 MP) read right and fast (bench/eval_big_photos.py); and the
## same photos uploaded to the game server (bench/upload_bench.py, ~30 s); calibration,
## and 1000x750 / 12 / 50 MP reads without and with a profile (bench/calibrate_bench.py);
## a 16 MP rendered tile stand read, over the floor (bench/rack_bench.py)
bench: $(VENV)/.installed
	$(PY) -m bench.referee_bench
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.vision_bench
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.table_bench
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.eval_big_photos
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.upload_bench
	$(PY) -m bench.calibrate_bench
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.rack_bench

## train: rebuild every model in models/ from scratch on the CPU (the joker look last: it is
## fine-tuned from the classifier just trained)
train: $(VENV)/.train-installed
	RUMMIKUB_DATA=$(DATA) $(PY) -m training.train_all
	$(MAKE) train-joker-look

## train-joker-look: models/joker_look.onnx again from models/classifier.onnx (~20 min, 1 thread;
## its recipe: models/joker_look.md)
train-joker-look: $(VENV)/.train-installed
	RUMMIKUB_DATA=$(DATA) $(PY) -m training.joker_look --init models/classifier.onnx --out models

## finetune: the recipe of the shipped models (~90 min on 2 cores): (1) both networks continued
## from models/ on the real photos + rendered editions, side by side (52 min); (2) that
## detector 34 min more with a larger share of real photos at half the learning rate (it had
## taken wood knots for tiles); (3) paired (training.compose: not-a-tile threshold, card) into
## out/finetune_models. Copy into models/ only if `make eval` is no worse.
finetune: $(VENV)/.train-installed
	RUMMIKUB_DATA=$(DATA) $(PY) -m training.train_all --init-from models --out out/finetune \
		--work out/finetune_work --minutes 52 --editions 0.7 --lr 6e-4 --detector-synth 0.4 --seed 3
	RUMMIKUB_DATA=$(DATA) $(PY) -m training.detector.train --minutes 34 --out out/finetune_detector \
		--seed 4 --threads 1 --init-onnx out/finetune/detector.onnx --editions 0.7 --lr 3e-4 --synth 0.3
	RUMMIKUB_DATA=$(DATA) $(PY) -m training.compose --detector out/finetune_detector \
		--classifier out/finetune --out out/finetune_models
	RUMMIKUB_DATA=$(DATA) $(PY) -m bench.eval_table --models out/finetune_models
	$(PY) -m bench.eval_editions --models out/finetune_models

clean:
	rm -rf $(VENV) out .pytest_cache

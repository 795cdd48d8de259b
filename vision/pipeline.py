"""One photo in, every tile out: decode -> detect -> rectify + classify -> TileDetections.

`TileReader` loads both ONNX models once and is then reused for every photo (the CLI, the
app, the benchmarks and the evaluation all go through it). It records how long each stage
of the last call took in `last_timings` (seconds), which `bench/vision_bench.py` reports.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from vision.detections import TileDetections
from vision.labels import TILE_CLASSES
from vision.settings import MODELS_DIR

# A reading whose best class probability is below this is flagged `uncertain` (the
# classifier's sidecar may override it with "uncertain_below").
DEFAULT_UNCERTAIN_BELOW = 0.6
MODEL_FILES = ("detector.onnx", "classifier.onnx")
# Written by `training.calibrate`: how the two models' scores combine into "this is a tile".
PIPELINE_SPEC = "pipeline.json"


class ModelsMissing(FileNotFoundError):
    """The ONNX models are not where they were looked for (one clear line for the user)."""


def _missing_models(models_dir: Path) -> list[str]:
    return [name for name in MODEL_FILES if not (models_dir / name).is_file()]


class TileReader:
    """The whole photo pipeline with both models loaded once."""

    def __init__(self, detector, classifier, *, uncertain_below: float | None = None,
                 reject_below: float = 0.0) -> None:
        self.detector = detector
        self.classifier = classifier
        # A detection whose detector score times best class probability is below this is
        # not a tile (a knot in the wood reads as no tile in particular).
        self.reject_below = float(reject_below)
        self.labels: tuple[str, ...] = tuple(getattr(classifier, "labels", None) or TILE_CLASSES)
        if uncertain_below is None:
            spec = getattr(classifier, "spec", None)
            from_spec = spec.get("uncertain_below") if isinstance(spec, dict) else None
            uncertain_below = float(from_spec) if from_spec is not None else DEFAULT_UNCERTAIN_BELOW
        self.uncertain_below = float(uncertain_below)
        self.last_timings: dict[str, float] = {}

    @classmethod
    def load(cls, models_dir: Path | str | None = None, **kwargs) -> TileReader:
        """Load detector and classifier from `models_dir` (default `models/`).

        Raises `ModelsMissing` naming the folder when a model file is not there.
        """
        models_dir = Path(models_dir) if models_dir is not None else MODELS_DIR
        missing = _missing_models(models_dir)
        if missing:
            raise ModelsMissing(
                f"model files missing in {models_dir}: {', '.join(missing)} "
                "(run `make train`, or set RUMMIKUB_MODELS)"
            )
        from vision.classify import TileClassifier
        from vision.detect import TileDetector

        spec_path = models_dir / PIPELINE_SPEC
        if spec_path.is_file() and "reject_below" not in kwargs:
            kwargs["reject_below"] = float(json.loads(spec_path.read_text())["reject_below"])
        return cls(TileDetector.load(models_dir), TileClassifier.load(models_dir), **kwargs)

    # -- reading ---------------------------------------------------------------------------
    def read(self, image_bgr: np.ndarray) -> TileDetections:
        """Every tile in a BGR photo, corners clockwise from the upright top-left."""
        timings = {}
        start = time.perf_counter()
        quads, scores = self.detector.detect(image_bgr)
        timings["detect"] = time.perf_counter() - start
        if len(quads) == 0:
            timings["classify"] = 0.0
            self.last_timings = timings
            return TileDetections.empty(self.labels)
        start = time.perf_counter()
        both_ways = getattr(self.classifier, "classify_both_ways", None)
        if both_ways is not None:
            upright, probs, flip = both_ways(image_bgr, quads)
        else:
            (upright, probs), flip = self.classifier.classify(image_bgr, quads), None
        timings["classify"] = time.perf_counter() - start
        probs = np.asarray(probs, np.float32)
        scores = np.asarray(scores, np.float32).reshape(-1)
        upright = np.asarray(upright, np.float32).reshape(-1, 4, 2)
        keep = scores * probs.max(axis=1) >= self.reject_below
        probs, scores, upright = probs[keep], scores[keep], upright[keep]
        flip = None if flip is None else np.asarray(flip, np.float32)[keep]
        class_ids = probs.argmax(axis=1).astype(np.int64)
        uncertain = probs.max(axis=1) < self.uncertain_below
        self.last_timings = timings
        return TileDetections(
            corners=upright,
            detector_scores=scores,
            class_probs=probs,
            class_ids=class_ids,
            labels=self.labels,
            uncertain=uncertain,
            flip_probs=flip,
        )

    def read_bytes(self, data: bytes) -> TileDetections:
        """Decode an encoded photo (JPEG, PNG, ...; EXIF rotation honoured), then `read` it.

        Raises `vision.decode.PhotoError` for empty, corrupt or non-image bytes.
        """
        image = self.decode(data)
        decode_s = self.last_timings.get("decode", 0.0)
        detections = self.read(image)
        self.last_timings = {"decode": decode_s, **self.last_timings}
        return detections

    def decode(self, data: bytes) -> np.ndarray:
        from vision.decode import decode_image

        start = time.perf_counter()
        image = decode_image(data)
        self.last_timings = {"decode": time.perf_counter() - start}
        return image

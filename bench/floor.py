"""The floor every figure of `make bench` is divided by, measured in the same run.

Absolute milliseconds on a shared machine move 2-4x within minutes (other processes, CPU
frequency); the same work timed at the same moment moves with them. The floor is the
least a photo can cost: decoding the 1000x750 benchmark JPEG (`cv2.imdecode`) plus one
pass of each model as onnxruntime runs it (the detector on that photo's prepared input,
the classifier on the batch of that photo's tile crops). Pre- and post-processing, the
table logic and writing the JSON are what a figure adds on top of it.

    floor = Floor.load()       # models + the benchmark photo, inputs prepared once
    floor.time_once()          # seconds for one decode + one pass of both models
    floor.median_ms(runs=20)
"""

from __future__ import annotations

import statistics
import time

import cv2
import numpy as np

BENCH_PHOTO = "rummy-36"


def base_photo() -> tuple[bytes, str]:
    """(JPEG bytes of a 1000x750 photo holding 54 tiles, where it came from).

    The real held-out photo `valid/rummy-36` when the dataset is there, else a rendered
    table scene from `training.render` (so the bench runs on a fresh clone too)."""
    try:
        from training.real_data import load_split

        for photo in load_split("valid"):
            if photo.key == BENCH_PHOTO:
                return photo.path.read_bytes(), (
                    f"real photo valid/{photo.key} ({photo.width}x{photo.height}, "
                    f"{len(photo.tiles)} labelled tiles)")
    except (FileNotFoundError, OSError):
        pass
    from training.render import render_scene

    rng = np.random.default_rng(54)
    best = None
    for _ in range(40):
        image, labels = render_scene(rng, width=1000, height=750, kind="table")
        if best is None or abs(len(labels) - 54) < abs(len(best[1]) - 54):
            best = (image, labels)
        if len(labels) == 54:
            break
    image, labels = best
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    return data.tobytes(), f"rendered table scene (training.render, seed 54, {len(labels)} tiles)"


class Floor:
    """JPEG decode + one pass of both models on the benchmark photo."""

    def __init__(self, reader, data: bytes) -> None:
        from vision.recognition.rectify import to_tensor

        self.reader = reader
        self.buffer = np.frombuffer(data, np.uint8)
        image = cv2.imdecode(self.buffer, cv2.IMREAD_COLOR)
        detector, classifier = reader.detector, reader.classifier
        self.detector_input = {detector.input_name: detector.prepare(image)[0]}
        quads, _scores = detector.detect(image)
        crops = classifier.crops(image, quads)
        self.classifier_input = {classifier.input_name: to_tensor(crops, classifier.mean,
                                                                  classifier.std)}
        self.tiles = len(quads)

    @classmethod
    def load(cls, models_dir=None, reader=None) -> Floor:
        """Raises vision.recognition.pipeline.ModelsMissing when there are no models."""
        if reader is None:
            from vision.recognition.pipeline import TileReader

            reader = TileReader.load(models_dir)
        return cls(reader, base_photo()[0])

    def time_once(self) -> float:
        """Seconds of one floor (wall clock); `last_cpu` holds its process CPU seconds."""
        start, start_cpu = time.perf_counter(), time.process_time()
        cv2.imdecode(self.buffer, cv2.IMREAD_COLOR)
        self.reader.detector.session.run(None, self.detector_input)
        self.reader.classifier.session.run(None, self.classifier_input)
        self.last_cpu = time.process_time() - start_cpu
        return time.perf_counter() - start

    def median_ms(self, runs: int = 20, warmup: int = 3) -> float:
        for _ in range(warmup):
            self.time_once()
        return 1000 * statistics.median(self.time_once() for _ in range(runs))


def try_floor_ms(runs: int = 20) -> tuple[float | None, str]:
    """(floor in ms, description), or (None, why not) when the models are missing."""
    from vision.recognition.pipeline import ModelsMissing

    try:
        floor = Floor.load()
    except ModelsMissing as error:
        return None, f"no floor: {error}"
    return floor.median_ms(runs), (f"floor = JPEG decode + one pass of both models on the "
                                   f"1000x750 photo ({floor.tiles} tiles)")


def ratio(ms: float, floor_ms: float | None) -> str:
    """'0.85x' (a figure over the floor), '-' without a floor."""
    if not floor_ms:
        return "-"
    value = ms / floor_ms
    if value >= 0.1:
        return f"{value:.2f}x"
    return f"{value:.4f}x" if value >= 0.0001 else "<0.0001x"

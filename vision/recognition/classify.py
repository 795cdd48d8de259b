"""Read each tile: colour slot + number or joker, and which way is up (ONNX, CPU).

`TileClassifier.classify(image_bgr, quads)` rectifies every quad (q0 -> top-left) to the
crop the model was trained on, runs all crops of the photo in one batch, and returns
the quads reordered clockwise from the tile's upright top-left plus (N, 53) class
probabilities in the sidecar's label order.

Orientation scheme ("joint", from the sidecar): the network has 2 x 53 outputs, class k
seen upright or turned 180 degrees. The class probabilities are the sum over both
orientations; the tile is taken as turned when the turned half holds more probability,
and its quad is then rotated by two corners. A 6 turned round therefore reads as a 6:
the number sits in the upper part of the face, which the network sees.

`quarter_turned(quads)` gives each box turned a quarter round: the reader's second look
(`vision.recognition.pipeline`) at a crop it is not sure of, for a box lying across its tile.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np

from vision.recognition.labels import TILE_CLASSES
from vision.recognition.rectify import canonical_quad, rectify_tiles, rotate_quad_180, to_tensor
from vision.recognition.sessions import DEFAULT_THREADS, ModelsMissing, load_session, read_sidecar
from vision.recognition.settings import MODELS_DIR


def quarter_turned(quads: np.ndarray) -> np.ndarray:
    """Each box turned 90 degrees about its centre, in the detector's corner order.

    A nearly square tile (a rack or a table seen at a low angle, a squat edition) can get a
    box whose long side runs along the tile's width; the crop then shows the number on its
    side, and the same box turned a quarter round shows it upright or turned round, which
    the network reads. (`calibration.head`'s second look uses it too.)"""
    quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    if len(quads) == 0:
        return quads.copy()
    centre = quads.mean(axis=1, keepdims=True)
    turned = (quads - centre) @ np.float32([[0, 1], [-1, 0]]) + centre
    return np.stack([canonical_quad(q) for q in turned]).astype(np.float32)


class TileClassifier:
    def __init__(self, session, spec: dict):
        self.session = session
        self.spec = spec
        self.labels: tuple[str, ...] = tuple(spec.get("labels") or TILE_CLASSES)
        inp = spec.get("input", {})
        self.size = (int(inp.get("width", 32)), int(inp.get("height", 44)))
        self.mean = tuple(inp.get("mean", (0.5, 0.5, 0.5)))
        self.std = tuple(inp.get("std", (0.25, 0.25, 0.25)))
        self.input_name = session.get_inputs()[0].name
        self.scheme = spec.get("orientation", {}).get("scheme", "joint")
        # The penultimate features, when the model has that output (calibration profiles).
        outputs = getattr(session, "get_outputs", list)()
        self.embedding_output: str | None = spec.get("embedding_output") or next(
            (o.name for o in outputs if o.name == "embedding"), None)
        self.model_sha256: str | None = spec.get("sha256")
        # seconds of each step of the last `classify_both_ways` ("crop", "tensor",
        # "network"), for `bench.vision_bench`'s breakdown
        self.last_timings: dict[str, float] = {}
        self.last_crops = np.zeros((0, 0, 0, 3), np.uint8)

    @classmethod
    def load(cls, models_dir: Path | str = MODELS_DIR, threads: int = DEFAULT_THREADS,
             stem: str = "classifier") -> TileClassifier:
        """The classifier `stem`.onnx in `models_dir`, with its sidecar `stem`.json (the
        joker look is a second one: `vision.recognition.joker_look`)."""
        models_dir = Path(models_dir)
        model = models_dir / f"{stem}.onnx"
        if not model.is_file():
            raise ModelsMissing(f"no classifier model at {model} (run `make train`)")
        spec_path = models_dir / f"{stem}.json"
        spec = read_sidecar(spec_path) if spec_path.is_file() else {}
        classifier = cls(load_session(model, threads), spec)
        # A profile is tied to the exact model file it was made with.
        classifier.model_sha256 = hashlib.sha256(model.read_bytes()).hexdigest()
        return classifier

    def crops(self, image_bgr: np.ndarray, quads: np.ndarray) -> np.ndarray:
        """The (N, H, W, 3) uint8 crops the network reads."""
        return rectify_tiles(image_bgr, quads, self.size)

    def predict_crops(self, crops: np.ndarray, with_embedding: bool = False):
        """(class probs (N, 53), probability that each crop shows its tile turned (N,)),
        and with `with_embedding` the (N, D) embedding of the same run."""
        probs, turned_probs, *embedding = self.predict_joint(crops, with_embedding)
        return (probs, turned_probs.sum(axis=1), *embedding)

    def predict_joint(self, crops: np.ndarray, with_embedding: bool = False):
        """(class probs (N, 53) over both orientations, the share of each class that says
        the crop shows the tile turned round (N, 53)); `with_embedding` adds the (N, D)
        penultimate features of the same run (ValueError if the model has none)."""
        n_cls = len(self.labels)
        if with_embedding and not self.embedding_output:
            raise ValueError("this classifier has no embedding output "
                             "(run `python -m training.add_embedding_output`)")
        if len(crops) == 0:
            empty = np.zeros((0, n_cls), np.float32), np.zeros((0, n_cls), np.float32)
            return (*empty, np.zeros((0, 0), np.float32)) if with_embedding else empty
        start = time.perf_counter()
        x = to_tensor(crops, self.mean, self.std)
        tensor = time.perf_counter()
        outputs = self.session.run(None, {self.input_name: x})
        self.last_timings.update(tensor=tensor - start, network=time.perf_counter() - tensor)
        logits = outputs[0].astype(np.float32)
        embedding = None
        if with_embedding:
            names = [o.name for o in self.session.get_outputs()]
            embedding = outputs[names.index(self.embedding_output)].astype(np.float32)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        if p.shape[1] == 2 * n_cls:  # joint: class x (upright, turned)
            p = p.reshape(-1, 2, n_cls)
            result = p.sum(axis=1), p[:, 1]
        else:
            result = p, np.zeros_like(p)
        return (*result, embedding) if with_embedding else result

    def classify(self, image_bgr: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(upright quads (N, 4, 2) float32, class probabilities (N, 53) float32)."""
        upright, probs, _flip = self.classify_both_ways(image_bgr, quads)
        return upright, probs

    def classify_both_ways(self, image_bgr: np.ndarray, quads: np.ndarray):
        """`classify`, plus (N, 53) the share of each class that says the tile lies turned
        the other way round from the upright quad returned."""
        quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        start = time.perf_counter()
        crops = self.crops(image_bgr, quads)
        self.last_timings = {"crop": time.perf_counter() - start}
        self.last_crops = crops  # the pipeline's "not a tile" rules look at them too
        probs, turned_probs = self.predict_joint(crops)
        turned = turned_probs.sum(axis=1) > 0.5
        upright = np.where(turned[:, None, None], rotate_quad_180(quads), quads)
        # For a tile taken as turned, "the other way" is the crop's own upright half.
        flip = np.where(turned[:, None], probs - turned_probs, turned_probs)
        return upright.astype(np.float32), probs.astype(np.float32), flip.astype(np.float32)

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
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnxruntime as ort

from vision.labels import TILE_CLASSES
from vision.rectify import rectify_tiles, rotate_quad_180, to_tensor
from vision.settings import MODELS_DIR


class TileClassifier:
    def __init__(self, session: ort.InferenceSession, spec: dict):
        self.session = session
        self.spec = spec
        self.labels: tuple[str, ...] = tuple(spec.get("labels") or TILE_CLASSES)
        inp = spec.get("input", {})
        self.size = (int(inp.get("width", 32)), int(inp.get("height", 44)))
        self.mean = tuple(inp.get("mean", (0.5, 0.5, 0.5)))
        self.std = tuple(inp.get("std", (0.25, 0.25, 0.25)))
        self.input_name = session.get_inputs()[0].name
        self.scheme = spec.get("orientation", {}).get("scheme", "joint")

    @classmethod
    def load(cls, models_dir: Path | str = MODELS_DIR, threads: int = 2) -> TileClassifier:
        models_dir = Path(models_dir)
        model = models_dir / "classifier.onnx"
        if not model.is_file():
            raise FileNotFoundError(f"no classifier model at {model} (run `make train`)")
        spec_path = models_dir / "classifier.json"
        spec = json.loads(spec_path.read_text()) if spec_path.is_file() else {}
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        return cls(session, spec)

    def crops(self, image_bgr: np.ndarray, quads: np.ndarray) -> np.ndarray:
        """The (N, H, W, 3) uint8 crops the network reads."""
        return rectify_tiles(image_bgr, quads, self.size)

    def predict_crops(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(class probs (N, 53), probability that each crop shows its tile turned (N,))."""
        probs, turned_probs = self.predict_joint(crops)
        return probs, turned_probs.sum(axis=1)

    def predict_joint(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(class probs (N, 53) over both orientations, the share of each class that says
        the crop shows the tile turned round (N, 53))."""
        n_cls = len(self.labels)
        if len(crops) == 0:
            return np.zeros((0, n_cls), np.float32), np.zeros((0, n_cls), np.float32)
        x = to_tensor(crops, self.mean, self.std)
        logits = self.session.run(None, {self.input_name: x})[0].astype(np.float32)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        if p.shape[1] == 2 * n_cls:  # joint: class x (upright, turned)
            p = p.reshape(-1, 2, n_cls)
            return p.sum(axis=1), p[:, 1]
        return p, np.zeros_like(p)

    def classify(self, image_bgr: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(upright quads (N, 4, 2) float32, class probabilities (N, 53) float32)."""
        upright, probs, _flip = self.classify_both_ways(image_bgr, quads)
        return upright, probs

    def classify_both_ways(self, image_bgr: np.ndarray, quads: np.ndarray):
        """`classify`, plus (N, 53) the share of each class that says the tile lies turned
        the other way round from the upright quad returned."""
        quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        probs, turned_probs = self.predict_joint(self.crops(image_bgr, quads))
        turned = turned_probs.sum(axis=1) > 0.5
        upright = np.where(turned[:, None, None], rotate_quad_180(quads), quads)
        # For a tile taken as turned, "the other way" is the crop's own upright half.
        flip = np.where(turned[:, None], probs - turned_probs, turned_probs)
        return upright.astype(np.float32), probs.astype(np.float32), flip.astype(np.float32)

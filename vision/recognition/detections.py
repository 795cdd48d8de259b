"""Tiles found in one photo, as parallel numpy arrays (one row per tile)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vision.recognition.labels import TILE_CLASSES, split_code


@dataclass
class TileDetections:
    """Every tile read in a photo.

    `corners[i]` is tile i's quadrilateral in photo pixels, clockwise from the tile's
    top-left as its number reads upright. `class_probs[i]` holds the classifier's
    probabilities over `labels`; `class_ids` is the reading chosen (normally the argmax,
    but the referee may pick a more probable *consistent* reading). `confidence` is the
    detector's score times the chosen reading's probability. `flip_probs[i]`, when the
    classifier gives it, is the share of the probability that says "this class, but the
    tile turned the other way round from `corners`" (so `class_probs - flip_probs` is the
    share for the tile as it is drawn): what a rack, whose tiles all face one way, needs to
    tell a 6 from a 9.
    """

    corners: np.ndarray  # (N, 4, 2) float32
    detector_scores: np.ndarray  # (N,) float32
    class_probs: np.ndarray  # (N, C) float32
    class_ids: np.ndarray  # (N,) int64
    labels: tuple[str, ...] = TILE_CLASSES
    uncertain: np.ndarray = field(default=None)  # (N,) bool
    flip_probs: np.ndarray | None = None  # (N, C) float32, or None

    def __post_init__(self) -> None:
        n = len(self.corners)
        if self.uncertain is None:
            self.uncertain = np.zeros(n, dtype=bool)
        for name in ("detector_scores", "class_probs", "class_ids", "uncertain", "flip_probs"):
            if getattr(self, name) is not None and len(getattr(self, name)) != n:
                raise ValueError(f"{name} has {len(getattr(self, name))} rows, corners has {n}")

    @classmethod
    def empty(cls, labels: tuple[str, ...] = TILE_CLASSES) -> TileDetections:
        return cls(
            corners=np.zeros((0, 4, 2), np.float32),
            detector_scores=np.zeros(0, np.float32),
            class_probs=np.zeros((0, len(labels)), np.float32),
            class_ids=np.zeros(0, np.int64),
            labels=labels,
        )

    @classmethod
    def concat(cls, parts: list[TileDetections]) -> TileDetections:
        """The tiles of several readings of one photo (same labels), in order."""
        if not parts:
            return cls.empty()
        flips = [p.flip_probs for p in parts]
        return cls(
            corners=np.concatenate([p.corners for p in parts]).astype(np.float32),
            detector_scores=np.concatenate([p.detector_scores for p in parts]),
            class_probs=np.concatenate([p.class_probs for p in parts]),
            class_ids=np.concatenate([p.class_ids for p in parts]),
            labels=parts[0].labels,
            uncertain=np.concatenate([p.uncertain for p in parts]),
            flip_probs=None if any(f is None for f in flips) else np.concatenate(flips),
        )

    def __len__(self) -> int:
        return len(self.corners)

    def __getitem__(self, index) -> TileDetections:
        """Index with a boolean mask, an integer array or a slice; keeps every array aligned."""
        if isinstance(index, int | np.integer):
            index = [int(index)]
        return TileDetections(
            corners=self.corners[index],
            detector_scores=self.detector_scores[index],
            class_probs=self.class_probs[index],
            class_ids=self.class_ids[index],
            labels=self.labels,
            uncertain=self.uncertain[index],
            flip_probs=None if self.flip_probs is None else self.flip_probs[index],
        )

    @property
    def codes(self) -> list[str]:
        """The reading of each tile as a tile code (`'R7'`, `'J'`)."""
        return [self.labels[i] for i in self.class_ids]

    @property
    def confidence(self) -> np.ndarray:
        chosen = self.class_probs[np.arange(len(self)), self.class_ids] if len(self) else np.zeros(0)
        return (self.detector_scores * chosen).astype(np.float32)

    @property
    def tile_scores(self) -> np.ndarray:
        """Detector score x best class probability: how surely each find is a tile at all,
        whatever it reads (a knot in the wood scores low on both)."""
        best = self.class_probs.max(axis=1) if len(self) else np.zeros(0)
        return (self.detector_scores * best).astype(np.float32)

    @property
    def centers(self) -> np.ndarray:
        return self.corners.mean(axis=1)

    def at_edge(self, width: int, height: int) -> np.ndarray:
        """(N,) True for each tile whose outline reaches the edge of a `width` x `height`
        photo: a tile the frame may cut (its number, or part of it, outside the photo)."""
        if len(self) == 0:
            return np.zeros(0, bool)
        q = np.asarray(self.corners, np.float64)
        low = q.min(axis=1)
        high = q.max(axis=1)
        return (low <= 0).any(axis=1) | (high >= (width - 1, height - 1)).any(axis=1)

    @property
    def up_vectors(self) -> np.ndarray:
        """(N, 2) unit vectors from each tile's foot to its top, the way its number reads."""
        q = self.corners.astype(np.float64)
        up = (q[:, 0] + q[:, 1]) / 2 - (q[:, 3] + q[:, 2]) / 2
        return up / np.maximum(np.linalg.norm(up, axis=1, keepdims=True), 1e-9)

    def other_way(self) -> tuple[np.ndarray, np.ndarray]:
        """Per tile, the class it reads as turned round from `corners` (N,) and that
        reading's share of the best reading as drawn (N,): a 6 seen as a 9 gets a 6 and
        some share; an 8 gets itself. Shares are 0 without `flip_probs`."""
        n = len(self)
        if self.flip_probs is None or n == 0:
            return self.class_ids.astype(np.int64), np.zeros(n, np.float32)
        as_drawn = (self.class_probs - self.flip_probs).max(axis=1)
        k = self.flip_probs.argmax(axis=1)
        share = self.flip_probs[np.arange(n), k] / np.maximum(as_drawn, 1e-9)
        return k.astype(np.int64), share.astype(np.float32)

    def to_json(self) -> list[dict]:
        """The `tiles` list of the scan JSON."""
        tiles = []
        # Python floats and bools once for the whole array (the same values float() and
        # bool() give one by one, without a numpy scalar per number).
        corners = np.asarray(self.corners).tolist()
        confidence = self.confidence.astype(np.float64).tolist()
        uncertain = np.asarray(self.uncertain, bool).tolist()
        for i, code in enumerate(self.codes):
            color, number, joker = split_code(code)
            tiles.append(
                {
                    "id": i,
                    "color": color,
                    "number": number,
                    "joker": joker,
                    "corners": [[round(x, 1), round(y, 1)] for x, y in corners[i]],
                    "confidence": round(confidence[i], 4),
                    "uncertain": uncertain[i],
                }
            )
        return tiles

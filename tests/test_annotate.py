"""The annotated picture: each tile outlined in its own colour's ink."""

from __future__ import annotations

import numpy as np

from vision.recognition.annotate import LOOSE_COLOR, TILE_COLORS, VALID_COLOR, TableAnnotator
from vision.recognition.detections import TileDetections

# The profile's labels for the Rummy edition: its fourth colour slot is green (G).
RUMMY_LABELS = tuple(f"{c}{n}" for c in "KRBG" for n in range(1, 14)) + ("J",)


def _one_tile(code: str, labels=RUMMY_LABELS) -> TileDetections:
    corners = np.float32([[[100, 60], [160, 60], [160, 150], [100, 150]]])
    probs = np.zeros((1, len(labels)), np.float32)
    probs[0, labels.index(code)] = 1.0
    return TileDetections(corners=corners, detector_scores=np.float32([0.9]),
                          class_probs=probs, class_ids=np.int64([labels.index(code)]),
                          labels=labels, uncertain=np.zeros(1, bool))


def _outline_ink(picture: np.ndarray) -> str:
    """The letter whose ink is nearest the tile's bottom edge (y = 150, away from corners
    and label; anti-aliasing blends it a little with the photo)."""
    drawn = picture[150, 130].astype(int)
    return min(TILE_COLORS, key=lambda k: np.abs(drawn - np.int32(TILE_COLORS[k])).sum())


def test_a_green_tile_is_outlined_in_green_not_in_the_joker_colour():
    photo = np.full((300, 400, 3), 128, np.uint8)
    picture = TableAnnotator().annotate(photo, _one_tile("G7"))
    assert _outline_ink(picture) == "G"
    blue, green, red = TILE_COLORS["G"]
    assert green > red and green > blue


def test_a_green_tile_is_not_mistaken_for_a_valid_set_outline():
    inks = [TILE_COLORS[letter] for letter in "KRBOGJ"]
    assert len(set(inks)) == len(inks)
    for marker in (VALID_COLOR, LOOSE_COLOR):
        assert sum(abs(a - b) for a, b in zip(TILE_COLORS["G"], marker, strict=True)) >= 60

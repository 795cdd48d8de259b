"""Tiles lying flat seen by a low phone, detected again in the photo stretched upright.

A phone 8-45 degrees above the table (a rack photo, a phone propped on the table) sees a
tile lying flat squashed from top to bottom: nearly square or wider than tall, and often
sheared. The detector learnt tiles whose long side is their up-down axis, so it misses
most of them or boxes them across, and the plane view (`vision.recognition.plane_view`)
cannot help: the tiles it would fit the table's plane to are the ones standing on the
stand, or there are none. Stretching the photo upright by 2 and by 3 is an affine guess at
the view from above for such a camera (the table's depth comes back as height); the
detector runs again on each stretched photo, its boxes mapped back are parallelograms
around the squashed tiles, and those crop them upright (`vision.recognition.rectify`).
The readings are merged tile by tile (`vision.recognition.plane_view.merge_readings`).

The pass runs only when the first one saw tile-like things it could not confirm: heat
peaks of the detector between WEAK_SCORE and its own threshold that lie on no tile it
kept (`weak_unclaimed`). Measured in `docs/decisions/low-tables.md`.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.recognition.fine_scale import MAX_LONG_SIDE
from vision.recognition.plane_view import points_in_quads

# The photo is stretched upright by each of these: 2 finds flat tiles seen 20-35 degrees
# up best, 3 those seen lower; together they find more than either (decision record).
STRETCHES = (2.0, 3.0)
# A heat peak at least this strong that the first pass did not keep is a maybe-tile.
WEAK_SCORE = 0.2
# The pass runs when at least this many maybe-tiles lie on no kept tile.
MIN_WEAK = 2
# A find only the stretched photo shows is kept when it is at least this sure of itself
# (detector score x best class probability; the first pass keeps from 0.134)...
NEW_FIND_SCORE = 0.3
# ... and its body is at least this share as bright as the other tiles' (the stand's
# black beam with its embossed logo measures 0.12-0.27 of them, tiles 0.50 and more).
DARK_SHARE = 0.4


def weak_unclaimed(weak_centres: np.ndarray, tiles: np.ndarray) -> int:
    """How many of the detector's weak peaks (centres (P, 2)) lie on none of the kept
    tiles (corners (N, 4, 2), the same pixels)."""
    weak_centres = np.asarray(weak_centres, np.float64).reshape(-1, 2)
    if len(weak_centres) == 0:
        return 0
    tiles = np.asarray(tiles, np.float64).reshape(-1, 4, 2)
    if len(tiles) == 0:
        return len(weak_centres)
    return int((~points_in_quads(weak_centres, tiles).any(axis=1)).sum())


def stretched(image: np.ndarray, factor: float) -> np.ndarray:
    """`image` stretched upright by `factor` (its width kept)."""
    h, w = image.shape[:2]
    return cv2.resize(image, (w, max(1, round(h * factor))), interpolation=cv2.INTER_LINEAR)


def from_stretched(quads: np.ndarray, factor: float, height: int) -> np.ndarray:
    """Quads (N, 4, 2) in the photo stretched by `factor` -> the photo's pixels (its
    height `height`; pixel centres map to pixel centres, as `stretched` resizes)."""
    quads = np.array(quads, np.float32).reshape(-1, 4, 2)
    scale = height / max(1, round(height * factor))
    quads[..., 1] = (quads[..., 1] + 0.5) * scale - 0.5
    return quads


def stretched_side(long_side: int, multiple: int, shape, factor: float) -> int:
    """The detector input's long side for the photo of `shape` stretched by `factor`: its
    width shrunk as much as the first pass's input (of `long_side`) shrank it, so a tile's
    width stays what the detector saw; at most MAX_LONG_SIDE."""
    h, w = shape[:2]
    scale = long_side / max(h, w)
    side = max(w, h * factor) * scale
    return int(max(multiple, min(side, MAX_LONG_SIDE) // multiple * multiple))


def body_brightness(crops: np.ndarray) -> np.ndarray:
    """(N,) the grey level of each (N, H, W, 3) crop's body: the middle value of every
    third pixel each way, its channels averaged (most of a face is body)."""
    crops = np.asarray(crops)
    if len(crops) == 0:
        return np.zeros(0)
    sample = crops[:, 1::3, 1::3].reshape(len(crops), -1, 3)
    return np.median(sample, axis=1).mean(axis=1)


def doubtful_new_finds(crops: np.ndarray, scores: np.ndarray, new: np.ndarray) -> np.ndarray:
    """(N,) True for each find the stretched passes added (`new`) that is no tile: surer of
    itself than NEW_FIND_SCORE (detector score x best class probability, `scores`) but
    for a body at most DARK_SHARE as bright as the other finds' (`crops`, all N): the
    stand's embossed logo, stretched, reads as tiles; a tile's face is its bright part."""
    new = np.asarray(new, bool)
    doubtful = new & (np.asarray(scores) < NEW_FIND_SCORE)
    if new.all() or not new.any():
        return doubtful
    brightness = body_brightness(crops)
    reference = float(np.median(brightness[~new]))
    return doubtful | (new & (brightness < DARK_SHARE * reference))

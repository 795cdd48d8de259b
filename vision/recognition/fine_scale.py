"""A photo whose tiles are small for the detector, detected again at a finer scale.

The detector sees every photo shrunk to its input's `long_side` (512 px). Its training
scenes show tiles 25-56 px long there, and the real photos it was measured on 27-173 px
(median 62-74). A phone photo of a whole large table, or one taken from further off, shows
the tiles at a small share of the frame: a 12 MP photo's tiles may be 80 px long and only
10 px in the detector's input, where it misses many. The tiles the first reading keeps
say how small they are. Where their median long side in the input is under `SMALL` px and
the photo has more pixels than the input, the detector runs again on a longer input side,
at most `MAX_LONG_SIDE` and never more than the photo's own, so that its tiles are
about `TARGET` px long. The two readings are merged tile by tile
(`vision.recognition.plane_view.merge_readings`).

Measured (`bench.eval_big_photos`): the real `valid/` photos k x k side by side in one photo,
the tiles at 1/k of their share of the frame, found / read right without -> with the finer
pass: 3x3 (3000x2250) 77.25 / 71.16 % -> 99.74 / 99.21 %, 4x4 (4000x3000, a 12 MP photo)
54.17 / 50.76 % -> 97.73 / 93.94 %, at 2.4x and 4.0x the time of the one pass.
"""

from __future__ import annotations

import numpy as np

from vision.recognition.geometry import _edges

# Under this median long side (px in the detector's input) a photo's tiles are read again
# finer. The real photos' smallest median is 27 px (valid/ 32, train/ 27).
SMALL = 24.0
TARGET = 36.0  # px: the tiles' long side in the finer input
MAX_LONG_SIDE = 2048  # the finer input's long side at most (the detector's cost grows 16x)
MIN_GAIN = 1.25  # a finer input less than this much longer is not worth a second pass


def tile_lengths(corners: np.ndarray) -> np.ndarray:
    """Each tile's long side (N,), px, from its corners (N, 4, 2)."""
    right, down = _edges(np.asarray(corners, np.float64).reshape(-1, 4, 2))
    return np.maximum(np.linalg.norm(right, axis=1), np.linalg.norm(down, axis=1))


def finer_long_side(long_side: int, multiple: int, tiles: np.ndarray,
                    photo_long_side: int) -> int | None:
    """The detector input's long side at which the tiles at `tiles` (corners in the photo's
    pixels; its long side `photo_long_side`) are about TARGET px long, or None where they
    are long enough at `long_side` already, or the photo has no pixels to gain."""
    if len(tiles) == 0:
        return None
    length = float(np.median(tile_lengths(tiles)))
    in_input = length * long_side / photo_long_side
    if not np.isfinite(in_input) or in_input <= 0 or in_input >= SMALL:
        return None
    wanted = long_side * TARGET / in_input
    finer = min(wanted, MAX_LONG_SIDE, photo_long_side)
    if finer < MIN_GAIN * long_side:
        return None
    return int(finer // multiple * multiple)

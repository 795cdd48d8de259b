"""Is this camera frame the table the models read last? A cheap check before the models
run (`frames.FrameHub`): a still table then costs a small decode, not a read.

How the measure and its threshold were chosen: docs/decisions/still-frames.md.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.recognition.decode import Photo

# A frame whose 64x48 grey picture differs from the last frame the models read by less
# than this (the largest difference of one pixel, in grey levels, after a 3x3 blur and
# with the brightness evened out) is the same table: its tiles are the last read ones, and
# the models do not run. `python -m bench.still_bench` on 40 real photos: camera noise
# and flicker at most 1.2, one tile moved at least 15.4 (docs/decisions/still-frames.md).
STILL_SIZE = (64, 48)
STILL_MAX_DIFF = 4.0


def still_pushes(tracker) -> int:
    """Still frames the tracker is still given after a read: twice the frames it votes over,
    so a change or a tile leaving (`leave_after` frames) is decided as before."""
    return 2 * int(getattr(tracker, "window", 8))


def still_picture(photo: Photo) -> np.ndarray:
    """The frame as a 64x48 grey picture, blurred a little: from libjpeg's 1/8 decode of a
    JPEG (about a millisecond for 1000x750), so a still frame costs next to nothing."""
    small = photo.reduced(8)
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    grey = cv2.resize(grey, STILL_SIZE, interpolation=cv2.INTER_AREA)
    return cv2.blur(grey.astype(np.float32), (3, 3))


def still_difference(picture: np.ndarray, reference: np.ndarray) -> float:
    """The largest difference of one pixel between two still pictures, `picture` brought
    to the reference's brightness first: a phone's exposure and a lamp's flicker change
    every pixel a little (2 % is 5 grey levels on a cream tile), a moved tile a few a lot."""
    gain = float(reference.mean()) / max(1e-6, float(picture.mean()))
    return float(np.abs(picture * gain - reference).max())


def same_table(picture: np.ndarray, reference: np.ndarray,
               threshold: float = STILL_MAX_DIFF) -> bool:
    """Whether two still pictures differ only by camera noise (see STILL_MAX_DIFF)."""
    return picture.shape == reference.shape and \
        still_difference(picture, reference) < threshold

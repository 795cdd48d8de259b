"""The phone page's send rule (`app/static/js/send_rule.js`) in Python, for the benches'
phones: the same constants, the same picture, the same decisions.

The page looks at its video every `WATCH_MS` on a 64x48 grey picture (3x3 blurred), and
sends 2 frames a second while the view is still; once the view moved (a pixel changed by
`MOVE_DIFF` grey levels or more, brightness evened out) and then settled, it sends a burst:
a frame at once, then one every `BURST_MS` for `BURST_FOR_MS`. The rule never knows when
the table changed: it sees only its own pictures. `tests/test_page_send_rule.py` runs both
on the same inputs in Chromium and here and checks they send alike.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

WATCH_MS = 100
STILL_MS = 500
BURST_MS = 150
BURST_FOR_MS = 1500
PICTURE_SIZE = (64, 48)
MOVE_DIFF = 6.0


def grey_picture(image: np.ndarray) -> np.ndarray:
    """The 64x48 grey picture of a BGR (or grey) image, blurred 3x3, as float32."""
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    small = cv2.resize(grey.astype(np.float32), PICTURE_SIZE, interpolation=cv2.INTER_AREA)
    return cv2.blur(small, (3, 3), borderType=cv2.BORDER_REPLICATE)


def picture_difference(picture: np.ndarray, reference: np.ndarray | None) -> float:
    """The largest difference of one pixel, `picture` brought to the reference's
    brightness first (as `pictureDifference` in send_rule.js)."""
    if reference is None or picture.shape != reference.shape:
        return math.inf
    gain = float(reference.sum()) / max(1e-6, float(picture.sum()))
    return float(np.abs(picture * gain - reference).max())


class SendRule:
    """`look(now_ms, diff)`: whether to send a frame now (see the module notes)."""

    def __init__(self, still_ms: float = STILL_MS, burst_ms: float = BURST_MS,
                 burst_for_ms: float = BURST_FOR_MS, move_diff: float = MOVE_DIFF) -> None:
        self.still_ms = still_ms
        self.burst_ms = burst_ms
        self.burst_for_ms = burst_for_ms
        self.move_diff = move_diff
        self.moving = False
        self.burst_until = -math.inf
        self.next_at = -math.inf

    def look(self, now: float, diff: float) -> bool:
        if diff >= self.move_diff:
            self.moving = True
        elif self.moving:
            self.moving = False
            self.burst_until = now + self.burst_for_ms
            self.next_at = now
        if now < self.next_at:
            return False
        step = self.burst_ms if now < self.burst_until else self.still_ms
        self.next_at = max(self.next_at + step, now + step - WATCH_MS / 2)
        return True


class SteadyRule:
    """The page before the burst: a frame every `1000 / fps` ms, whatever the view does."""

    def __init__(self, fps: float = 2.0) -> None:
        self.step = 1000.0 / fps
        self.next_at = -math.inf

    def look(self, now: float, diff: float) -> bool:
        if now < self.next_at:
            return False
        self.next_at = max(self.next_at + self.step, now + self.step - WATCH_MS / 2)
        return True

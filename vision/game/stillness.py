"""What the small picture of a frame says before any tile is looked at: how the camera
moved, how much of the scene moved, and whether the frame is blurred.

`SceneMeasure.measure` runs once a frame on the small picture the live tracker gets
(~160 px wide, grey or colour):

- the camera's move since the previous picture (`vision.game.camera_motion.CameraMoves`);
- the share of the picture that changed once that move is undone (a hand moving over the
  table; the strip a move uncovers is new, not movement); without a move estimate the
  shake is undone as a shift (phase correlation);
- the picture's sharpness (variance of its Laplacian): a frame far less sharp than the
  recent still frames (`BLURRED_BELOW`) is blurred, and misses tiles.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from vision.game.camera_motion import CameraMove, CameraMoves

MOTION_DIFF = 18.0  # grey levels (of 255, brightness-normalised) a pixel must change by
BLURRED_BELOW = 0.5  # sharpness under this share of the still frames' is a blurred frame


@dataclass(frozen=True)
class SceneReading:
    move: CameraMove | None  # the camera's move since the previous picture (small pixels)
    motion: float | None  # share of the picture that changed, the camera's move undone
    moved: bool  # that share is movement (more than `motion_max`)
    sharpness: float | None
    blurred: bool


def _grey(picture: np.ndarray) -> np.ndarray:
    import cv2

    g = np.asarray(picture)
    return cv2.cvtColor(g, cv2.COLOR_BGR2GRAY) if g.ndim == 3 else g


class SceneMeasure:
    """One camera's frames, measured one after the other (see the module notes)."""

    def __init__(self, motion_max: float, window: int) -> None:
        self.motion_max = float(motion_max)
        self.window = int(window)
        self.reset()

    def reset(self) -> None:
        self._grey: np.ndarray | None = None
        self._moves = CameraMoves()
        self._sharp: deque[float] = deque(maxlen=self.window)
        self._last: tuple[np.ndarray, float] | None = None  # (last picture, its sharpness)

    def still(self, reading: SceneReading) -> None:
        """The frame measured last turned out still: its sharpness is the measure now."""
        if reading.sharpness is not None:
            self._sharp.append(reading.sharpness)

    def measure(self, picture: np.ndarray | None) -> SceneReading:
        if picture is None:
            self.reset()
            return SceneReading(None, None, False, None, False)
        if self._last is not None and np.array_equal(self._last[0], picture):
            # The very picture measured last (the server gives a frame that matched the
            # last read one its picture): nothing moved, and it is as sharp as it was.
            sharpness = self._last[1]
            return SceneReading(None, 0.0, False, sharpness, self._blurred(sharpness))
        move = self._moves.next(picture)
        motion = self._motion(picture, move)
        sharpness, blurred = self._sharpness(picture)
        self._last = (np.array(picture, copy=True), sharpness)
        return SceneReading(move, motion, motion is not None and motion > self.motion_max,
                            sharpness, blurred)

    def _sharpness(self, picture: np.ndarray) -> tuple[float, bool]:
        import cv2

        sharpness = float(cv2.Laplacian(_grey(picture).astype(np.float32), cv2.CV_32F).var())
        return sharpness, self._blurred(sharpness)

    def _blurred(self, sharpness: float) -> bool:
        if len(self._sharp) < 2:
            return False
        return sharpness < BLURRED_BELOW * float(np.median(self._sharp))

    def _motion(self, picture: np.ndarray, move: CameraMove | None) -> float | None:
        import cv2

        g = cv2.GaussianBlur(_grey(picture).astype(np.float32), (0, 0), 1.0)
        g = g * (128.0 / max(float(g.mean()), 1.0))  # auto-exposure is no movement
        prev, self._grey = self._grey, g
        if prev is None or prev.shape != g.shape:
            return None
        size = (g.shape[1], g.shape[0])
        if move is not None:
            m = move.matrix.astype(np.float32)
        else:
            # No move estimate: the camera's shake as a shift, by phase correlation.
            (dx, dy), _response = cv2.phaseCorrelate(prev, g)
            if abs(dx) > g.shape[1] / 8 or abs(dy) > g.shape[0] / 8:
                dx = dy = 0.0
            m = np.float32([[1, 0, dx], [0, 1, dy]])
        moved_prev = cv2.warpAffine(prev, m, size, borderMode=cv2.BORDER_REPLICATE)
        # Only what both pictures show: the strip a move uncovers is new, not movement.
        seen = cv2.warpAffine(np.ones_like(prev), m, size, borderMode=cv2.BORDER_CONSTANT)
        seen = cv2.erode((seen > 0.5).astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
        if seen.sum() < seen.size // 4:
            seen[:] = True
        # Edges left after an imperfect shift give thin lines; a hand gives a blob.
        changed = (np.abs(g - moved_prev) > MOTION_DIFF).astype(np.uint8)
        changed = cv2.erode(changed, np.ones((3, 3), np.uint8))
        return float(changed[seen].mean())

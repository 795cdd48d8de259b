"""The camera's own move between two frames, from their small grey pictures.

A phone on a stand gets bumped: the whole view turns and shifts. The tiles did not move,
so the tracker must carry every tile's place into the new view on the very frame the view
moved (a bump is not a change of the table). The move is a similarity transform (turn,
shift, a little zoom) estimated on the downscaled grey frames the tracker already gets:

1. ORB corners matched across the two pictures, and RANSAC keeps the ones that move
   alike: a hand over part of the table moves otherwise and is left out.
2. ECC (`cv2.findTransformECC`, Euclidean) refines that estimate on all the pixels
   (sub-pixel), started from it; when ORB finds too little (a plain, dark picture) ECC alone
   from no move is tried, and kept only when the two pictures then agree well.

Both run on pictures ~160 px wide: a few milliseconds (`bench/eval_tracker.py --motion`
measures it against reading the frame).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FEATURES = 250  # ORB corners per picture: plenty in 160 px, and matched in ~2 ms
MIN_INLIERS = 8  # ORB matches moving alike needed to believe a move
RANSAC_PX = 1.5  # in small-picture pixels
ECC_MIN_CC = 0.85  # correlation ECC must reach when it is the only estimate
MAX_TURN_DEG = 20.0  # more is no bump: a camera set up anew (the tracker starts afresh)
STILL_PX = 0.15  # a move smaller than this (small-picture px, anywhere in it) is none


@dataclass(frozen=True)
class CameraMove:
    """`matrix`: 2x3, previous picture's pixels -> this picture's pixels."""

    matrix: np.ndarray
    inliers: int
    method: str  # "orb+ecc", "orb", "ecc" or "none"

    @property
    def turn_deg(self) -> float:
        return float(np.degrees(np.arctan2(self.matrix[1, 0], self.matrix[0, 0])))

    @property
    def scale(self) -> float:
        return float(np.sqrt(abs(np.linalg.det(self.matrix[:, :2]))))

    def is_none(self, shape: tuple[int, int]) -> bool:
        """Whether no point of a picture of `shape` (h, w) moves by STILL_PX or more."""
        return largest_step(self.matrix, shape) < STILL_PX

    def scaled(self, sx: float, sy: float) -> np.ndarray:
        """The same move in pixels `sx`, `sy` times larger (the full frame's)."""
        s = np.diag([sx, sy])
        s_inv = np.diag([1 / sx, 1 / sy])
        m = self.matrix
        out = np.zeros((2, 3))
        out[:, :2] = s @ m[:, :2] @ s_inv
        out[:, 2] = s @ m[:, 2]
        return out


IDENTITY = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])


def largest_step(m: np.ndarray, shape: tuple[int, int]) -> float:
    h, w = shape[:2]
    pts = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    return float(np.abs(pts @ m[:, :2].T + m[:, 2] - pts).max())


def _grey(picture: np.ndarray) -> np.ndarray:
    import cv2

    g = np.asarray(picture)
    if g.ndim == 3:
        g = cv2.cvtColor(g, cv2.COLOR_BGR2GRAY)
    return g if g.dtype == np.uint8 else np.clip(g, 0, 255).astype(np.uint8)


_ORB = None


def _orb():
    import cv2

    global _ORB
    if _ORB is None:
        # Small patches: a tile is ~10 px tall in a 160 px wide picture.
        _ORB = cv2.ORB_create(FEATURES, scaleFactor=1.2, nlevels=3, edgeThreshold=15, patchSize=15,
                              fastThreshold=10)
    return _ORB


def _features(grey: np.ndarray):
    return _orb().detectAndCompute(grey, None)


def _by_orb(features_a, features_b) -> tuple[np.ndarray | None, int]:
    import cv2

    (kp_a, des_a), (kp_b, des_b) = features_a, features_b
    if des_a is None or des_b is None or len(kp_a) < MIN_INLIERS or len(kp_b) < MIN_INLIERS:
        return None, 0
    matches = cv2.BFMatcher(cv2.NORM_HAMMING, crossCheck=True).match(des_a, des_b)
    if len(matches) < MIN_INLIERS:
        return None, 0
    src = np.float32([kp_a[m.queryIdx].pt for m in matches])
    dst = np.float32([kp_b[m.trainIdx].pt for m in matches])
    m, inliers = cv2.estimateAffinePartial2D(src, dst, method=cv2.RANSAC,
                                             ransacReprojThreshold=RANSAC_PX)
    n = int(inliers.sum()) if inliers is not None else 0
    if m is None or n < MIN_INLIERS:
        return None, n
    return m.astype(np.float64), n


def _by_ecc(prev: np.ndarray, cur: np.ndarray, start: np.ndarray) -> tuple[np.ndarray | None,
                                                                             float]:
    import cv2

    # ECC finds the warp taking the template (`cur`) to the input (`prev`) coordinates;
    # its inverse is the move from `prev` to `cur`.
    warp = cv2.invertAffineTransform(start).astype(np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 50, 1e-4)
    try:
        cc, warp = cv2.findTransformECC(cur.astype(np.float32), prev.astype(np.float32), warp,
                                        cv2.MOTION_EUCLIDEAN, criteria, None, 5)
    except cv2.error:
        return None, 0.0
    return cv2.invertAffineTransform(warp).astype(np.float64), float(cc)


def estimate_move(prev: np.ndarray, cur: np.ndarray) -> CameraMove | None:
    """The camera's move from picture `prev` to picture `cur` (same size, grey or BGR);
    None when the two pictures do not give one (too different, or no picture)."""
    if prev is None or cur is None or np.shape(prev)[:2] != np.shape(cur)[:2]:
        return None
    a, b = _grey(prev), _grey(cur)
    return _estimate(a, b, _features(a), _features(b))


class CameraMoves:
    """The camera's move frame after frame (`next`); each picture's features are found
    once, not again as the next frame's previous one."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._grey: np.ndarray | None = None
        self._features = None

    def next(self, picture: np.ndarray | None) -> CameraMove | None:
        """The move from the previous picture to this one (None: no previous picture of
        this size, or no move found)."""
        if picture is None:
            self.reset()
            return None
        grey = _grey(picture)
        features = _features(grey)
        prev, prev_features = self._grey, self._features
        self._grey, self._features = grey, features
        if prev is None or prev.shape != grey.shape:
            return None
        return _estimate(prev, grey, prev_features, features)


def _estimate(a: np.ndarray, b: np.ndarray, features_a, features_b) -> CameraMove | None:
    m, inliers = _by_orb(features_a, features_b)
    if m is not None:
        refined, _cc = _by_ecc(a, b, m)
        # ECC may run off when a hand covers much of the picture: it refines, never moves
        # the estimate by more than RANSAC let points stray.
        if refined is not None and largest_step(refined - m + IDENTITY, a.shape) <= 2 * RANSAC_PX:
            move = CameraMove(refined, inliers, "orb+ecc")
        else:
            move = CameraMove(m, inliers, "orb")
    else:
        refined, cc = _by_ecc(a, b, IDENTITY)
        if refined is None or cc < ECC_MIN_CC:
            return None
        move = CameraMove(refined, 0, "ecc")
    if abs(move.turn_deg) > MAX_TURN_DEG or not 0.8 < move.scale < 1.25:
        return None
    return move

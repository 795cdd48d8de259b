"""A strongly tilted photo, detected again as seen from above.

A phone held low over the table (a player photographing from their seat) sees the far tiles
small and squashed and the near ones sheared into trapezoids. The detector, which finds
upright rectangles of about one size best, then misses tiles, and its rectangles cut the
corners of the ones it finds, so their crops read worse. The tiles the first reading keeps
give the table plane (`vision.recognition.geometry.TablePlane`: the homography that makes every
tile the same upright rectangle). The photo warped onto that plane shows the table as if from above,
every tile the same size; the detector runs again on that view, and its boxes, mapped back,
are the tiles' true outlines in the photo (trapezoids), which crop them upright.

Measured on the real `valid/` photos warped as a camera tilted further would see them (the
far edge 0.3-0.6 of the near one's width; `bench.eval_plane_view`): tiles found and read
right go up at every tilt; of the photos as taken (mostly from above) one in 34 gets the
view, and reads the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.recognition.detections import TileDetections
from vision.recognition.fine_scale import TARGET
from vision.recognition.geometry import MIN_TILES, TablePlane, _apply, _areas, _heights

# The view is made when the tiles' sizes say the far ones are this much smaller than the
# near ones (the plane's `tilt`). From above, the real valid/ photos' tiles give 1.0-1.6.
MIN_TILT = 1.5
# A cheap first look at the tilt (a plain least-squares fit of the sizes, no robust
# weights) skips the plane fit below this: most photos are taken from above.
QUICK_TILT = 1.3
TILE_HEIGHT = 56.0  # a tile's height in the view, px: as in a 1000x750 photo from above
MAX_SIDE = 1400  # the view's longest side, px (the detector shrinks it to its input)
MARGIN = 3.0  # tile heights of table kept around the tiles found, where more may lie
FILL = (128, 128, 128)  # outside the photo


@dataclass(frozen=True)
class PlaneView:
    """The photo warped onto the table plane: `image`, and `to_photo` (3x3) mapping its
    pixels back to the photo's; `tilt` of the plane it was made from."""

    image: np.ndarray
    to_photo: np.ndarray
    tilt: float

    def quads_in_photo(self, quads: np.ndarray) -> np.ndarray:
        return _apply(self.to_photo, quads)

    def detector_side(self, long_side: int, multiple: int = 32) -> int:
        """The detector input's long side for this view: its tiles (TILE_HEIGHT px) as
        long there as the finer pass makes small tiles (`vision.recognition.fine_scale.TARGET`); a
        large view (a table of many tiles) is then not shrunk to tiles too small to find."""
        side = max(self.image.shape[:2])
        return max(long_side, int(side * TARGET / TILE_HEIGHT) // multiple * multiple)


def quick_tilt(quads: np.ndarray) -> float:
    """The plane's `tilt` (`vision.recognition.geometry`) roughly: the largest over the smallest
    cube root of a tile's area that a plain linear fit over the boxes' centres predicts
    (a perspective makes it linear); 1.0 when it cannot tell."""
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    if len(q) < MIN_TILES:
        return 1.0
    a = np.ones((len(q), 3))
    a[:, 1:] = q.mean(axis=1)
    try:
        fit = np.linalg.solve(a.T @ a, a.T @ np.cbrt(_areas(q)))
    except np.linalg.LinAlgError:
        return 1.0  # the tiles lie on one line: no plane to see
    size = a @ fit
    if size.min() <= 0:
        return float("inf")  # sizes fall to nothing inside the photo: strongly tilted
    return float(size.max() / size.min())


def plane_view(image: np.ndarray, quads: np.ndarray, *, min_tilt: float = MIN_TILT
               ) -> PlaneView | None:
    """The view from above of `image` made from the tiles at `quads` (N, 4, 2, in its
    pixels), or None when they do not show a tilt of at least `min_tilt`."""
    quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    if len(quads) < MIN_TILES or quick_tilt(quads) < QUICK_TILT:
        return None
    # A detector's boxes are rectangles in the photo whatever the view, so they need not
    # look more alike on the plane for the plane to be right: the tilt decides here.
    plane = TablePlane.from_tiles(quads, min_tilt=min_tilt, check_shape=False)
    if plane.tilt < min_tilt or not plane.tilted:
        return None
    to_plane = plane.matrix
    on_plane = _apply(to_plane, quads)
    tile = float(np.median(_heights(on_plane)))
    if not np.isfinite(tile) or tile <= 0:
        return None
    h, w = image.shape[:2]
    lo = on_plane.reshape(-1, 2).min(axis=0) - MARGIN * tile
    hi = on_plane.reshape(-1, 2).max(axis=0) + MARGIN * tile
    # Only the part of the plane the photo shows, where the photo's outline lies on the
    # plane: a photo taken low shows the horizon (the far wall), and its top corners then
    # lie beyond it, mapped to nowhere on the plane; the tiles' own bounds do there.
    corners = np.float64([[0, 0, 1], [w, 0, 1], [w, h, 1], [0, h, 1]])
    if np.all(corners @ to_plane[2] > 0):
        outline = _apply(to_plane, corners[:, :2])
        lo, hi = np.maximum(lo, outline.min(axis=0)), np.minimum(hi, outline.max(axis=0))
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))) or np.any(hi <= lo):
        return None
    scale = TILE_HEIGHT / tile
    if (hi - lo).max() * scale > MAX_SIDE:
        scale = MAX_SIDE / (hi - lo).max()
    to_view = np.array([[scale, 0, -lo[0] * scale], [0, scale, -lo[1] * scale], [0, 0, 1]])
    to_view = to_view @ to_plane
    try:
        to_photo = np.linalg.inv(to_view)
    except np.linalg.LinAlgError:
        return None  # a degenerate fit: no view
    size = tuple(max(1, int(np.ceil(v))) for v in (hi - lo) * scale)
    view = cv2.warpPerspective(image, to_view, size, flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=FILL)
    return PlaneView(view, to_photo, float(plane.tilt))


def merge_readings(first: TileDetections, second: TileDetections) -> TileDetections:
    """The tiles read in two passes over one photo (corners in its pixels), each tile once.

    A tile read in both (either's centre inside the other's outline) is taken from the
    pass that is surer of it (detector score x best class probability): on a strongly
    tilted photo mostly the view from above, but a tile the view shows badly keeps its
    first reading. Down the scores of both passes, a reading is kept unless one of the
    other pass's, already kept, is the same tile (each pass's own duplicates were
    suppressed by the detector)."""
    if len(second) == 0:
        return first
    if len(first) == 0:
        return second
    same = same_tiles(second.corners, first.corners)  # (second, first)
    kept_second = np.zeros(len(second), bool)
    kept_first = np.zeros(len(first), bool)
    order = np.argsort(-np.concatenate([second.tile_scores, first.tile_scores]), kind="stable")
    for k in order.tolist():
        if k < len(second):
            kept_second[k] = not (same[k] & kept_first).any()
        else:
            i = k - len(second)
            kept_first[i] = not (same[:, i] & kept_second).any()
    return TileDetections.concat([second[kept_second], first[kept_first]])


def same_tiles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(A, B) bool: outline a (corners (A, 4, 2)) and outline b are one tile, as every
    pass's readings are paired: either's centre inside the other's outline."""
    a, b = np.asarray(a), np.asarray(b)
    return points_in_quads(a.mean(axis=1), b) | points_in_quads(b.mean(axis=1), a).T


def points_in_quads(points: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(P, Q) bool: point p inside convex quad q (either winding)."""
    p = np.asarray(points, np.float64)[:, None, None, :]  # (P, 1, 1, 2)
    a = np.asarray(quads, np.float64)[None]  # (1, Q, 4, 2)
    b = np.roll(a, -1, axis=2)
    cross = ((b[..., 0] - a[..., 0]) * (p[..., 1] - a[..., 1])
             - (b[..., 1] - a[..., 1]) * (p[..., 0] - a[..., 0]))  # (P, Q, 4)
    return (cross >= 0).all(axis=2) | (cross <= 0).all(axis=2)

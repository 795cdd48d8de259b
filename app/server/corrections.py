"""A player's corrections of a reading ("this tile is R9"): held for the place they were
made at, in the view (one camera, one photo) they were made in, and carried to another view
only by the tiles around them (`apply_corrections`)."""

from __future__ import annotations

import numpy as np

from vision.recognition.detections import TileDetections

CORRECTION_REACH = 0.6  # a correction holds for tiles within this many tile heights
# A correction made in one view (a camera, a photo) is carried to another only when the
# tiles around it are found there again: CARRY_NEIGHBOURS of those within CARRY_NEAR tile
# heights of it must move like the rest (inliers of the alignment, CARRY_INLIER heights).
CARRY_NEAR = 3.0
CARRY_NEIGHBOURS = 2
CARRY_INLIER = 0.4
CORRECTIONS_DROPPED = ("corrections made in another view of the table (the other phone's "
                       "camera, or a photo from elsewhere) no longer apply: correct again "
                       "if needed")



def tile_height(d: TileDetections) -> float:
    if not len(d):
        return 1.0
    return float(np.median(np.linalg.norm(d.corners[:, 3] - d.corners[:, 0], axis=1)))


def align_views(around: list, d: TileDetections) -> tuple[np.ndarray, np.ndarray] | None:
    """The similarity transform from the view a correction was made in to `d`'s view, from
    the tiles read alike in both (RANSAC, as the tracker and `vision.game.turn` align frames),
    with the inlier mask over `around`; None when the tiles do not give one."""
    import cv2

    if len(around) < 3 or len(d) < 3:
        return None
    src, dst, which = [], [], []
    codes = d.codes
    for k, (x, y, code) in enumerate(around):
        for j, other in enumerate(codes):
            if other == code:  # every copy of the tile may be the one: RANSAC picks
                src.append((x, y))
                dst.append(d.centers[j])
                which.append(k)
    if len(src) < 3:
        return None
    m, inliers = cv2.estimateAffinePartial2D(
        np.array(src, np.float32), np.array(dst, np.float32), method=cv2.RANSAC,
        ransacReprojThreshold=CARRY_INLIER * tile_height(d))
    if m is None or inliers is None:
        return None
    scale = float(np.sqrt(abs(np.linalg.det(m[:, :2]))))
    if not 0.5 < scale < 2.0:
        return None
    matched = np.zeros(len(around), bool)
    matched[np.array(which)[inliers.ravel() > 0]] = True
    if int(matched.sum()) < 3:
        return None
    return m.astype(np.float64), matched


def carry_correction(c: dict, d: TileDetections, view: str | None) -> dict | None:
    """The correction `c` in `d`'s view: as it is when made in that view, moved there when
    the tiles around it are found again (at least `CARRY_NEIGHBOURS` of those within
    `CARRY_NEAR` tile heights, plus 3 in all, moving alike), None when it cannot be carried
    over reliably. A place in one camera's pixels is not that place in another camera's
    (or another hand-held photo's), so a correction is never applied by pixel across views."""
    if c.get("view") == view:
        return c
    around = c.get("around") or []
    found = align_views(around, d)
    if found is None:
        return None
    m, matched = found
    size = float(c.get("size") or 1.0)
    near = [i for i, (x, y, _) in enumerate(around)
            if np.hypot(x - c["x"], y - c["y"]) <= CARRY_NEAR * size]
    if not near or sum(bool(matched[i]) for i in near) < min(CARRY_NEIGHBOURS, len(near)):
        return None  # no tile around it was found again: where it lies now is a guess
    x, y = (float(v) for v in m[:, :2] @ np.array([c["x"], c["y"]]) + m[:, 2])
    return {**c, "x": x, "y": y, "view": view, "size": tile_height(d),
            "around": tiles_around(d, (x, y))}


def tiles_around(d: TileDetections, point: tuple[float, float]) -> list:
    """The tiles of a reading but the one at `point`: what carries a correction made on it
    over to another view of the table."""
    reach = CORRECTION_REACH * tile_height(d)
    return [[round(float(x), 1), round(float(y), 1), code]
            for (x, y), code in zip(d.centers, d.codes, strict=True)
            if np.hypot(x - point[0], y - point[1]) > reach]


def apply_corrections(d: TileDetections, corrections: list[dict], view: str | None = None
                      ) -> tuple[TileDetections, list[dict], int]:
    """Tiles lying where a player corrected a reading take the corrected code, surely.

    `view` names the view `d` was read in (one camera, or one photo). Returns the readings,
    the corrections as they stand in this view (carried over from another view where the
    tiles around them say where they lie now), and how many could not be carried over
    (dropped: the player corrects again if needed)."""
    if not corrections:
        return d, corrections, 0
    kept = []
    for c in corrections:
        carried = carry_correction(c, d, view) if len(d) else c
        if carried is not None:
            kept.append(carried)
    dropped = len(corrections) - len(kept)
    if not len(d):
        return d, kept, dropped
    labels = tuple(d.labels)
    probs, ids, uncertain = d.class_probs.copy(), d.class_ids.copy(), d.uncertain.copy()
    centres, reach = d.centers, CORRECTION_REACH * tile_height(d)
    changed = False
    for c in kept:
        if c["code"] not in labels:
            continue
        dist = np.linalg.norm(centres - np.array([c["x"], c["y"]], np.float32), axis=1)
        i = int(np.argmin(dist))
        if dist[i] <= reach:
            k = labels.index(c["code"])
            probs[i] = 0.0
            probs[i, k] = 1.0
            ids[i] = k
            uncertain[i] = False
            changed = True
    if not changed:
        return d, kept, dropped
    return (TileDetections(d.corners, d.detector_scores, probs, ids, labels, uncertain,
                           None if d.flip_probs is None else d.flip_probs.copy()),
            kept, dropped)

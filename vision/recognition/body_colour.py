"""Finds whose body colour is unlike the photo's other finds' are no tiles.

A smiley sticker or a wood knot on the table, the letters of a box's logo: the detector may
take them for tiles, but their body is not the colour of the tiles' bodies in that photo
(`vision.recognition.pipeline` drops them).
"""

from __future__ import annotations

import numpy as np

# A find whose body colour is unlike the photo's other finds' is no tile: a smiley sticker or
# a wood knot on the table, the letters of a box's logo (`body_unlikeness` above
# BODY_UNLIKE). Chosen on training data only: true tiles measure at most 0.10 on real
# train/ (1,704) and 0.33 on rendered scenes of training editions (2,837; renderer seeds
# 300,000-300,149), false finds there 0.01-1.12, 7 of 42 above 0.5. The finds' colour
# stands for the tiles' only where they are most of the finds: at least BODY_MIN_FINDS,
# and no rule when more than BODY_MAX_SHARE of them would go. The rule's first version took
# one colour for the whole photo (from 5 finds): the real valid/ photos lit by a warm lamp
# on one side and daylight on the other lost 3 true tiles at `bench.eval_light`'s stronger
# tint (13 at a stronger one still). As a plane, from 8 finds: none.
BODY_UNLIKE = 0.5
BODY_MIN_FINDS = 8
BODY_MAX_SHARE = 0.25


def body_unlikeness(crops: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """(N,) how far the body colour of each (N, H, W, 3) tile crop, its tile at `centres`
    (N, 2), is from the other finds': the spread of its channels' log ratios to the body
    the photo's light makes of the finds at that place."""
    n = len(crops)
    # The body is most of a face: the middle value of every third pixel each way (a ninth
    # of the cost of all of them, the same to a few grey levels).
    sample = np.asarray(crops)[:, 1::3, 1::3].reshape(n, -1, 3)
    middle = sample.shape[1] // 2
    log_body = np.log(np.partition(sample, middle, axis=1)[:, middle].astype(np.float64) + 1.0)
    # A shadow scales every channel alike: its colour without its brightness stays.
    colour = log_body - log_body.mean(axis=1, keepdims=True)
    # A lamp on one side of the table and daylight on the other tint the bodies by place:
    # the finds' colour is fitted as a plane over the photo, then twice more on the finds
    # that fit it.
    centres = np.asarray(centres, np.float64).reshape(n, 2)
    place = (centres - centres.mean(axis=0)) / max(float(np.ptp(centres, axis=0).max()), 1.0)
    design = np.column_stack([np.ones(n), place])
    fits = np.ones(n, bool)
    for _round in range(3):
        reference = design @ np.linalg.lstsq(design[fits], colour[fits], rcond=None)[0]
        off = colour - reference
        spread = off.max(axis=1) - off.min(axis=1)
        fits = spread <= BODY_UNLIKE
        if fits.sum() < BODY_MIN_FINDS:
            break
    return spread


def unlike_the_other_finds(crops: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """(N,) True for each (N, H, W, 3) tile crop (its tile at `centres`) whose body colour
    is unlike the other finds' (`body_unlikeness` over BODY_UNLIKE)."""
    n = len(crops)
    if n < BODY_MIN_FINDS:
        return np.zeros(n, bool)
    unlike = body_unlikeness(crops, centres) > BODY_UNLIKE
    if unlike.sum() > BODY_MAX_SHARE * n:
        return np.zeros(n, bool)
    return unlike


# A find whose body is under DARK_SHARE as bright as the surest finds' bodies, and whose
# box is under SMALL_SHARE as tall as theirs, is no tile: the letters of a stand's
# embossed logo seen close (white 770,039: eight letters beside two tiles; the colour rule
# above needs the tiles to be most finds). The same share the stretched passes drop the
# logo's new finds at (`squashed_view.DARK_SHARE`: the black beam 0.12-0.27 of the tiles,
# tiles 0.50 and more); small as well, since a tile in a deep shade is not also half as
# tall as its neighbours. The surest: the finds at or above the SUREST quantile of
# detector score x best class probability. docs/decisions/dark-small-finds.md.
DARK_SHARE = 0.4
SMALL_SHARE = 0.5
SUREST = 0.75


def face_brightness(image_bgr: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(N,) the median grey of each tile's face in `image_bgr`, at a 5 x 5 grid of points
    over the middle 70 % of its box `quads` (N, 4, 2, the image's pixels)."""
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    if not len(q):
        return np.zeros(0)
    t = np.linspace(0.15, 0.85, 5)
    u, v = [a.ravel() for a in np.meshgrid(t, t)]  # across, down
    top = q[:, None, 0] + u[None, :, None] * (q[:, None, 1] - q[:, None, 0])
    foot = q[:, None, 3] + u[None, :, None] * (q[:, None, 2] - q[:, None, 3])
    points = np.round(top + v[None, :, None] * (foot - top)).astype(int)
    h, w = image_bgr.shape[:2]
    grey = image_bgr[points[..., 1].clip(0, h - 1), points[..., 0].clip(0, w - 1)].mean(axis=-1)
    return np.median(grey, axis=1)


def dark_small_finds(brightness: np.ndarray, heights: np.ndarray,
                     sure: np.ndarray) -> np.ndarray:
    """(N,) True for each find (its face's `brightness`, box height `heights`, sureness
    `sure`) darker than `DARK_SHARE` and shorter than `SMALL_SHARE` of the surest finds'."""
    n = len(brightness)
    if n < 2:
        return np.zeros(n, bool)
    surest = np.asarray(sure) >= np.quantile(sure, SUREST)
    heights = np.asarray(heights, np.float64)
    brightness = np.asarray(brightness, np.float64)
    return ((brightness < DARK_SHARE * float(np.median(brightness[surest])))
            & (heights < SMALL_SHARE * float(np.median(heights[surest]))))

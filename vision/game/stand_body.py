"""Something skin-coloured lying over the stand's own body, on a rack photo.

A dark stand on a light table is the background of its rows: between its ends, from its
beam up to its top ledge, every pixel is either a tile or the stand. A hand held over the
rack shows there as a piece that is neither, even a pale hand on white marble, which the
table-colour rules of `vision.game.cover` take for the table. This is the cover gate's
last measure on a rack photo (`Cover.over_stand`):

1. The stand's colour is the main colour (`cover._main_colour`) of the pixels round the
   stand's tiles, off the tiles, along their rows by `BAND` tile widths each way, leaving
   out skin-coloured pixels (a hand beside a tile). Where more than `SKIN_BAND` of those
   pixels are skin-coloured, or the stand's colour under its tiles' feet is skin's
   (`cover._stand_colour`), the stand cannot be told from a hand by colour (a brown or
   wooden stand) and nothing is measured. Nor where the stand is the table's colour
   (within the tolerance of either): its body cannot be told from the table.
2. The stand's body: the pieces within `TOL` of that colour, opened by `BODY_OPEN` tile
   heights (legs, a cast shadow's rim), of at least `BODY_PIECE` tile areas, inside the
   strip across the rows from `DOWN` tile heights under the lowest foot to `UP` over the
   highest top. Its extent is their convex hull.
3. Inside that extent, and no lower than `BELOW_FEET` tile heights under the lowest
   feet (a hand on the beam hides no tile), the pixels that are neither the stand nor a
   tile (grown as in the cover gate), coloured like skin (`cover._skin_like`) and unlike
   the table beyond the tiles (the table shows where the extent runs past a stand's
   rounded end), opened by `cover.OPEN` tile heights. The largest piece, in tile areas, is `over_stand`;
   `MAX_OVER` or more refuses the photo.

A hand over the stand's end leaves no stand beyond it, so its extent stops at the hand;
a stand the table's colour, a grey sleeve over a black stand: not seen here either.
Chosen on the real rack photos with painted hands and on clean renders
(docs/decisions/covered-photo.md, "The stand's own body, skin-coloured only").
"""

from __future__ import annotations

import numpy as np

from vision.game import cover
from vision.game.stand import rack_axis

BAND = 1.5  # tile widths along the rows each way round the stand's tiles: its colour there
SKIN_BAND = 0.5  # more than this share of that band skin-coloured: a hand, or a wooden stand
TOL = (10.0, 25.0)  # Lab (lightness halved) within which a pixel is the stand
BODY_OPEN = 0.15  # tile heights: thinner stand-coloured things are no body (legs, rims)
BODY_PIECE = 0.5  # tile areas: smaller stand-coloured pieces are no body
DOWN, UP = 0.6, 0.3  # tile heights past the tiles' feet and tops: the stand's strip
# ...but a piece lower than this many tile heights under the lowest feet lies on the
# beam, where it hides no tile: a glossy beam lit warm by the lamp (white upright 780,007)
BELOW_FEET = 0.15
MAX_OVER = 2.0  # tile areas of one skin-coloured piece over the stand's body: covered


def _rack_up(quads: np.ndarray) -> np.ndarray:
    """(2,) the rack's up from the stand's tiles at `quads` (N >= 1, 4, 2): the way the rack
    rules agree on, else the boxes' own; pointing from their feet to their tops."""
    tops = ((quads[:, 0] + quads[:, 1]) / 2 - (quads[:, 3] + quads[:, 2]) / 2).mean(axis=0)
    way = rack_axis(quads) if len(quads) >= 2 else None
    up = tops / max(float(np.linalg.norm(tops)), 1e-9) if way is None else way[0]
    return up if float(tops @ up) >= 0 else -up


def over_stand(picture: np.ndarray, quads: np.ndarray, stand: np.ndarray, geometry=None,
               lab_full: np.ndarray | None = None) -> float:
    """The largest skin-coloured piece over the stand's body (the module's doc), in tile
    areas, on a BGR `picture` whose tiles lie at `quads` (N, 4, 2); `stand` (N,) bool the
    tiles standing on the stand. 0.0 where the stand's body cannot be told."""
    import cv2

    sq = quads[np.asarray(stand, bool)]
    if not len(sq):
        return 0.0
    height, on_tiles, area, tile_area = geometry or cover._tiles_geometry(picture.shape, quads)
    lab_full = cover._lab(picture) if lab_full is None else lab_full
    lab = lab_full.copy()
    lab[..., 0] *= cover.LIGHTNESS_WEIGHT

    up = _rack_up(sq)
    band = cover._rows_band(picture.shape, sq, BAND, up) & ~on_tiles
    if band.sum() < 16:
        return 0.0
    skin = cover._skin_like(lab_full[band])
    if skin.mean() > SKIN_BAND:
        return 0.0
    known = cover._stand_colour(lab, sq, on_tiles)
    if known is not None and cover._skin_like(known[0] / [cover.LIGHTNESS_WEIGHT, 1, 1]):
        return 0.0  # a skin-hued stand
    colour, d = cover._main_colour(lab[band][~skin])
    tol = min(TOL[1], max(TOL[0], cover.SPREAD * float(np.percentile(d, 40))))
    beyond = cover._beyond_colour(lab, area)
    if beyond is not None and np.linalg.norm(beyond[0] - colour) < max(tol, beyond[1]):
        return 0.0  # the stand is the table's colour

    like = np.linalg.norm(lab - colour, axis=-1) < tol
    body = cv2.morphologyEx(like.astype(np.uint8), cv2.MORPH_OPEN,
                            cover._disc(max(1, int(round(BODY_OPEN * height)))))
    span = sq.reshape(-1, 2) @ up
    lo, hi = span.min() - DOWN * height, span.max() + UP * height
    h, w = picture.shape[:2]
    across = np.arange(w)[None, :] * up[0] + np.arange(h)[:, None] * up[1]
    body &= ((across >= lo) & (across <= hi)).astype(np.uint8)
    n, parts, stats, centres = cv2.connectedComponentsWithStats(body)
    at = centres[1:] @ up
    keep = np.nonzero((stats[1:, cv2.CC_STAT_AREA] >= BODY_PIECE * tile_area)
                      & (at >= lo) & (at <= hi))[0] + 1
    if not len(keep):
        return 0.0
    outlines, _ = cv2.findContours(np.isin(parts, keep).astype(np.uint8), cv2.RETR_EXTERNAL,
                                   cv2.CHAIN_APPROX_SIMPLE)
    extent = np.zeros(picture.shape[:2], np.uint8)
    cv2.fillConvexPoly(extent, cv2.convexHull(np.concatenate(outlines)), 1)

    # only the extent's pixels that are neither stand nor tile, no lower than `BELOW_FEET`
    # under the lowest feet, are looked at further
    ys, xs = np.nonzero(extent.astype(bool) & ~like & ~on_tiles
                        & (across >= span.min() - BELOW_FEET * height))
    odd = cover._skin_like(lab_full[ys, xs])
    if beyond is not None:
        odd &= np.linalg.norm(lab[ys, xs] - beyond[0], axis=-1) >= beyond[1]
    foreign = np.zeros(picture.shape[:2], bool)
    foreign[ys[odd], xs[odd]] = True
    opened = cv2.morphologyEx(foreign.astype(np.uint8), cv2.MORPH_OPEN,
                              cover._disc(max(1, int(round(cover.OPEN * height)))))
    m, pieces = cv2.connectedComponents(opened)
    if m < 2:
        return 0.0
    sizes = np.bincount(pieces[opened.astype(bool)], minlength=m)[1:]
    return float(sizes.max()) / max(tile_area, 1.0)

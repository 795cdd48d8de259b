"""Hidden is not gone: what a tile's place shows when the camera no longer finds the tile.

A tile taken off the table leaves the table's surface visible where it lay; a tile under a
hand, a sleeve or a cup shows that thing instead. The tracker keeps, for each tile of the
stable table, how its place looked while the tile was seen on still frames (`PlaceLook`:
the tile's own colour, and the table's surface just around it, where no tile lies), and
when a frame misses the tile it asks `place_state` what the place shows now:

- `SURFACE`: most of the place has the colour of the surface around it, and some of its
  grain where the surface had grain: the tile is gone (a palm the colour of the wood is
  smooth: `COVERED`);
- `TILES`: other tiles found in this frame lie over most of it: it was moved or pushed;
- `COVERED` too when much of the surface around the place looks otherwise than it did:
  a hand over a tile lies over its surroundings as well, a tile taken away leaves them;
- `TILE`: it still looks like the tile (the detector missed it in this frame);
- `OUTSIDE`: the frame's edge cuts the place (the camera turned away);
- `COVERED`: something else (skin, a sleeve) over it, or over a quarter more of it than
  the tile's own number covers (a hand over half a tile: why the camera misses it):
  hidden, not gone.

It works on the small picture the tracker gets (~160 px wide, colour when the caller gives
colour; grey works where the surface and the hand differ in brightness). Where a tile's
own colour is the surface's (a cream tile on a cream cloth) a bare place cannot be told
from the tile: only COVERED (neither tile nor table) is said, else None, and the tracker
falls back on time alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SURFACE, TILES, TILE, OUTSIDE, COVERED = "surface", "tiles", "tile", "outside", "covered"
BARE = (SURFACE, TILES)  # the place no longer holds the tile

RINGS = (0.5, 1.0, 2.0)  # the surface around a tile: this many tile heights out from it
SHRINK = 0.2  # a tile's inside: its outline shrunk by this share towards its centre
LIGHTNESS_WEIGHT = 0.5
SURFACE_TOL = 10.0  # colour distance (Lab, of 255) within which a pixel is surface
TILE_TOL = 10.0  # median colour distance within which a place still looks like its tile
BARE_SHARE = 0.6  # share of the place that must look like surface for SURFACE
TILES_SHARE = 0.4  # share of the place other tiles found now must cover for TILES
UNTELLABLE = 0.4  # a tile whose own inside looks this much like the surface gives no look
MIN_RING_PX = 12  # surface pixels needed around a tile to know the surface there
OTHER_TOL = 15.0  # a pixel this far from the tile's colour (and not surface) is neither
PARTLY = 0.25  # that much more of a place like neither than the tile's own: covered
RING_TOL = 12.0  # a surface pixel around the tile this far from how it was has changed
RING_CHANGED = 0.3  # that share of the surroundings changed: something lies over them
# A place the colour of the table there but much smoother than the table was around it
# (its grain: lightness against its 3 x 3 softening) is skin the colour of the wood, not
# the bare table: real bare places 0.61+ of their ring's grain, palms 0.1-0.25, where the
# ring's grain is above the sensor's (docs/decisions/hidden-tiles-from-pixels.md).
SMOOTHER = 0.4
GRAIN_MIN = 0.5
RING_SMOOTHER = 0.8  # ...and its surroundings lost a fifth of theirs: a palm lies over them


@dataclass(frozen=True)
class PlaceLook:
    tile: np.ndarray  # median colour of the tile's inside, (C,)
    surface: np.ndarray | None  # median colour of the surface around it, (C,), if any shows
    tol: float  # colour distance within which a pixel is that surface
    tellable: bool  # the tile's colour differs from that surface's: a bare place is known
    own_other: float = 0.0  # share of the tile's own inside like neither (its number)
    # The surface around it, pixel by pixel (softened): offsets from the tile's centre
    # (K, 2), and their colours (K, C). A hand over a tile lies over its surroundings too;
    # a tile taken away leaves them as they were.
    ring_xy: np.ndarray | None = None
    ring_px: np.ndarray | None = None
    grain: float | None = None  # the surface's median grain around it (`Picture.grain`)


@dataclass(frozen=True)
class Picture:
    """A small picture as the places are compared in: (h, w, C) float32."""

    px: np.ndarray
    soft: np.ndarray  # the same, softened over 3 x 3 px: a shake of a pixel changes little
    # (h, w): lightness against its softening, the grain of wood, cloth or marble (skin and
    # the sensor's noise alone have little)
    grain: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        return self.px.shape


def prepare(picture: np.ndarray) -> Picture:
    """Colour as Lab, lightness counted half: a shadow or the light changes lightness
    most, while a tile (cream), the cloth and a hand differ most in hue. Made once a
    frame, for every place looked at in it."""
    import cv2

    if isinstance(picture, Picture):
        return picture
    p = np.asarray(picture)
    if p.ndim == 2:
        px = p.astype(np.float32)[..., None]
    else:
        px = cv2.cvtColor(p.astype(np.uint8), cv2.COLOR_BGR2LAB).astype(np.float32)
        px[..., 0] *= LIGHTNESS_WEIGHT
    soft = cv2.blur(px, (3, 3)).reshape(px.shape)
    return Picture(px, soft, np.abs(px[..., 0] - soft[..., 0]))


def _crop(shape, quad: np.ndarray, margin: float) -> tuple[slice, slice, np.ndarray]:
    """(rows, columns) of the picture around `quad` grown by `margin` px, and the quad in
    that crop's pixels: a place is looked at in its own corner of the picture."""
    h, w = shape[:2]
    x0, y0 = np.floor(quad.min(axis=0) - margin).astype(int)
    x1, y1 = np.ceil(quad.max(axis=0) + margin).astype(int) + 1
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    return slice(y0, y1), slice(x0, x1), quad - (x0, y0)


def _mask(shape, quad: np.ndarray) -> np.ndarray:
    import cv2

    m = np.zeros(shape[:2], np.uint8)
    cv2.fillConvexPoly(m, np.round(quad * 4).astype(np.int32), 1, lineType=cv2.LINE_8, shift=2)
    return m.astype(bool)


def _inside(quad: np.ndarray) -> np.ndarray:
    c = quad.mean(axis=0)
    return c + (quad - c) * (1 - SHRINK)


def tiles_mask(shape, quads: np.ndarray) -> np.ndarray:
    """Where any of `quads` (small-picture pixels) lies, grown by a pixel."""
    import cv2

    m = np.zeros(shape[:2], np.uint8)
    for q in quads:
        cv2.fillConvexPoly(m, np.round(q * 4).astype(np.int32), 1, shift=2)
    return cv2.dilate(m, np.ones((3, 3), np.uint8)).astype(bool)


def _ring_grain(pic: Picture, look: PlaceLook, quad: np.ndarray,
                found: np.ndarray | None) -> float:
    """The median grain now of the surface around the place at `quad` (the look's ring,
    where no tile is found now); inf where too little of it is left to tell."""
    xy, ok = _points(pic, look.ring_xy + quad.mean(axis=0), skip=found)
    if ok.sum() < MIN_RING_PX:
        return float("inf")
    return float(np.median(pic.grain[xy[ok, 1], xy[ok, 0]]))


def _points(pic: Picture, xy: np.ndarray, *, skip: np.ndarray | None = None,
            only: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The points `xy` (K, 2) rounded to the picture's pixels, and (K,) which of them to
    look at: on the picture, not in the mask `skip`, inside the mask `only`."""
    h, w = pic.shape[:2]
    xy = np.round(xy).astype(int)
    ok = (xy[:, 0] >= 0) & (xy[:, 0] < w) & (xy[:, 1] >= 0) & (xy[:, 1] < h)
    if skip is not None:
        ok[ok] &= ~skip[xy[ok, 1], xy[ok, 0]]
    if only is not None:
        ok[ok] &= only[xy[ok, 1], xy[ok, 0]]
    return xy, ok


def _distance(pixels: np.ndarray, colour: np.ndarray) -> np.ndarray:
    return np.linalg.norm(pixels - colour[None, :], axis=1)


def look_of(picture: np.ndarray, quad: np.ndarray, all_tiles: np.ndarray) -> PlaceLook | None:
    """How the place of the tile at `quad` (small-picture pixels) looks with the tile on
    it; `all_tiles` = `tiles_mask` of every tile found in this picture. None when the
    tile's inside is too small to look at."""
    import cv2

    height = float(np.linalg.norm(quad[3] - quad[0]))
    rows, cols, quad = _crop(np.shape(all_tiles), quad, RINGS[-1] * height + 2)
    pic = prepare(picture)
    p = pic.px[rows, cols]
    all_tiles = all_tiles[rows, cols]
    if not p.size:
        return None
    inside = _mask(p.shape, _inside(quad))
    if inside.sum() < 4:
        return None
    place = _mask(p.shape, quad).astype(np.uint8)
    for reach in RINGS:  # tiles packed around it: the surface a little farther out
        r = max(1, int(round(reach * height)))
        grown = cv2.dilate(place, cv2.getStructuringElement(cv2.MORPH_ELLIPSE,
                                                            (2 * r + 1, 2 * r + 1)))
        ring = grown.astype(bool) & ~all_tiles
        if ring.sum() >= MIN_RING_PX:
            break
    else:
        # Tiles all around: no surface to compare with, only the tile itself.
        tile = np.median(p[inside], axis=0)
        look = PlaceLook(tile, None, SURFACE_TOL, False)
        return PlaceLook(tile, None, SURFACE_TOL, False, _other(p[inside], look))
    surface_px = p[ring]
    surface = np.median(surface_px, axis=0)
    spread = float(np.median(_distance(surface_px, surface)))
    tol = max(SURFACE_TOL, 3.0 * spread)
    tile_px = p[inside]
    # A tile that looks like the table there: a bare place cannot be told from the tile.
    tellable = float(np.mean(_distance(tile_px, surface) < tol)) <= UNTELLABLE
    look = PlaceLook(np.median(tile_px, axis=0), surface, tol, tellable)
    ys, xs = np.nonzero(ring)
    ring_xy = np.stack([xs, ys], axis=1) - quad.mean(axis=0)
    return PlaceLook(look.tile, surface, tol, tellable, _other(tile_px, look), ring_xy,
                     pic.soft[rows, cols][ring],
                     float(np.median(pic.grain[rows, cols][ring])))


def _around_changed(pic: Picture, quad: np.ndarray, look: PlaceLook,
                    found: np.ndarray | None) -> bool:
    """Whether much of the surface around the tile's place looks otherwise than it did
    (leaving out where tiles lie now)."""
    if look.ring_xy is None or not len(look.ring_xy):
        return False
    return surface_changed(pic, look.ring_xy + quad.mean(axis=0), look.ring_px,
                           skip=found) is True


def surface_changed(pic: Picture, xy: np.ndarray, then: np.ndarray, *,
                    skip: np.ndarray | None = None,
                    only: np.ndarray | None = None) -> bool | None:
    """Whether the surface at points `xy` (K, 2) of the small picture, which looked
    `then` (K, C), looks otherwise now in `RING_CHANGED` of them (each by `RING_TOL` or
    more); points in the mask `skip`, or outside the mask `only`, left out. None where
    fewer than `MIN_RING_PX` are left to tell."""
    xy, ok = _points(pic, xy, skip=skip, only=only)
    if ok.sum() < MIN_RING_PX:
        return None
    now = pic.soft[xy[ok, 1], xy[ok, 0]]
    changed = np.linalg.norm(now - then[ok], axis=1) >= RING_TOL
    return float(changed.mean()) >= RING_CHANGED


def _other(px: np.ndarray, look: PlaceLook) -> float:
    """Share of the pixels `px` like neither the tile nor the surface around it."""
    other = _distance(px, look.tile) >= OTHER_TOL
    if look.surface is not None:
        other &= _distance(px, look.surface) >= look.tol
    return float(other.mean())


def place_state(picture: np.ndarray, quad: np.ndarray, look: PlaceLook | None,
                found: np.ndarray | None = None) -> str | None:
    """What the place at `quad` (small-picture pixels) shows now (see the module notes);
    `found` = `tiles_mask` of the tiles found in this picture. None without a look."""
    pic = prepare(picture)
    h, w = pic.shape[:2]
    if (quad.min(axis=0) < 0).any() or quad[:, 0].max() > w - 1 or quad[:, 1].max() > h - 1:
        return OUTSIDE
    if look is None:
        return None
    at = quad  # the whole picture's pixels (`quad` becomes the crop's below)
    if _around_changed(pic, quad, look, found):
        return COVERED  # something lies over its surroundings too: a hand, an arm
    rows, cols, quad = _crop(pic.shape, quad, 1)
    p = pic.px[rows, cols]
    inside = _mask(p.shape, _inside(quad))
    if inside.sum() < 4:
        return None
    if found is not None and float(found[rows, cols][inside].mean()) >= TILES_SHARE:
        return TILES
    px = p[inside]
    if _other(px, look) >= look.own_other + PARTLY:
        return COVERED  # something lies over (part of) it: why the camera misses it
    bare = (look.surface is not None
            and float(np.mean(_distance(px, look.surface) < look.tol)) >= BARE_SHARE)
    like_tile = float(np.linalg.norm(np.median(px, axis=0) - look.tile)) < TILE_TOL
    if not look.tellable:
        # Tile and table look alike here: only "something else lies there" is known.
        return None
    if bare and look.grain is not None and look.grain >= GRAIN_MIN \
            and float(np.median(pic.grain[rows, cols][inside])) < SMOOTHER * look.grain \
            and _ring_grain(pic, look, at, found) < RING_SMOOTHER * look.grain:
        return COVERED  # the table's colour without its grain, there and around: a hand
    if bare:
        return SURFACE
    return TILE if like_tile else COVERED

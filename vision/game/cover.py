"""Is something lying over the table's tiles? A lone table photo with a hand over it is not
judged: the tiles under the hand are not on the picture, and a verdict on the tiles left
would be a verdict on part of the table.

Looked at on the photo 320 px wide (`WIDTH`), in Lab with lightness counted half, as in
`vision.game.occlusion` (a shadow changes lightness most, a hand differs in hue):

1. The table, tile by tile: each tile found has a ring of table around it (out to
   `RING` tile heights, other tiles left out). The ring's main colour is its median, taken
   again over the half of its pixels nearest it (`_main_colour`: a hand beside a tile
   covers part of its ring, the table most of it), and the tolerance is `SPREAD` times how
   far its nearer pixels lie from it, between `TOL_MIN` and `TOL_MAX`. Where the table
   (the colour most ring pixels of the photo lie near) is not skin-coloured, a ring whose
   main colour is skin's is left out: the hand filled it (`_without_skin_rings`). On a
   rack photo the rings that are the stand's colour are then left out too, where others
   tell the table (`_without_stand_rings`).
2. A pixel off the tiles, within `REACH` tile heights of them, is *foreign* when it is
   unlike the table around at least `NEED` of its `NEAREST` nearest tiles, unlike the
   tiles' own face, and coloured like skin (chroma of at least `MIN_CHROMA`, a hue
   between red and yellow): a grey shade of the table, a black stand or the white table
   behind a rack is never a hand.
3. Foreign pixels are opened by a fifth of a tile height (a grain, a vein, a digit of a
   tile the detector missed is thinner), and the largest connected piece inside the
   tiles' area, counted in tile areas, is `Cover.area`. `MAX_AREA` tile areas or more:
   covered, if the piece has an outline (`_outline`): a shade across the table or a
   darker stretch of wood fades into the table around it, a hand does not.
4. Apart from the table's colour: skin-coloured pixels smoother than the table's grain
   (`smooth_skin`), the largest piece reaching into the tiles' area is `Cover.smooth`;
   `MAX_SMOOTH` tile areas or more: covered. A hand on wood has the wood's hue but not
   its grain.

A rack photo (`rack=True`) is judged on the same measures but where they count: the ring
round a stand's tiles is the stand, not the table, so the table's grain is not measured
there and a plain wooden table beside the stand reads as smooth skin, and the wood's
colour next to the black stand reads as a foreign piece. A hand that hides a rack's tiles
lies over its rows: a smooth piece reaching into the hull of the tiles standing on the
stand, stretched along its rows by `ROWS_REACH` tile widths (`Cover.smooth_over`; tiles
lying by spread the hull of them all over the table; a hand over a row's end tiles lies
past the hull of the tiles left), or
a foreign piece reaching into that hull grown by `HULL_GROW` (`Cover.area_over`), refuses
the photo; one that only reaches the table around the tiles is a doubt (`Cover.doubts`),
said beside the rack's total, not a refusal. A pixel coloured like the stand (learnt under
its tiles' feet, `_stand_colour`) is never foreign there: a brown stand's empty ledges are
skin-hued (docs/decisions/covered-photo.md, "A rack photo: over the rows or beside them",
"The stand's hull", "A foreign piece beside the stand", "A skin-hued stand" and "Painted
hands over the real rack photos"). Last, a skin-coloured piece over the stand's own body,
where only the stand or a tile can be, refuses a rack photo too (`Cover.over_stand`,
`vision.game.stand_body`): a pale hand there is like the white table, not like the stand.

The thresholds were chosen on the real valid/ photos with hands painted over them
(`python -m bench.eval_cover`, docs/decisions/covered-photo.md). A grey or black sleeve is
not seen (it is colourless, like a table's shade); a hand or a bare arm is. The painted
hands are smoother than real skin may be: step 4 is measured on them and on real clean
photos only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vision.game.footing import points_under_feet, stand_elsewhere
from vision.game.occlusion import tiles_mask
from vision.game.stand import off_the_rack, rack_axis
from vision.recognition.decode import PhotoError

# Chosen in docs/decisions/covered-photo.md (bench.eval_cover on the real valid/ photos).
WIDTH = 320  # px: the picture the photo is judged on
LIGHTNESS_WEIGHT = 0.5
RING = 0.6  # tile heights of table around a tile that tell its colour there
TILES_GROW = 0.1  # tile heights added around every tile found: its outline and shadow
TOL_MIN, TOL_MAX = 12.0, 30.0  # Lab distance within which a pixel is the table
SPREAD = 2.5  # the tolerance: this many times the ring's spread about its main colour
NEAREST, NEED = 3, 2  # unlike the table around NEED of the NEAREST tiles: foreign
REACH = 1.5  # tile heights around the tiles' hull: "the tiles' area"
TILE_TOL = 12.0  # within this Lab distance of the tiles' face colour: a tile, not a hand
BEYOND_MIN = 64  # px of the picture beyond the tiles' area that tell the table's colour there
MIN_CHROMA = 12.0  # Lab chroma: below it a pixel is grey (a shade, a stand), never skin
# ...and above this it is a print or a plastic, never skin: skin measures 15-35 (8-bit Lab,
# light to dark; a warm lamp adds some), an orange game box 57, a red one 68 (white 730,037:
# the box behind the stand refused as a hand; docs/decisions/covered-photo.md, "Vivider
# than skin").
MAX_CHROMA = 50.0
HUE = (35.0, 75.0)  # degrees of Lab hue, orange-red to yellow-orange: skin and bare arms
OPEN = 0.2  # tile heights: thinner foreign things (grain, veins, digits) are left out
MAX_AREA = 6.5  # tile areas of one foreign piece inside the tiles' area: covered
EDGE = 0.25  # tile heights: the bands inside and outside a piece's outline...
OUTLINE = 6.0  # ...whose colours lie this far apart where it is a hand, not a shade
GRAIN = 0.4  # tile heights: the window a pixel's local spread of lightness is taken over
SMOOTHER = 0.35  # times the table's spread: smoother than the table's grain, as skin is
SMOOTH_OPEN = 0.25  # tile heights: thinner smooth skin-coloured things are left out
SMOOTH_IN = 0.5  # tile areas of a smooth skin-coloured piece inside the tiles' area...
MAX_SMOOTH = 3.0  # ...and it is covered when the whole piece has this many tile areas
# On a rack photo a foreign piece (step 3) refuses where it reaches `SMOOTH_IN` tile areas
# into the hull of the stand's tiles grown by this many tile heights, else it is a doubt:
# 0.5 refused a plain black stand for the wood just above its top tier (white 740,012;
# docs/decisions/covered-photo.md, "A foreign piece beside the stand").
HULL_GROW = 0.25
# ...and that hull is stretched along the stand's rows by this many tile widths each way
# (`_rows_band`): on the real rack photos with painted hands, 0 / 1 / 2 / 3 refused 30 /
# 41 / 59 / 75 of 134, and 0 / 0 / 1 / 1 of 180 clean white renders (docs/decisions/
# covered-photo.md, "Painted hands over the real rack photos").
ROWS_REACH = 1.0
# On a rack photo the stand is no hand, whatever its colour: a brown or wooden stand's empty
# ledges are skin-hued and outlined against the table (white 780,014). Its colour
# is learnt just under the feet of the stand's tiles (`FOOT_BAND` tile heights below each,
# its middle `FOOT_ACROSS`), where at least `STAND_TILES` tiles, and `STAND_AGREE` of those
# with enough stand in view, agree on it within the rings' tolerance, capped at `STAND_TOL`
# (a palm over a few feet, or a band mixing beam and table, must not pass for the stand:
# docs/decisions/covered-photo.md, "A skin-hued stand").
FOOT_BAND = (0.12, 0.3)
FOOT_ACROSS = 0.6
STAND_TILES = 3
STAND_AGREE = 0.75
STAND_TOL = 20.0

WORDS = "something covers part of the table (a hand?): move it and take the photo again"
RACK_WORDS = "something covers part of the rack (a hand?): move it and take the photo again"
DOUBT_WORDS = ("something skin-coloured lies beside the rack (a hand?): if it hides tiles, "
               "move it and take the photo again")


@dataclass(frozen=True)
class Cover:
    """What lies over the tiles' area of one photo."""

    area: float  # the largest foreign piece inside the tiles' area, in tile areas
    tiles: int  # tiles found (with none there is no tiles' area to cover)
    smooth: float = 0.0  # the largest smooth skin-coloured piece reaching there, tile areas
    smooth_over: float = 0.0  # ...of those, the largest reaching into the tiles' own hull
    # ...and of the foreign pieces, the largest reaching into the stand tiles' hull grown
    # by `HULL_GROW` (a rack photo's; None: a table photo, judged on `area`)
    area_over: float | None = None
    # a rack photo's skin-coloured piece over the stand's own body, tile areas
    # (`vision.game.stand_body`; None: a table photo)
    over_stand: float | None = None

    def problems(self, rack: bool = False) -> list[str]:
        """["covered"] when something lies over the tiles, else []. On a `rack` photo
        a foreign piece and smooth skin count only over the hull of the stand's tiles, and
        a skin-coloured piece over the stand's own body counts too (`over_stand`; the
        module's doc)."""
        from vision.game.stand_body import MAX_OVER

        area = self.area if not rack or self.area_over is None else self.area_over
        smooth = self.smooth_over if rack else self.smooth
        body = self.over_stand if rack and self.over_stand is not None else 0.0
        seen = area >= MAX_AREA or smooth >= MAX_SMOOTH or body >= MAX_OVER
        return ["covered"] if self.tiles and seen else []

    def doubts(self, rack: bool = False) -> list[str]:
        """On a rack photo not refused: ["maybe covered"] where a foreign piece or smooth
        skin reaches the table around the tiles but not their hull; else []."""
        if not rack or self.problems(rack=True):
            return []
        seen = self.area >= MAX_AREA or self.smooth >= MAX_SMOOTH
        return ["maybe covered"] if self.tiles and seen else []

    def to_json(self) -> dict:
        return {"area": round(float(self.area), 2), "smooth": round(float(self.smooth), 2),
                "smooth_over": round(float(self.smooth_over), 2),
                **({} if self.area_over is None
                   else {"area_over": round(float(self.area_over), 2)}),
                **({} if self.over_stand is None
                   else {"over_stand": round(float(self.over_stand), 2)}),
                "tiles": self.tiles, "problems": self.problems()}


class PhotoCovered(PhotoError):
    """A table photo (or a `rack` photo) with something (a hand?) over its tiles: never
    judged."""

    def __init__(self, cover: Cover, rack: bool = False) -> None:
        self.cover = cover
        self.rack = rack
        super().__init__(RACK_WORDS if rack else WORDS)


def _main_colour(px: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The colour most of `px` (K, 3) lie near, and each pixel's distance from it."""
    colour = np.median(px, axis=0)
    for _ in range(3):
        d = np.linalg.norm(px - colour, axis=1)
        colour = np.median(px[d <= max(float(np.median(d)), 4.0)], axis=0)
    return colour, np.linalg.norm(px - colour, axis=1)


def _tolerance(d: np.ndarray) -> float:
    """Within this Lab distance of a main colour whose nearer pixels lie `d` from it, a
    pixel is that colour (`SPREAD` times their 40th percentile, within TOL_MIN-TOL_MAX)."""
    return min(TOL_MAX, max(TOL_MIN, SPREAD * float(np.percentile(d, 40))))


def _disc(radius: int) -> np.ndarray:
    import cv2

    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))


def _table_colours(lab: np.ndarray, quads: np.ndarray, on_tiles: np.ndarray, height: float):
    """Per tile with table around it: the table's main colour there, its tolerance, and
    the tile's centre (three lists)."""
    import cv2

    reach = max(2, int(round(RING * height)))
    ring_disc = _disc(reach)
    h, w = lab.shape[:2]
    colours, tols, centres, rings = [], [], [], []
    for quad in quads:
        # each ring in its own corner of the picture: the same pixels, a fraction of the work
        x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int) - reach - 1, 0)
        x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + reach + 2
        x1, y1 = min(x1, w), min(y1, h)
        if x1 <= x0 or y1 <= y0:
            continue  # the tile lies outside the picture
        one = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(one, np.round(quad - (x0, y0)).astype(np.int32), 1)
        ring = cv2.dilate(one, ring_disc).astype(bool) & ~on_tiles[y0:y1, x0:x1]
        if ring.sum() < 8:
            continue  # tiles all around it: no table to see there
        px = lab[y0:y1, x0:x1][ring]
        colour, d = _main_colour(px)
        rings.append(px[::4])
        colours.append(colour)
        tols.append(_tolerance(d))
        centres.append(quad.mean(axis=0))
    return _without_skin_rings(colours, tols, centres, rings)


def _skin_like(lab: np.ndarray) -> np.ndarray:
    """Which Lab colours (..., 3) are coloured like skin (`MIN_CHROMA`, `MAX_CHROMA`, `HUE`)."""
    a, b = lab[..., 1] - 128, lab[..., 2] - 128
    hue, chroma = np.degrees(np.arctan2(b, a)), np.hypot(a, b)
    return (chroma >= MIN_CHROMA) & (chroma <= MAX_CHROMA) & (hue >= HUE[0]) & (hue <= HUE[1])


def _without_skin_rings(colours, tols, centres, rings):
    """The rings left out whose main colour is skin's while the table's (the colour most
    ring pixels of the photo lie near) is not: a hand beside a tile fills most of its ring,
    and its colour is then no table colour to compare with."""
    if not colours:
        return colours, tols, centres
    table, _ = _main_colour(np.concatenate(rings))
    if _skin_like(table):
        return colours, tols, centres  # a wood table: skin's hue is the table's
    keep = [i for i, c in enumerate(colours) if not _skin_like(c)]
    if not keep:
        return [table], [TOL_MIN], [np.mean(centres, axis=0)]
    return ([colours[i] for i in keep], [tols[i] for i in keep],
            [centres[i] for i in keep])


def _without_stand_rings(colours, tols, centres, stand):
    """The rings left out whose main colour is the stand's (`stand`: its colour and
    tolerance), where some are not: round a stand's tiles the ring is the stand, and the
    table beside it, lit lighter or darker than beyond the tiles' area, is then unlike
    every ring near it. The rings of the tiles lying by tell the table (docs/decisions/
    covered-photo.md, "The stand's rings are no table")."""
    colour, tol = stand
    keep = [i for i, c in enumerate(colours) if np.linalg.norm(c - colour) >= tol]
    if not keep or len(keep) == len(colours):
        return colours, tols, centres
    return tuple([part[i] for i in keep] for part in (colours, tols, centres))


def _lab(picture: np.ndarray) -> np.ndarray:
    """The picture in Lab (float32), a 3x3 blur first: a pixel's noise is no colour."""
    import cv2

    return cv2.cvtColor(cv2.GaussianBlur(picture, (3, 3), 0), cv2.COLOR_BGR2LAB).astype(
        np.float32)


def _tiles_geometry(shape, quads: np.ndarray):
    """(tile height px, the tiles grown by `TILES_GROW`, the tiles' area, one tile's area
    px) of tiles at `quads` (N, 4, 2) on a picture of `shape`."""
    import cv2

    height = float(np.median(np.linalg.norm(quads[:, 3] - quads[:, 0], axis=1)))
    grow = max(1, int(round(TILES_GROW * height)))
    on_tiles = cv2.dilate(tiles_mask(shape, quads).astype(np.uint8),
                          np.ones((2 * grow + 1, 2 * grow + 1), np.uint8)).astype(bool)
    area = cv2.dilate(_hull(shape, quads).astype(np.uint8),
                      _disc(max(1, int(round(REACH * height))))).astype(bool)
    tile_area = float(np.median([cv2.contourArea(q.astype(np.float32)) for q in quads]))
    return height, on_tiles, area, tile_area


def smooth_skin(picture: np.ndarray, quads: np.ndarray, geometry=None,
                lab_full: np.ndarray | None = None) -> float:
    """The largest piece of smooth skin-coloured pixels reaching `SMOOTH_IN` tile areas into
    the tiles' area of a BGR `picture` whose tiles lie at `quads` (N >= 1), in tile areas
    (the whole piece, the arm beyond the tiles' area too).

    Smooth: the local spread of lightness (over `GRAIN` tile heights) under `SMOOTHER`
    times the table's (its median over the ring of table around the tiles). Wood grain,
    cloth weave and marble veins are rough at that scale, a hand's skin is not, so a hand
    coloured like the wooden table still stands out. Opened by `SMOOTH_OPEN` tile heights.
    `geometry`, `lab_full`: `_tiles_geometry` of these tiles and `_lab` of the picture,
    where the caller has them already."""
    return _smooth_skin(picture, quads, geometry, lab_full)[0]


def _smooth_skin(picture: np.ndarray, quads: np.ndarray, geometry=None,
                 lab_full: np.ndarray | None = None,
                 hull: np.ndarray | None = None) -> tuple[float, float]:
    """(`smooth_skin`, the same for the pieces reaching `SMOOTH_IN` tile areas into `hull`
    ((H, W) bool), the convex hull of the tiles where None): one measure of smoothness for
    both."""
    import cv2

    height, on_tiles, area, tile_area = geometry or _tiles_geometry(picture.shape, quads)
    lightness = cv2.cvtColor(picture, cv2.COLOR_BGR2LAB)[..., 0].astype(np.float32)
    k = max(3, int(round(GRAIN * height)) | 1)
    mean = cv2.blur(lightness, (k, k))
    spread = np.sqrt(np.maximum(cv2.blur(lightness * lightness, (k, k)) - mean * mean, 0))
    ring = cv2.dilate(on_tiles.astype(np.uint8),
                      _disc(max(2, int(round(RING * height))))).astype(bool) & ~on_tiles
    if not ring.any():
        return 0.0, 0.0
    table = float(np.median(spread[ring]))
    lab_full = _lab(picture) if lab_full is None else lab_full
    smooth = (spread < SMOOTHER * table) & ~on_tiles & _skin_like(lab_full)
    opened = cv2.morphologyEx(smooth.astype(np.uint8), cv2.MORPH_OPEN,
                              _disc(max(1, int(round(SMOOTH_OPEN * height)))))
    n, pieces = cv2.connectedComponents(opened)
    if n < 2:
        return 0.0, 0.0
    # an arm's whole piece counts once it reaches into the tiles' area: a hand reaching
    # for a tile at the edge of the tiles lies mostly outside it
    on = opened.astype(bool)
    hull = _hull(picture.shape, quads) if hull is None else hull
    whole = np.bincount(pieces[on], minlength=n)[1:] / max(tile_area, 1.0)
    reach = [np.bincount(pieces[on & where], minlength=n)[1:] / max(tile_area, 1.0)
             for where in (area, hull)]
    return tuple(float(whole[inside >= SMOOTH_IN].max(initial=0)) for inside in reach)


def _beyond_colour(lab: np.ndarray, area: np.ndarray):
    """(the main colour, its tolerance) of the picture beyond the tiles' area (`area`),
    as a ring's (`_main_colour`, `SPREAD`), or None where too little lies beyond."""
    beyond = ~area
    if beyond.sum() < BEYOND_MIN:
        return None
    colour, d = _main_colour(lab[beyond][::4])
    return colour, _tolerance(d)


def _stand_colour(lab: np.ndarray, quads: np.ndarray, on_tiles: np.ndarray):
    """(the stand's colour, its tolerance) in `lab` (lightness halved) from just under the
    feet of the stand's tiles at `quads` (`FOOT_BAND`, down the rack's way), or None where
    they agree on no way, or too few tiles show it, or they disagree (`STAND_TILES`,
    `STAND_AGREE`)."""
    way = rack_axis(quads) if len(quads) >= 2 else None
    if way is None:
        return None
    h, w = lab.shape[:2]
    points = points_under_feet(quads, way[0], FOOT_BAND, 4, FOOT_ACROSS / 2, 5)
    p = np.round(points.reshape(len(quads), -1, 2)).astype(int)
    seen = (p[..., 0] >= 0) & (p[..., 0] < w) & (p[..., 1] >= 0) & (p[..., 1] < h)
    p = p.clip(0, (w - 1, h - 1))
    seen &= ~on_tiles[p[..., 1], p[..., 0]]
    medians, pixels = [], []
    for i in range(len(quads)):
        if seen[i].sum() >= 0.5 * seen.shape[1]:
            px = lab[p[i, seen[i], 1], p[i, seen[i], 0]]
            medians.append(np.median(px, axis=0))
            pixels.append(px)
    if len(medians) < STAND_TILES:
        return None
    colour, d = _main_colour(np.array(medians))
    tol = min(STAND_TOL, _tolerance(np.linalg.norm(np.concatenate(pixels) - colour, axis=1)))
    agree = d < tol
    if agree.sum() < max(STAND_TILES, STAND_AGREE * len(medians)):
        return None
    return colour, tol


def foreign_mask(picture: np.ndarray, quads: np.ndarray, geometry=None,
                 lab_full: np.ndarray | None = None,
                 stand: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """(foreign pixels, the tiles' area, one tile's area in px) of a BGR `picture` whose
    tiles lie at `quads` (N, 4, 2) in its pixels (N >= 1). `geometry` and `lab_full`:
    `_tiles_geometry` and `_lab` of them, where the caller has them already. `stand` (N,)
    bool: a rack photo's tiles standing on the stand, whose colour is no hand's
    (`_stand_colour`)."""
    import cv2

    height, on_tiles, area, tile_area = geometry or _tiles_geometry(picture.shape, quads)
    lab_full = _lab(picture) if lab_full is None else lab_full
    lab = lab_full.copy()
    lab[..., 0] *= LIGHTNESS_WEIGHT

    foreign = np.zeros(picture.shape[:2], bool)
    # First what could be skin at all (cheap, and most of a grey or white table is not).
    ys, xs = np.nonzero(area & ~on_tiles)
    maybe = _skin_like(lab_full[ys, xs])
    inside = tiles_mask(picture.shape, quads.mean(axis=1, keepdims=True)
                        + (quads - quads.mean(axis=1, keepdims=True)) * 0.6)
    if inside.any():
        face = np.median(lab[inside], axis=0)
        maybe &= np.linalg.norm(lab[ys, xs] - face, axis=-1) >= TILE_TOL
    # Like the table beyond the tiles' area: the table, whatever the rings say (the rings
    # of a stand's tiles are the black stand, and the wooden table beside it is no hand).
    beyond = _beyond_colour(lab, area) if maybe.any() else None
    if beyond is not None:
        colour, tol = beyond
        maybe &= np.linalg.norm(lab[ys, xs] - colour, axis=-1) >= tol
    known = _stand_colour(lab, quads[np.asarray(stand, bool)], on_tiles) if (
        stand is not None and np.any(stand) and maybe.any()) else None
    if known is not None:
        colour, tol = known
        maybe &= np.linalg.norm(lab[ys, xs] - colour, axis=-1) >= tol
    ys, xs = ys[maybe], xs[maybe]
    colours, tols, centres = _table_colours(lab, quads, on_tiles, height) if len(ys) else \
        ([], [], [])
    if known is not None:
        # after `_without_skin_rings`, not before: less the stand's, the rings a hand
        # filled may be most of those left, and pass for a wooden table (bench.eval_rack_hands)
        colours, tols, centres = _without_stand_rings(colours, tols, centres, known)
    if not len(colours):
        return foreign, area, tile_area
    colours, tols, centres = np.array(colours), np.array(tols), np.array(centres)
    k = min(NEAREST, len(centres))
    apart = np.hypot(xs[:, None] - centres[None, :, 0], ys[:, None] - centres[None, :, 1])
    near = np.argpartition(apart, k - 1, axis=1)[:, :k] if k < len(centres) else \
        np.broadcast_to(np.arange(k), (len(xs), k))
    unlike = np.linalg.norm(lab[ys, xs][:, None, :] - colours[near], axis=-1) >= tols[near]
    foreign[ys, xs] = unlike.sum(axis=1) >= min(NEED, k)
    opened = cv2.morphologyEx(foreign.astype(np.uint8), cv2.MORPH_OPEN,
                              _disc(max(1, int(round(OPEN * height)))))
    return opened.astype(bool), area, tile_area


def measure(image_bgr: np.ndarray, corners: np.ndarray,
            stand: np.ndarray | None = None) -> Cover:
    """The cover of a BGR photo whose tiles lie at `corners` (N, 4, 2), photo pixels.
    `stand` (N,) bool: the tiles standing on a rack's stand, whose own hull `smooth_over`
    and `area_over` are measured over (None: a table photo, `smooth_over` over every tile's
    hull, no `area_over`)."""
    import cv2

    corners = np.asarray(corners, np.float32).reshape(-1, 4, 2)
    if len(corners) == 0:
        return Cover(0.0, 0)
    h, w = image_bgr.shape[:2]
    scale = WIDTH / w
    picture = cv2.resize(np.ascontiguousarray(image_bgr), (WIDTH, max(1, round(h * scale))),
                         interpolation=cv2.INTER_AREA)
    quads = corners * scale
    # Worked out once: the three steps look at the same tiles and colours.
    geometry = _tiles_geometry(picture.shape, quads)
    lab_full = _lab(picture)
    foreign, area, tile_area = foreign_mask(picture, quads, geometry, lab_full, stand)
    n, pieces = cv2.connectedComponents(foreign.astype(np.uint8))
    inside = np.bincount(pieces[foreign & area], minlength=n)[1:] if n > 1 else np.zeros(1)
    candidates = np.nonzero(inside >= MAX_AREA * tile_area)[0]
    if len(candidates):
        height, on_tiles = geometry[:2]
        lab = lab_full.copy()
        lab[..., 0] *= LIGHTNESS_WEIGHT
        for i in candidates:
            if _outline(lab, on_tiles, height, pieces == i + 1) < OUTLINE:
                inside[i] = 0  # no edge against the table around it: a shade or a grain
    hull = None if stand is None else _rows_band(picture.shape, quads[np.asarray(stand)]
                                                 if np.any(stand) else quads)
    area_over = over_stand = None
    if hull is not None:
        # a foreign piece counts on a rack photo where it reaches into the stand's rows,
        # grown by `HULL_GROW`: a hand over a row's end tile hides it from the hull
        grown = cv2.dilate(hull.astype(np.uint8), _disc(max(
            1, int(round(HULL_GROW * geometry[0]))))).astype(bool)
        over = np.bincount(pieces[foreign & grown], minlength=n)[1:] if n > 1 else np.zeros(1)
        area_over = float(inside[over >= SMOOTH_IN * tile_area].max(initial=0)) / max(
            tile_area, 1.0)
        from vision.game.stand_body import over_stand as body  # it builds on this module

        over_stand = body(picture, quads, np.asarray(stand, bool), geometry, lab_full)
    return Cover(float(inside.max(initial=0)) / max(tile_area, 1.0), len(corners),
                 *_smooth_skin(picture, quads, geometry, lab_full, hull), area_over=area_over,
                 over_stand=over_stand)


def _rows_band(shape, quads: np.ndarray, tiles: float = ROWS_REACH,
               up: np.ndarray | None = None) -> np.ndarray:
    """(H, W) bool: the hull of a stand's tiles at `quads` (N >= 1, 4, 2), stretched along
    its rows by `tiles` tile widths each way (`ROWS_REACH`): a hand that hides the tiles at
    a row's end lies past the hull of the tiles left, still over the row. The rack's `up`
    where the caller knows it, else the way its tiles agree on (none: the hull alone)."""
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    if up is None:
        way = rack_axis(q) if tiles and len(q) >= 2 else None
        if way is None:
            return _hull(shape, q.astype(np.float32))
        up = way[0]
    along = np.array([up[1], -up[0]])
    width = float(np.median(np.linalg.norm(q[:, 1] - q[:, 0], axis=1)))
    reach = along * tiles * width
    return _hull(shape, np.concatenate([q - reach, q, q + reach]).astype(np.float32))


def _hull(shape, quads: np.ndarray) -> np.ndarray:
    """(H, W) bool: the convex hull of the tiles at `quads` (N >= 1, 4, 2)."""
    import cv2

    hull = np.zeros(shape[:2], np.uint8)
    cv2.fillConvexPoly(hull, cv2.convexHull(quads.reshape(-1, 2).astype(np.float32))
                       .astype(np.int32), 1)
    return hull.astype(bool)


def _outline(lab: np.ndarray, on_tiles: np.ndarray, height: float, piece: np.ndarray) -> float:
    """How far the colour just inside a foreign `piece` lies from the colour just outside
    it (medians of bands `EDGE` tile heights wide, `on_tiles` left out) in `lab` (the
    picture in Lab, lightness counted half; tiles `height` px high). A hand has an outline
    against the table; a shade falling across it, or a darker stretch of wood, fades into
    it, so its two bands are near alike."""
    import cv2

    disc = _disc(max(2, int(round(EDGE * height))))
    one = piece.astype(np.uint8)
    outer = cv2.dilate(one, disc).astype(bool) & ~piece & ~on_tiles
    inner = piece & ~cv2.erode(one, disc).astype(bool)
    if outer.sum() < 8 or inner.sum() < 8:
        return float("inf")  # no band to compare: keep the piece
    return float(np.linalg.norm(np.median(lab[inner], axis=0) - np.median(lab[outer], axis=0)))


def check(photo, detections, rack: bool = False, stand: np.ndarray | None = None) -> Cover:
    """`measure` for a photo (a BGR array or a `vision.recognition.decode.Photo`, judged on
    a decode about twice `WIDTH` wide) and its reading (`TileDetections`). On a `rack`
    photo `smooth_over` is measured over the hull of the tiles standing on the stand
    (`stand_tiles`): tiles lying by spread the hull over the table
    (docs/decisions/covered-photo.md, "The stand's hull"); `stand` (N,) gives those tiles
    where the caller has judged them already."""
    corners = np.asarray(detections.corners, np.float32).reshape(-1, 4, 2)
    if stand is None and rack and len(detections):
        stand = stand_tiles(photo, detections)
    if not rack:
        stand = None
    if not hasattr(photo, "reduced"):
        return measure(photo, corners, stand)
    image = photo.reduced(photo.reduction_for(2 * WIDTH))
    scale = np.float32([image.shape[1] / photo.width, image.shape[0] / photo.height])
    return measure(image, (corners + 0.5) * scale - 0.5, stand)


def stand_tiles(photo, detections) -> np.ndarray:
    """(N,) True for each tile standing on the stand, as `read_rack` judges before its
    own last look (`vision.game.footing.unheld`): the box rules (`off_the_rack`), turned
    round where the tiles they name off stand on a stand and the kept ones on the table
    (`stand_elsewhere`). Both gates judge a rack photo round these."""
    return ~stand_elsewhere(detections, off_the_rack(detections), photo)


def refuse_covered(photo, detections, rack: bool = False,
                   stand: np.ndarray | None = None) -> Cover:
    """The photo's cover; raises `PhotoCovered` (a PhotoError) when something lies over
    its tiles (a `rack` photo judged as the module's doc says; `stand` as `check`'s)."""
    cover = check(photo, detections, rack, stand)
    if cover.problems(rack):
        raise PhotoCovered(cover, rack)
    return cover


def read_lone_photo(reader, photo):
    """The tiles of a lone photo (no earlier frame to compare), fit to be judged: read by
    `reader`, refused when too blurred, dark or overexposed (`PhotoUnfit`) or with a hand
    over its tiles (`PhotoCovered`), both PhotoErrors. The CLI and the server's uploads
    read every table photo through it; a rack photo through `read_rack_photo`."""
    return read_checked(reader, photo)[0]


def read_checked(reader, photo, rack: bool = False):
    """(tiles, `Cover`) of a lone photo, or the PhotoError that refuses it (a `rack` photo
    judged as the module's doc says)."""
    return read_gated(reader, photo, rack)[:2]


def read_gated(reader, photo, rack: bool):
    """(tiles, `Cover`, the stand's tiles its gates judged round: `stand_tiles`, None on
    a table photo) of a lone photo, or the PhotoError that refuses it: `read_checked`
    with the stand, for `vision.game.rack.read_rack(stand=...)`."""
    from vision.recognition.quality import refuse_unfit

    detections = reader.read(photo)
    stand = stand_tiles(photo, detections) if rack and len(detections) else None
    refuse_unfit(photo, detections, stand=stand)  # both gates judge the same stand
    return detections, refuse_covered(photo, detections, rack, stand), stand


def say_doubts(reading, cover: Cover | None):
    """A rack `reading` (`vision.game.rack.RackReading`) with the gate's doubt about its
    photo said among its warnings (`DOUBT_WORDS`)."""
    if cover is not None and cover.doubts(rack=True):
        reading.warnings.append(DOUBT_WORDS)
    return reading


def read_rack_photo(reader, photo, rules=None, frame: tuple[int, int] | None = None):
    """A lone rack photo as `rummikub score` and the server read it: refused as
    `read_lone_photo` refuses, judged as a rack (`read_checked`), then
    `vision.game.rack.read_rack` with the photo, the gate's doubt said (`say_doubts`)."""
    from vision.game.rack import read_rack

    detections, cover, stand = read_gated(reader, photo, rack=True)
    if frame is None and hasattr(photo, "width"):
        frame = (photo.width, photo.height)
    return say_doubts(read_rack(detections, rules, frame=frame, photo=photo, reader=reader,
                                stand=stand), cover)

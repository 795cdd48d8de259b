"""What each tile of a rack photo stands on (issue #19): `unheld` names the tiles that
stand on neither the stand nor a tile of it.

A tile standing on the stand rests on a ledge, so what shows just under its foot in the
photo is the stand (its beam, its ledge) or the tile of the tier in front. A tile lying on
the table past the stand's end, in line with a tier, has the table under its foot. From
20-45 degrees above, such a tile is seen 0.8-0.9 as tall as the tier's (white 760,008),
too tall for the box rules of `vision.game.stand`; the pixels under it tell. The stand's
colour is learnt from under the rack's middle tiles, so a black, grey or white stand
all serve, and where the table looks like the stand nothing is named. A tile whose foot
shows nothing that holds it is still held where the stand shows beside it (its box boxed
past the beam: a real rack's, train/ rummy4-89). See docs/decisions/rack-tiles-only.md,
"What a tile stands on" and "A front-tier tile boxed past the beam, and the stand in its
own shade".
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.game.stand import off_the_rack, rack_axis
from vision.recognition.detections import TileDetections
from vision.recognition.geometry import tile_frames
from vision.recognition.plane_view import points_in_quads

# The strip looked at under a box's foot: down the rack from a little inside the box to
# STRIP_DEPTH of its height below it, in COLUMNS columns over the middle 2 x STRIP_ACROSS
# of its width. Half a tile reaches the beam under a box that reaches low.
STRIP_FROM, STRIP_DEPTH, STEPS = -0.05, 0.5, 9
STRIP_ACROSS, COLUMNS = 0.3, 7
# The stand's colour: the median (8-bit Lab) under the foot of the kept tiles whose strip
# is far (FAR) from the table's colour (the picture's median outside the boxes, on a GRID x
# GRID grid), where at least MIN_ANCHORS are and STAND_SHARE of them agree within NEAR.
MIN_ANCHORS = 3
STAND_SHARE = 0.6
GRID = 24
# A point under a foot is the stand within NEAR of its colour, surely not within FAR.
NEAR = 30.0
FAR = 60.0
# Only a dark stand is judged (8-bit Lab lightness at most this): a light one's faces in
# light and in its own shade lie further apart than the table from either (white 700,007).
STAND_DARK = 100.0
# ...and only where the table lies at least CONTRAST from the stand: a dark stand's beam
# in a spot light strays as far from the colour learnt in its shade as a wooden table
# does (rummy_green 608,101: the lit beam 65-92 from it, the table 83; the white ranges'
# tables 150 and more). Chosen over 0 and 120: docs/decisions/rack-tiles-only.md.
CONTRAST = 100.0
# A tile is held by nothing where at least JUDGED of its columns can be told (the photo's
# edge, a tile named off, or a colour between NEAR and FAR tell nothing) and at most HELD
# of those show the stand or a kept tile.
JUDGED = 0.6
HELD = 0.2
# Where the stand lies nearer the table than `CONTRAST`, a grey stand (chroma at most
# NEUTRAL under 3 or more kept tiles) on a coloured table (chroma at least COLOURED, and
# as far from the stand in hue) is judged by hue alone (`_looks_by_hue`): black plastic
# lit or in shade stays grey, wood does not (white 720,018 and 780,017: a black stand on
# dark and on orange wood, 40 and 43-52 apart in Lab). Measured at 7/22, 10/18 and 14/14:
# no stand tile named off in any set; rack-tiles-only.md, "A grey stand on a coloured
# table".
NEUTRAL = 10.0
COLOURED = 18.0
# A tile whose foot shows no hold is still held where the stand or a held tile shows beside
# the lower half of its box on each side (`_held_beside`): the detector boxes a front
# tier's tile a little long now and then, its box's foot past the beam, and the strip
# under it sees the table (real train/ rummy4-89's R4, boxed 1.2 as tall as its tier's);
# a tile lying past the stand's end has the table, or a tile lying there, on its outer side.
# Looked at BESIDE_OUT of its width out from each side, at BESIDE_DOWN of its height from
# its top; a side shows the stand where at least BESIDE_SHARE of its points lie on no box
# and are the stand's colour (a stretch of it, not the shadow in a narrow gap between
# tiles lying side by side: white 710,014 upright), a held tile where most of them lie on
# a held tile's box.
BESIDE_OUT = (0.1, 0.2, 0.3)
BESIDE_DOWN = (0.55, 0.7, 0.85)
BESIDE_SHARE = 2 / 3
# ...and no lighter than this (8-bit Lab lightness): only a dark stand is judged, and a
# white tile's face beside a box is as grey in hue as a black stand (white 710,014).
BESIDE_DARK = 150.0
# A joker is judged only where its box is at least WHOLE_BOX as tall as the kept boxes'
# median: the detector boxes a joker's picture, and under that box lies the rest of its
# own face (white 770,015: a logo joker boxed by its circle, 0.52 as tall as its tier).
WHOLE_BOX = 0.8
MIN_TILES = 4
# The tiles taken for a stand elsewhere box at least this share of the kept tiles' median
# height: a stand farther from the phone than a row lying nearer boxes shorter (0.58-1.09
# where the white ranges turned round), but the letters of the beam's embossed logo, read
# as a row of small tiles standing on the stand, box a fifth (white 3,500,016 as a phone
# sharpened it: 0.18, and its two tiles were named off for eight letters; rack-tiles-only.md,
# "The beam's logo taken for the stand").
ELSEWHERE_HEIGHT = 0.4
# The photo is looked at where the tiles are at least this tall (a reduced decode of a big
# photo is enough).
TILE_PIXELS = 40


def rack_off(d: TileDetections, off: np.ndarray, photo) -> np.ndarray:
    """`off` (the box rules' tiles off the rack) after both looks under the tiles' feet:
    `stand_elsewhere`, then `unheld`, the kept tiles' strips looked at once for both."""
    kept = np.nonzero(~off)[0]
    under = _under_feet(d, kept, photo) if len(kept) else None
    turned = _stand_elsewhere(d, off, photo, under)
    if turned is not off:
        under = _under_feet(d, np.nonzero(~turned)[0], photo)
    return turned | _unheld(d, turned, under)


def stand_elsewhere(d: TileDetections, off: np.ndarray, photo) -> np.ndarray:
    """`off` turned round where the box rules took tiles lying on the table for the stand:
    nothing shows the stand under the kept tiles' feet and most of them stand on nothing
    that could be it, while the tiles named off, judged by the box rules among themselves
    (`off_the_rack`), show a dark stand apart from the table under theirs and most of them
    stand on it. Then those are the rack and every other tile lies off it; else `off` as
    it is. From high above, a row lying on the table nearer the phone is boxed taller than
    the stand's tiles and outweighs them (white 780,038: six stand tiles named off, five
    lying counted). Same colours and bounds as `unheld`; rack-tiles-only.md, "A row
    nearer the phone"."""
    kept = np.nonzero(~off)[0]
    return _stand_elsewhere(d, off, photo, _under_feet(d, kept, photo) if len(kept) else None)


def _stand_elsewhere(d: TileDetections, off: np.ndarray, photo, under) -> np.ndarray:
    """`stand_elsewhere`, with `under` (`_under_feet`) down the kept tiles' way given."""
    kept, named = np.nonzero(~off)[0], np.nonzero(off)[0]
    if len(named) < MIN_TILES or len(kept) == 0:
        return off
    if under is not None and _stand_colour(kept, under[3], *under[:3]) is not None:
        return off  # the kept tiles show a stand of their own: the common case, first
    rack = named[~off_the_rack(d[named])]
    if len(rack) < MIN_TILES:
        return off
    heights = tile_frames(d.corners.astype(np.float64))[4]
    if np.median(heights[rack]) < ELSEWHERE_HEIGHT * np.median(heights[kept]):
        return off
    theirs = _under_feet(d, rack, photo)
    if theirs is None:
        return off
    colour, inside, on_box, table, _beside = theirs
    if _stand_colour(kept, table, colour, inside, on_box) is not None:
        return off  # ...nor down the other tiles' way
    stand = _stand_colour(rack, table, colour, inside, on_box)
    # Apart from the table by `FAR`, not `CONTRAST`: `unheld` names tiles off by one
    # colour alone; here both sets must disagree, each its own way (780,038: 97 apart).
    if stand is None or stand[0] > STAND_DARK or np.linalg.norm(stand - table) < FAR:
        return off
    dist = np.linalg.norm(colour - stand, axis=-1)
    looks = np.where(dist < NEAR, 0, np.where(dist > FAR, 1, -1))
    turned = np.ones(len(d), bool)
    turned[rack] = False

    def firm_share(ids: np.ndarray, held: np.ndarray) -> float:
        shares = [_held_share(i, on_box[i], held, ~held, looks[i], inside[i]) for i in ids]
        told = [s for s in shares if s is not None]
        return sum(s > HELD for s in told) / len(told) if told else 0.0

    if firm_share(rack, ~turned) > 0.5 and firm_share(kept, ~off) < 0.5:
        return turned
    return off


def _under_feet(d: TileDetections, ids: np.ndarray, photo):
    """(colour (N, S, C, 3), inside (N, S, C), on_box (N, S, C, N), table colour (3,),
    beside) of the strips under every tile's foot, down the way of the tiles `ids` stand
    along, or None where they agree on none. `beside`: (colour (N, 2, P, 3), inside
    (N, 2, P), on_box (N, 2, P, N)) of the points beside each box's lower half
    (`points_beside`)."""
    q = d.corners.astype(np.float64)
    way = rack_axis(q[ids], weighted=True) or rack_axis(q[ids])
    if way is None:
        return None
    image, scale = _pixels(photo, d)
    points = points_under_feet(q, way[0])  # (N, S, C, 2)
    colour, inside = _colours(image, points * scale)
    side = points_beside(q, way[0])  # (N, 2, P, 2)
    side_colour, side_inside = _colours(image, side * scale)
    return (colour, inside, _on_boxes(points, q), _table_colour(image, q * scale),
            (side_colour, side_inside, _on_boxes(side, q)))


def unheld(d: TileDetections, off: np.ndarray, photo) -> np.ndarray:
    """(N,) True for each tile not in `off` (named off the rack already) that stands on
    neither the stand nor a kept tile: under its foot, down the rack, lies something far
    from the stand's colour in most of its columns. `photo`: a BGR array or a
    `vision.recognition.decode.Photo` in `d`'s pixels. Judged only on a dark stand that
    stands apart from the table (`STAND_DARK`, `CONTRAST`), or a grey one on a coloured
    table, by hue (`_looks_by_hue`)."""
    kept = np.nonzero(~off)[0]
    return _unheld(d, off, _under_feet(d, kept, photo) if len(kept) >= MIN_TILES else None)


def _unheld(d: TileDetections, off: np.ndarray, under) -> np.ndarray:
    """`unheld`, with `under` (`_under_feet`) down the kept tiles' way given."""
    out = np.zeros(len(d), bool)
    kept = np.nonzero(~off)[0]
    if len(kept) < MIN_TILES or under is None:
        return out
    colour, inside, on_box, table, beside = under
    q = d.corners.astype(np.float64)
    stand = _stand_colour(kept, table, colour, inside, on_box)
    if stand is not None and stand[0] <= STAND_DARK and np.linalg.norm(stand - table) >= CONTRAST:
        def look(c: np.ndarray) -> np.ndarray:
            # (...): the stand's colour there (0), surely not the stand's (1), neither (-1)
            dist = _from_stand(c, stand, table)
            return np.where(dist < NEAR, 0, np.where(dist > FAR, 1, -1))
    else:
        look = _looks_by_hue(kept, table, colour, inside, on_box)
        if look is None:
            return out
    looks = look(colour)
    side_looks = np.where(beside[0][..., 0] <= BESIDE_DARK, look(beside[0]), -1)
    heights = tile_frames(q)[4]
    jokers = np.array([c == "J" for c in d.codes], bool)
    judged = ~jokers | (heights >= WHOLE_BOX * float(np.median(heights[~off])))
    while True:  # in turn: a tile lying on one named loses its hold with it
        kept = ~off & ~out
        loose, firm = np.zeros(len(q), bool), np.zeros(len(q), bool)
        for i in np.nonzero(kept & judged)[0]:
            share = _held_share(i, on_box[i], kept, off | out, looks[i], inside[i])
            loose[i] = share is not None and share <= HELD
            firm[i] = share is not None and share > HELD
        if not loose.any() or not firm.any():  # no tile seen on the stand: name none
            return out
        loose &= ~_held_beside(loose, side_looks, beside[1], beside[2], firm)
        if not loose.any():
            return out
        out |= loose


def _from_stand(colour: np.ndarray, stand: np.ndarray, table: np.ndarray) -> np.ndarray:
    """How far colours (..., 3) lie from the `stand`'s (8-bit Lab), the part of the way that
    leads further from the `table` than the stand left out: the stand in its own shade is
    darker still, never the table (the colour learnt under the feet mixes a lit lip with
    the shaded ledge: a real black rack's ledge lay 60-70 below it, train/ rummy4-87 tilted,
    rummy4-90 brightened; rack-tiles-only.md, "... and the stand in its own shade")."""
    step = table - stand
    way = step / max(float(np.linalg.norm(step)), 1e-6)
    off = colour - stand
    along = off @ way
    across = off - along[..., None] * way
    return np.sqrt(np.maximum(along, 0.0) ** 2 + (across ** 2).sum(axis=-1))


def _chroma(lab: np.ndarray) -> np.ndarray:
    """The chroma (...) of 8-bit Lab colours (..., 3): how far from grey."""
    return np.linalg.norm(lab[..., 1:] - 128.0, axis=-1)


def _looks_by_hue(kept: np.ndarray, table: np.ndarray, colour: np.ndarray, inside: np.ndarray,
                  on_box: np.ndarray):
    """A function of colours (..., 3) to `unheld`'s looks (the stand 0, surely not 1,
    neither -1), told by hue alone: where the table is coloured (`COLOURED`) and at least
    `MIN_ANCHORS` kept tiles show a dark grey (`STAND_DARK`, `NEUTRAL`) under their feet,
    a point is the stand within a third of the way in hue (a*, b*) from that grey to the
    table's, surely not beyond two thirds, at any lightness: a spot light or a shade
    changes a black stand's lightness, not its hue. Else None."""
    if _chroma(table) < COLOURED:
        return None
    medians = _under_kept(kept, colour, inside, on_box)
    if len(medians) == 0:
        return None
    anchor = (medians[:, 0] <= STAND_DARK) & (_chroma(medians) <= NEUTRAL)
    if anchor.sum() < MIN_ANCHORS:
        return None
    stand = np.median(medians[anchor], axis=0)
    apart = float(np.linalg.norm(stand[1:] - table[1:]))
    if apart < COLOURED:
        return None

    def look(c: np.ndarray) -> np.ndarray:
        hue = np.linalg.norm(c[..., 1:] - stand[1:], axis=-1)
        return np.where(hue < apart / 3, 0, np.where(hue > 2 * apart / 3, 1, -1))

    return look


def _under_kept(kept: np.ndarray, colour: np.ndarray, inside: np.ndarray,
                on_box: np.ndarray) -> np.ndarray:
    """(K, 3) the median colour of the upper two thirds of the strip (just under the foot)
    of each kept tile whose strip there is at least half free: in the photo, on no box."""
    near = on_box.shape[1] * 2 // 3
    medians = []
    for i in kept:
        free = inside[i, :near] & ~on_box[i, :near].any(axis=-1)
        if free.sum() >= 0.5 * free.size:
            medians.append(np.median(colour[i, :near][free], axis=0))
    return np.array(medians).reshape(-1, 3)


def _held_share(i: int, on_box: np.ndarray, held: np.ndarray, named: np.ndarray,
                looks: np.ndarray, inside: np.ndarray) -> float | None:
    """The share of tile `i`'s told columns that show the stand or a held tile under its
    foot, or None where too few columns can be told (`JUDGED`)."""
    others = held.copy()
    others[i] = False
    on_held = on_box[..., others].any(axis=-1)  # (S, C)
    on_named = on_box[..., named].any(axis=-1)
    on_own = on_box[..., i]
    free = inside & ~on_named & ~on_own & ~on_held
    stand = free & (looks == 0)
    table = free & (looks == 1)
    column_held = (on_held | stand).any(axis=0)
    column_table = table.sum(axis=0) >= 0.5 * (inside & ~on_own).sum(axis=0).clip(1)
    told = column_held | column_table
    if told.sum() < JUDGED * COLUMNS:
        return None
    return float(column_held.sum() / told.sum())


def _held_beside(loose: np.ndarray, looks: np.ndarray, inside: np.ndarray,
                 on_box: np.ndarray, firm: np.ndarray) -> np.ndarray:
    """(N,) True for each `loose` tile that stands in the stand by what shows beside its
    box's lower half (`looks` (N, 2, P) as `unheld`'s, `inside` (N, 2, P), `on_box`
    (N, 2, P, N); `firm` the tiles seen held): the stand or a held tile on each side
    (`BESIDE_SHARE` of a side's points on no box and the stand's colour, or most of them
    on a held tile's box). Loose tiles side by side are judged as one: two of a tier's
    tiles boxed past the beam next to each other hold where the stand or a held tile
    shows beyond both ends of the pair (real rummy3-9 upright)."""
    n = len(loose)
    sides: dict[int, list] = {}
    for i in np.nonzero(loose)[0]:
        shows = []
        for side in range(2):
            others = np.ones(n, bool)
            others[i] = False
            on_any = on_box[i, side][:, others].any(axis=-1)
            stand = inside[i, side] & ~on_any & (looks[i, side] == 0)
            on_loose = [j for j in np.nonzero(loose & others)[0]
                        if (inside[i, side] & on_box[i, side][:, j]).mean() > 0.5]
            if stand.mean() >= BESIDE_SHARE:
                shows.append("stand")
            elif (inside[i, side] & on_box[i, side][:, firm & others].any(axis=-1)).mean() > 0.5:
                shows.append("held")
            elif on_loose:
                shows.append(int(on_loose[0]))  # beside another loose tile: judged together
            else:
                shows.append(None)
        sides[int(i)] = shows
    # runs of loose tiles side by side, each held where every side out of it holds
    group = {i: i for i in sides}

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i, shows in sides.items():
        for j in shows:
            if isinstance(j, int):
                group[root(i)] = root(j)
    held = np.zeros(n, bool)
    runs: dict[int, list[int]] = {}
    for i in sides:
        runs.setdefault(root(i), []).append(i)
    for run in runs.values():
        out_sides = [x for i in run for x in sides[i]
                     if not (isinstance(x, int) and x in run)]
        if out_sides and all(x in ("stand", "held") for x in out_sides):
            held[run] = True
    return held


def _stand_colour(kept: np.ndarray, table: np.ndarray, colour: np.ndarray, inside: np.ndarray,
                  on_box: np.ndarray) -> np.ndarray | None:
    """The stand's colour (3,): the median under the feet of the kept tiles whose strip
    (its upper two thirds, just under the foot) is far (`FAR`) from the table's colour
    (`_table_colour`), where at least `MIN_ANCHORS` are and `STAND_SHARE` of them agree
    on it within `NEAR`; else None (no stand seen apart from the table)."""
    medians = _under_kept(kept, colour, inside, on_box)
    medians = medians[np.linalg.norm(medians - table, axis=1) > FAR]
    if len(medians) < MIN_ANCHORS:
        return None
    stand = np.median(medians, axis=0)
    if (np.linalg.norm(medians - stand, axis=1) < NEAR).mean() < STAND_SHARE:
        return None
    return stand


def _table_colour(image: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The median Lab colour (3,) of the BGR `image` outside the boxes `q` (in its pixels),
    on a grid of `GRID` x `GRID` points: the table, which fills most of a rack photo."""
    h, w = image.shape[:2]
    xs, ys = np.meshgrid(np.linspace(0, w - 1, GRID), np.linspace(0, h - 1, GRID))
    points = np.stack([xs.ravel(), ys.ravel()], axis=1)
    free = ~points_in_quads(points, q).any(axis=1)
    p = points[free].astype(int)
    return np.median(_lab(image[p[:, 1], p[:, 0]]), axis=0)


def points_under_feet(quads: np.ndarray, up: np.ndarray,
                      band: tuple[float, float] = (STRIP_FROM, STRIP_DEPTH), steps: int = STEPS,
                      across: float = STRIP_ACROSS, columns: int = COLUMNS) -> np.ndarray:
    """(N, steps, columns, 2) the points under the foot of each tile boxed `quads` (N, 4,
    2), down the rack (`up` is the rack's up): from `band[0]` to `band[1]` of its height
    below its foot, over the middle 2 x `across` of its width, a row of columns per step.
    Also where the cover gate learns a stand's colour (`vision.game.cover`)."""
    right = np.array([-up[1], up[0]])
    centre = quads.mean(axis=1)  # (N, 2)
    depth = (quads - centre[:, None]) @ -up  # (N, 4)
    width, height = np.ptp(quads @ right, axis=1), np.ptp(depth, axis=1)
    foot = centre - up * depth.max(axis=1)[:, None]
    a = np.linspace(*band, steps)[None, :, None, None]
    b = np.linspace(-across, across, columns)[None, None, :, None]
    return (foot[:, None, None] - up * (height[:, None, None, None] * a)
            + right * (width[:, None, None, None] * b))


def points_beside(quads: np.ndarray, up: np.ndarray) -> np.ndarray:
    """(N, 2, P, 2) points beside each box's lower half (left side first), `up` the rack's
    up: `BESIDE_OUT` of its width out from each side, at `BESIDE_DOWN` of its height
    from its top."""
    right = np.array([-up[1], up[0]])
    centre = quads.mean(axis=1)
    across = (quads - centre[:, None]) @ right  # (N, 4)
    down = (quads - centre[:, None]) @ -up
    width, height = np.ptp(across, axis=1), np.ptp(down, axis=1)
    top = centre + up * (-down.min(axis=1))[:, None]
    out = np.array(BESIDE_OUT)[:, None]
    at = np.array(BESIDE_DOWN)[None, :]
    grid = [(s * (0.5 + out) * np.ones_like(at)).ravel() for s in (-1, 1)]
    depth = (np.ones_like(out) * at).ravel()
    sides = []
    for g in grid:
        sides.append(top[:, None] + right * (width[:, None, None] * g[None, :, None])
                     - up * (height[:, None, None] * depth[None, :, None]))
    return np.stack(sides, axis=1)


def _on_boxes(points: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(N, S, C, Q) whether each tile's strip point lies in each box: only the boxes whose
    bounds meet the strip's are tested (a strip meets a few boxes of dozens)."""
    n, q = len(points), len(quads)
    out = np.zeros((*points.shape[:3], q), bool)
    lo, hi = quads.min(axis=1), quads.max(axis=1)  # (Q, 2)
    for i in range(n):
        p = points[i].reshape(-1, 2)
        meet = np.nonzero(((lo <= p.max(axis=0)) & (hi >= p.min(axis=0))).all(axis=1))[0]
        if len(meet):
            out[i][..., meet] = points_in_quads(p, quads[meet]).reshape(*points.shape[1:3],
                                                                         len(meet))
    return out


def _colours(image: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Lab colour of the BGR `image` at each point (..., 3) and whether it lies in the
    picture (...)."""
    p = np.round(points).astype(int)
    h, w = image.shape[:2]
    inside = (p[..., 0] >= 0) & (p[..., 0] < w) & (p[..., 1] >= 0) & (p[..., 1] < h)
    return _lab(image[p[..., 1].clip(0, h - 1), p[..., 0].clip(0, w - 1)]), inside


def _lab(bgr: np.ndarray) -> np.ndarray:
    """8-bit Lab (..., 3) float32 of BGR pixels (..., 3): only the pixels looked at are
    converted."""
    bgr = np.ascontiguousarray(bgr, np.uint8)
    lab = cv2.cvtColor(bgr.reshape(-1, 1, 3), cv2.COLOR_BGR2LAB)
    return lab.reshape(bgr.shape).astype(np.float32)


def _pixels(photo, d: TileDetections) -> tuple[np.ndarray, float]:
    """(BGR image, its pixels per `d`'s pixel): of a `Photo`, the coarsest decode already
    made where the tiles stay `TILE_PIXELS` tall (the reader's own: no second decode), else
    the coarsest where they do; an array as it is."""
    if not hasattr(photo, "reduced"):
        return np.asarray(photo), 1.0
    height = float(np.median(tile_frames(d.corners)[4])) if len(d) else 0.0
    sharp = [f for f in (1, 2, 4, 8) if f == 1 or height / f >= TILE_PIXELS]
    made = [f for f in sharp if f in photo.decoded()]
    image = photo.reduced(max(made or sharp))
    return image, image.shape[1] / photo.width

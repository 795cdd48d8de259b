"""A rack photo -> its tiles in rows and the rack's penalty; the start-of-game draw.

`read_rack(detections, rules)` orders the tiles in rows (top row first, left to right),
re-reads a tile read turned round against the rest of the rack when its reading the
rack's way is plausible (the lip hides the foot of the face, which is what tells a 6 from
a 9), re-reads a tile when the rack holds more copies than the edition has and another
reading is plausible, and sums the penalty with the referee's `rack_penalty` (a joker 25
or 30 by edition). `start_order(detections, players)` reads the tiles drawn at the start,
one per player from left to right, and says who starts (RULES.md section 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vision.recognition.detections import TileDetections
from vision.recognition.geometry import TablePlane, tile_frames

# A reading the rack's way round is taken when it holds at least this share of the
# probability of the reading as drawn (tuned on rendered racks 90,000+, see bench).
RACK_WAY_RATIO = 0.01
COS_ALONG = np.cos(np.radians(25))  # a tile within 25 degrees of the rack's way lies on it
# A tile standing on the rack faces within this of the rack's way, on the rack's plane:
# the real valid/ racks' tiles lie within 4 degrees of it, a rack seen from the side at 35
# degrees (bench.eval_geometry) within 16. Tiles lying on the table face any way.
COS_ON_RACK = np.cos(np.radians(20))
# A stand has one to three tiers, each about a tile height (and a little) from the next: a
# row of tiles further than this many tile heights from the nearest tier lies on the table
# behind or before the stand (see docs/decisions/rack-tiers.md).
TIER_STEP = 1.7
MAX_TIERS = 3
# The stand's rows split where the tiles' depth down the rack jumps by this many tile
# heights: a row seen at an angle slants, its depths spread without a gap; a tier's step is
# 0.8-1.1 tile heights (docs/decisions/rack-tiers.md).
ROW_GAP = 0.3
# A tile lying flat on the table is seen foreshortened: from 20-45 degrees above, 0.35-0.84
# of the height of a tile standing on a stand leaning back 6-18 degrees. A row whose tiles
# are shorter than this share of the tiers' is not a tier (rendered tiers: 0.91-1.05).
FLAT_SHARE = 0.8
# ...except a row behind the tiers whose boxes' feet meet the tops of the boxes in front
# within this many of their heights: a tier the one in front hides, its boxes as short as
# what shows of it (rack-tiles-only.md).
HIDE_GAP = 0.1
# A tile in a tier whose box is shorter than this share of the height a standing tile's box
# has at its place (heights fit over the tiers' tiles, `_squashed`) lies flat beside or
# behind the stand, unless the tier in front hides its foot (within `SQUASHED_HIDE_GAP`
# of its height): rack-tiles-only.md.
FLAT_TILE_SHARE = 0.8
FIT_BAND = 0.15
FIT_TILES = 4
SQUASHED_HIDE_GAP = 0.4
FIRST_FIT_BAND = 0.3
SHORT_SHARE = 0.5
# A tier's tiles stand on the ledge above and behind the tier in front, their feet hidden
# by it: in the photo a tier's boxes' feet reach down to the tops of the boxes of the tier
# in front, or over them. A row whose boxes' tops lie further than this many box heights
# below the feet of the lowest tier (or whose feet lie that far above the tops of the
# highest) lies on the table before or behind the stand (rack-tiles-only.md).
TIER_GAP = 0.45


@dataclass
class RackReading:
    detections: TileDetections
    rows: list[list[int]] = field(default_factory=list)
    total: int = 0
    warnings: list[str] = field(default_factory=list)
    edge: list[int] = field(default_factory=list)  # at the photo's edge: may be cut off
    # tiles lying on the table beside or behind the rack: named, never counted
    off_rack: list[int] = field(default_factory=list)

    @property
    def codes(self) -> list[str]:
        return [self.detections.codes[i] for row in self.rows for i in row]

    def to_json(self, photo: str | None = None) -> dict:
        out = {"photo": photo} if photo is not None else {}
        out.update({
            "tiles": self.detections.to_json(),
            "rows": [[int(i) for i in row] for row in self.rows],
            "total": int(self.total),
            "warnings": list(self.warnings),
            "edge_tiles": [int(i) for i in self.edge],
            "off_rack": [int(i) for i in self.off_rack],
        })
        return out


def rows_of(detections: TileDetections, plane: bool = True) -> list[list[int]]:
    """Tile ids in rows, top row first, each left to right, as the rack holder sees them.

    "Down" is the tiles' own down axis (their mean), so a rack photographed at an angle
    still splits into its rows; a new row starts where the centres jump down by half a tile.
    With `plane`, the rows are split on the rack's plane estimated from the tiles
    (`vision.recognition.geometry.TablePlane`): seen from the side, a rack's rows slant towards each
    other and its far tiles shrink, so "half a tile down" in the photo is not the same
    everywhere; on the plane it is. A photo seen from the front keeps the photo (the plane
    is then the identity).
    """
    n = len(detections)
    if n == 0:
        return []
    corners = detections.corners
    if plane:
        table_plane = TablePlane.from_tiles(corners)
        if table_plane.tilted:
            corners = table_plane.to_plane(corners)
    centres, _right, down, _w, heights = tile_frames(corners)
    axis_down = down.sum(axis=0)
    if np.linalg.norm(axis_down) < 0.5 * n:  # no common way up: use the photo's
        axis_down = np.array([0.0, 1.0])
    axis_down = axis_down / np.linalg.norm(axis_down)
    axis_right = np.array([axis_down[1], -axis_down[0]])
    depth = centres @ axis_down
    along = centres @ axis_right
    step = 0.5 * float(np.median(heights))
    order = np.argsort(depth)
    rows, current = [], [int(order[0])]
    for i in order[1:]:
        if depth[i] - np.mean(depth[current]) > step:
            rows.append(current)
            current = []
        current.append(int(i))
    rows.append(current)
    return [sorted(row, key=lambda i: along[i]) for row in rows]


def read_rack(detections: TileDetections, rules=None, *,
              frame: tuple[int, int] | None = None, photo=None, reader=None) -> RackReading:
    """The tiles of one rack photo, re-read with the rack's way and the copy counts, and
    their total. `frame`: the photo's (width, height), to warn about tiles its edge may cut.
    With the `photo` (a BGR array or a `Photo`) and the `reader` (a `TileReader`) that read
    it, each tile standing on the stand is first read again in its box moved down to the
    face (`vision.game.back_tier.recrop_stand`: a box reaching above the face reads a 6 as
    a 9).

    Tiles lying on the table beside or behind the rack (`off_the_rack`) keep their reading
    and their ids in `detections`, but are in no row, not in the total, and named in
    `off_rack` and a warning."""
    import re

    from referee import DEFAULT_RULES, Tile, copy_problems, rack_penalty
    from vision.game.table import _fix_copies, _read_turned, edge_tiles, edge_warning

    rules = rules or DEFAULT_RULES
    labels = tuple(detections.labels)
    off = off_the_rack(detections)
    if photo is not None and hasattr(reader, "classify_at"):
        from vision.game.back_tier import recrop_stand

        detections, _recropped = recrop_stand(detections, ~off, photo, reader)
    on = np.nonzero(~off)[0]
    ids = detections.class_ids.astype(np.int64).copy()
    corners = detections.corners.copy()
    warnings: list[str] = [off_rack_warning(detections, off)] if off.any() else []
    rereads: dict[int, tuple[str, str]] = {}
    _read_turned([(i, k) for i, k in _face_the_rack(detections) if not off[i]], ids, corners,
                 labels, rereads, warnings, "a rack all face one way")
    # The copy counts are the rack's: its tiles only (ids of the rack's own numbering
    # mapped back to the photo's in the words).
    rack_ids, rack_rereads, rack_words = ids[on], {}, []
    for _round in range(8):
        problems = copy_problems([Tile.from_code(labels[k]) for k in rack_ids], rules)
        if not problems:
            break
        if not _fix_copies(rack_ids, detections.class_probs[on], labels, [], rules,
                           rack_rereads, rack_words):
            rack_words.extend(f"impossible count: {p}" for p in problems)
            break
    ids[on] = rack_ids
    for j, (was, now) in rack_rereads.items():
        rereads[int(on[j])] = (rereads.get(int(on[j]), (was,))[0], now)
    warnings.extend(re.sub(r"^tile (\d+) ", lambda m: f"tile {on[int(m[1])]} ", w)
                    for w in rack_words)
    fixed = TileDetections(corners, detections.detector_scores,
                           detections.class_probs, ids, labels, detections.uncertain.copy())
    for i in rereads:
        fixed.uncertain[i] = True
    edge = [i for i in edge_tiles(fixed, frame) if not off[i]]
    warnings.extend(edge_warning(edge, "rack"))
    doubtful = [int(i) for i in np.nonzero(fixed.uncertain & ~off)[0]]
    if doubtful:
        warnings.append(f"{len(doubtful)} tile(s) read with low confidence: ids "
                        f"{', '.join(map(str, doubtful))}; check the total")
    total = rack_penalty([Tile.from_code(fixed.codes[i]) for i in on], rules)
    rows = [[int(on[j]) for j in row] for row in rows_of(fixed[on])] if len(on) else []
    return RackReading(fixed, rows, total, warnings, edge, [int(i) for i in np.nonzero(off)[0]])


def off_rack_warning(d: TileDetections, off: np.ndarray) -> str:
    ids = [int(i) for i in np.nonzero(off)[0]]
    codes = " ".join(d.codes[i] for i in ids)
    n = len(ids)
    return (f"{n} tile{'s lie' if n != 1 else ' lies'} off the rack: not counted "
            f"({codes}; ids {', '.join(map(str, ids))})")


def off_the_rack(d: TileDetections) -> np.ndarray:
    """(N,) True for each tile lying on the table beside or behind the rack, not standing
    on it: one that faces another way than the rack's tiles (they all face its way, up or
    turned round), one in a row of tiles that is not one of the stand's tiers (`_tiers`:
    a chain of up to three rows, each within `TIER_STEP` of the next, from the row with
    the most tile height), or one in a tier whose box is too short for a standing tile at
    its place (`FLAT_TILE_SHARE`). Judged only where most tiles agree on a way (else all
    False).

    Judged twice, in the photo and on the plane estimated from the tiles (as `rows_of`),
    and the view that keeps more tile height on the rack (its tiles' box heights in the
    photo, summed: a row of flat tiles weighs less than the stand's) is taken: seen from
    the side, a rack's up vectors fan out in the photo and only the plane holds them
    parallel; but tiles standing on a stand and lying on the table lie on two planes, and
    one plane fit to both can misplace the stand's rows (docs/decisions/rack-tiers.md)."""
    n = len(d)
    if n < 3:
        return np.zeros(n, bool)
    q = d.corners.astype(np.float64)
    off = _off_in_view(q)
    plane = TablePlane.from_tiles(q)
    if plane.tilted:
        on_plane = _off_in_view(plane.to_plane(q).reshape(-1, 4, 2))
        tall = tile_frames(q)[4]  # in the photo: the stand's tiles stand taller than flat ones
        if tall[~on_plane].sum() > tall[~off].sum():
            off = on_plane
    return off


def _off_in_view(q: np.ndarray) -> np.ndarray:
    """`off_the_rack` judged on corners `q` (N, 4, 2) in one view."""
    n = len(q)
    off = np.zeros(n, bool)
    up = (q[:, 0] + q[:, 1]) / 2 - (q[:, 3] + q[:, 2]) / 2
    up = up / np.maximum(np.linalg.norm(up, axis=1, keepdims=True), 1e-9)
    axis = np.linalg.eigh(up.T @ up)[1][:, -1]  # up vectors as lines: turned tiles count
    along = up @ axis
    aligned = np.abs(along) >= COS_ON_RACK
    if aligned.sum() < max(3, 0.5 * n):
        return off
    off |= ~aligned
    # The rack's rows, along its way: depth down the rack, split at gaps (`ROW_GAP`).
    if (along[aligned] >= 0).sum() < (along[aligned] < 0).sum():
        axis = -axis
    centres, _r, _d, _w, heights = tile_frames(q)
    depth = -(centres @ axis)  # up the rack is less deep
    height = float(np.median(heights[aligned]))
    idx = np.nonzero(aligned)[0]
    idx = idx[np.argsort(depth[idx])]
    rows, current = [], [idx[0]]
    for prev, i in zip(idx[:-1], idx[1:], strict=True):
        if depth[i] - depth[prev] > ROW_GAP * height:
            rows.append(current)
            current = []
        current.append(i)
    rows.append(current)
    if len(rows) <= 1:
        return off
    foot_hidden = np.zeros(n, bool)
    foot_hidden[idx] = _foot_hidden(q, axis, idx, idx)
    ends = -(q @ axis)  # (N, 4): down the rack is deeper
    for k in set(range(len(rows))) - set(_tiers(rows, depth, heights, height, foot_hidden,
                                                   ends.min(axis=1), ends.max(axis=1))):
        off[rows[k]] = True
    kept = np.nonzero(~off)[0]
    squashed = kept[_squashed(centres[kept], heights[kept])]
    if len(squashed):
        off[squashed[~_foot_hidden(q, axis, squashed, kept, SQUASHED_HIDE_GAP)]] = True
    return off


def _squashed(place: np.ndarray, heights: np.ndarray) -> np.ndarray:
    """Indices of the tiles whose box is shorter than `FLAT_TILE_SHARE` of the height a
    standing tile's box has at its place (`place`, (N, 2)): box height fit as a plane over
    the photo (perspective shrinks a stand's tiles smoothly along it), first on the tiles
    within `FIRST_FIT_BAND` of the median height, then refit on those within `FIT_BAND`
    of the fit. Where the tiles the fit leaves above it outweigh those it keeps (box
    heights squared: flat tiles beside a short stand outnumber its tiles), it starts again
    from the median weighted so (`_tall_median`). Where fewer than `FIT_TILES` agree on a
    fit, `_much_shorter`."""
    n = len(heights)
    if n < FIT_TILES:
        return _much_shorter(heights)
    # the first fit on the tiles near the median height: a few flat ones at the end of a
    # row would tilt a fit over all of them
    share = _fit_share(place, heights, float(np.median(heights)))
    if share is not None:
        kept, above = np.abs(share - 1) < FIT_BAND, share >= 1 + FIT_BAND
        if (heights[above] ** 2).sum() > (heights[kept] ** 2).sum():
            share = _fit_share(place, heights, _tall_median(heights))
    if share is None:
        return _much_shorter(heights)
    return np.nonzero(share < FLAT_TILE_SHARE)[0]


def _fit_share(place: np.ndarray, heights: np.ndarray, start: float) -> np.ndarray | None:
    """Each box's height over the plane fit (`_squashed`) from the tiles within
    `FIRST_FIT_BAND` of `start`; None where fewer than `FIT_TILES` agree."""
    a = np.c_[np.ones(len(heights)), place]
    use = np.nonzero(np.abs(heights / start - 1) < FIRST_FIT_BAND)[0]
    for _round in range(3):
        if len(use) < FIT_TILES:
            return None
        coef = np.linalg.lstsq(a[use], heights[use], rcond=None)[0]
        share = heights / np.maximum(a @ coef, 1e-9)
        use = np.nonzero(np.abs(share - 1) < FIT_BAND)[0]
    return share if len(use) >= FIT_TILES else None


def _tall_median(heights: np.ndarray) -> float:
    """The median of box heights weighted by their squares: a few standing tiles outweigh
    more flat ones beside them (seen nearer and taller, `_tiers`)."""
    order = np.sort(heights)
    weight = np.cumsum(order ** 2)
    return float(order[np.searchsorted(weight, 0.5 * weight[-1])])


def _much_shorter(heights: np.ndarray) -> np.ndarray:
    """Where too few tiles agree on a height for `_squashed`'s fit: the indices of the
    boxes shorter than `SHORT_SHARE` of the tallest (perspective alone does not shrink a
    stand's tiles that much along it)."""
    if len(heights) < 2:
        return np.zeros(0, int)
    return np.nonzero(heights < SHORT_SHARE * heights.max())[0]


def _foot_hidden(q: np.ndarray, axis: np.ndarray, ids: np.ndarray,
                 kept: np.ndarray, gap: float = HIDE_GAP) -> np.ndarray:
    """(len(ids),) True for each tile `ids` whose box's foot meets the top of a `kept` box
    in front of it (beside it along the rack, further down): a tier whose foot the tier in
    front hides, its box as short as its visible part."""
    depth_of = -(q @ axis)  # (N, 4): down the rack is deeper
    top, foot = depth_of.min(axis=1), depth_of.max(axis=1)
    height = foot - top
    along = q.mean(axis=1) @ np.array([axis[1], -axis[0]])
    width = np.linalg.norm(q[:, 1] - q[:, 0], axis=1)
    i, j = ids[:, None], kept[None, :]
    beside = np.abs(along[i] - along[j]) < 0.5 * (width[i] + width[j])
    below = top[j] > top[i] + 0.5 * height[i]
    meets = np.abs(foot[i] - top[j]) < gap * height[i]
    return (beside & below & meets).any(axis=1)


def _tiers(rows: list, depth: np.ndarray, heights: np.ndarray, height: float,
           foot_hidden: np.ndarray, top: np.ndarray | None = None,
           foot: np.ndarray | None = None) -> list[int]:
    """The rows that stand on the stand: its fullest row (by tile height: see below), then
    row by row up and down the rack while the next row lies within a tier step of the last
    tier taken (a chain, so a three-tier stand's rows all count) and is not foreshortened
    as tiles lying flat are (`FLAT_SHARE`; a row behind whose feet the tier in front hides,
    `foot_hidden`, is exempt), at most MAX_TIERS. Of the two rows next to the tiers taken
    so far, the fuller one is taken first.

    The first tier is the row with the most tile height (tiles x their median box height):
    tiles lying flat are seen foreshortened, and a row of them behind the stand is also
    further away, so a row of them as long as the stand's weighs less (rack-tiles-only.md)."""
    level = [float(np.mean(depth[r])) for r in rows]
    tall = [float(np.median(heights[r])) for r in rows]
    fullest = max(range(len(rows)), key=lambda k: float((heights[rows[k]] ** 2).sum()))
    lo = hi = fullest
    while hi - lo + 1 < MAX_TIERS:
        tier_height = float(np.median(np.concatenate([heights[r] for r in rows[lo:hi + 1]])))
        nexts = [k for k in (lo - 1, hi + 1) if 0 <= k < len(rows)
                 and abs(level[k] - level[lo if k < lo else hi]) <= TIER_STEP * height
                 and (tall[k] >= FLAT_SHARE * tier_height
                      or k < lo and foot_hidden[rows[k]].mean() >= 0.5)
                 and (top is None or _touches(rows, k, lo, hi, top, foot, heights))]
        if not nexts:
            break
        k = max(nexts, key=lambda k: len(rows[k]))
        lo, hi = min(lo, k), max(hi, k)
    return list(range(lo, hi + 1))


def _touches(rows: list, k: int, lo: int, hi: int, top: np.ndarray, foot: np.ndarray,
             heights: np.ndarray) -> bool:
    """Whether row `k` (next to the tiers `lo`..`hi`) meets the tier next to it: the upper
    row's boxes' feet within `TIER_GAP` of their heights of the lower row's tops, or over
    them (medians over each row)."""
    upper, lower = (rows[k], rows[lo]) if k < lo else (rows[hi], rows[k])
    gap = float(np.median(top[lower]) - np.median(foot[upper]))
    return gap <= TIER_GAP * float(np.median(heights[upper]))


def _face_the_rack(d: TileDetections) -> list[tuple[int, int]]:
    """(tile, class id) for tiles read turned round against the rack whose reading the
    rack's way round is plausible and differs (a 6 seen as a 9; an 8 stays an 8)."""
    if d.flip_probs is None or len(d) < 3:
        return []
    from vision.game.back_tier import rack_way

    # the way three to one of the tiles agree on, 6s and 9s left out (they are what turns)
    axis = rack_way(d, np.arange(len(d)))
    if axis is None:
        return []
    along = d.up_vectors @ axis
    out = []
    other, share = d.other_way()
    for i in np.nonzero(along <= -COS_ALONG)[0]:
        if other[i] != d.class_ids[i] and share[i] >= RACK_WAY_RATIO:
            out.append((int(i), int(other[i])))
    return out


@dataclass
class StartDraw:
    players: list[str]
    codes: list[str]  # the tile each player drew, in player order
    starter: str | None  # None when the highest number is tied
    tied: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        from vision.recognition.labels import split_code

        drawn = []
        for name, code in zip(self.players, self.codes, strict=True):
            color, number, joker = split_code(code)
            drawn.append({"player": name, "tile": code, "color": color, "number": number,
                          "joker": joker})
        return {"drawn": drawn, "starter": self.starter, "tied": self.tied,
                "warnings": self.warnings}


def start_order(detections: TileDetections, players: list[str]) -> StartDraw:
    """Who starts: the highest number among the tiles drawn, one per player, left to right.

    A joker has no number: its player draws again along with any tie. Raises ValueError
    when the photo does not show exactly one tile per player.
    """
    if len(detections) != len(players):
        raise ValueError(f"the photo shows {len(detections)} tile(s) for {len(players)} "
                         f"player(s); lay one drawn tile per player, left to right")
    centres = detections.centers
    order = np.argsort(centres[:, 0], kind="stable")
    codes = [detections.codes[i] for i in order]
    numbers = [None if c == "J" else int(c[1:]) for c in codes]
    warnings = []
    jokers = [p for p, n in zip(players, numbers, strict=True) if n is None]
    if jokers:
        warnings.append(f"{', '.join(jokers)} drew a joker, which has no number (it cannot start)")
    values = [n for n in numbers if n is not None]
    if not values:
        return StartDraw(players, codes, None, list(players), warnings)
    best = max(values)
    top = [p for p, n in zip(players, numbers, strict=True) if n == best]
    if len(top) > 1:
        warnings.append(f"tie at {best}: {', '.join(top)} draw again")
        return StartDraw(players, codes, None, top, warnings)
    return StartDraw(players, codes, top[0], [], warnings)

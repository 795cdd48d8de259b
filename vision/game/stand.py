"""Which of a rack photo's tiles stand on the stand and which lie on the table beside or
behind it (issue #19): `off_the_rack`, judged from the boxes alone. `vision.game.rack`
leaves the tiles it names out of a rack's rows and total. See docs/decisions/
rack-tiers.md and rack-tiles-only.md.
"""

from __future__ import annotations

import numpy as np

from vision.game.tiers import FLAT_SHARE, HIDDEN_SHOWS, at_place, stand_tiers
from vision.recognition.detections import TileDetections
from vision.recognition.geometry import TablePlane, tile_frames

# A tile standing on the rack faces within this of the rack's way, on the rack's plane:
# the real valid/ racks' tiles lie within 4 degrees of it, a rack seen from the side at 35
# degrees (bench.eval_geometry) within 16. Tiles lying on the table face any way.
COS_ON_RACK = np.cos(np.radians(20))
# ...but one facing any other way stands on the stand where it stands in a kept row, as
# tall as its tiles, between two of them or next to one (centres within this many of the
# two half widths along the rack): a tile leaning, or a joker boxed turned, in or at the
# end of a tier (`_in_a_kept_row`; rendered stands, tuning seeds 600,100+: 9 more stand
# tiles counted, 1 lying one; rack-tiles-only.md, "Askew at a row's end").
ROW_NEIGHBOUR = 1.3
# ...and so does a joker at any way in such a place whose box is at least this share as
# tall as its row's: the detector boxes a joker's picture, not always its whole face (a
# smiley boxed 0.65 as tall as its tier's tiles, eval_depth's 191,001; rack-tiles-only.md,
# "A joker boxed by its picture").
JOKER_SHARE = 0.55
# ...and so does any tile named off whose box stands in a kept row between two of its
# tiles, next to each (`ROW_NEIGHBOUR`), at least this share as tall as the row: nothing
# lies flat between two tiles of a tier, but the detector boxes a tile there short and
# wide now and then (eval_depth's 195,005: 0.63 as tall, 1.2 as wide; rack-tiles-only.md,
# "A short box between two of a tier's tiles").
BETWEEN_SHARE = 0.5
# ...and so does one named off at a kept row's end, next to its end tile (a tile as tall as
# the row's), whose box is at least `END_AREA` as big as that tile's and `END_HEIGHT` as
# tall: a tier's end tile seen at an angle is boxed with its side, wide and short; a tile
# lying flat there is seen foreshortened, its box smaller (eval_depth's 195,003 K12,
# 191,004 R4; rack-tiles-only.md, "A tier's end tile boxed with its side").
END_AREA = 0.8
END_HEIGHT = 0.6
# The stand's rows split where the tiles' depth down the rack jumps by this many tile
# heights: a row seen at an angle slants, its depths spread without a gap; a tier's step is
# 0.8-1.1 tile heights (docs/decisions/rack-tiers.md).
ROW_GAP = 0.3
# Tiles at a kept row's end beyond a gap this many tile widths wide, shorter than
# `FLAT_SHARE` of the `END_NEAR` tiles across it, lie flat on the table past the stand's
# end (`_flat_beyond_a_gap`).
END_GAP = 1.0
END_NEAR = 3
# A row foreshortened as flat tiles are is still a tier where it stands behind the tiers
# and its boxes' feet meet the tops of the boxes in front within this many of their
# heights: a tier the one in front hides, its boxes as short as what shows of it
# (`_foot_hidden`; `vision.game.tiers.HIDDEN_SHOWS`; rack-tiles-only.md).
HIDE_GAP = 0.1
# Of the photo's view and the plane's, the one that keeps more box height squared on the
# stand, where one keeps this many times the other's; else the one that keeps more box
# height (rack-tiles-only.md, "The view by height squared").
VIEW_MARGIN = 1.1
# Where the plane's view keeps that margin more, it is still not taken where it names off
# this many tiles or more that the photo's keeps, boxed taller than those it keeps
# (`_plane_keeps_more`): one such tile is not enough against the margin (rendered
# 1,006,102: the plane's view keeps 16 of its 17 stand tiles and drops one boxed tallest;
# the photo's keeps 12).
TRADED_TILES = 2
# A tile in a tier whose box is shorter than this share of the height a standing tile's box
# has at its place (heights fit over the tiers' tiles, `_squashed`) lies flat beside or
# behind the stand, unless the tier in front hides its foot (within `SQUASHED_HIDE_GAP`
# of its height): rack-tiles-only.md.
FLAT_TILE_SHARE = 0.8
FIT_BAND = 0.15
FIT_TILES = 4
SQUASHED_HIDE_GAP = 0.4
# A box hidden so must be at least this share as wide as the box in front that hides it
# (rendered stands, tuning seeds 600,100+: a tier's tiles 0.85-1.10 of the width of the
# tier's in front, 5-95 %; tiles lying behind the top tier 0.43-0.81). Not 0.75: flat
# racks' jokers and tiles cut by the photo's edge box narrower (rack-tiles-only.md).
HIDE_WIDTH = 0.65
FIRST_FIT_BAND = 0.3
# ...and where too few tiles agree on a height for that fit, one shorter than this share
# of the tallest box kept (`_much_shorter`).
SHORT_SHARE = 0.5
# When the plane's view is taken, a tile still kept whose box in the photo is shorter than
# this share of the fit there lies flat (the plane of one fit over a stand and the table
# behind it can make flat tiles as tall as standing ones; the photo keeps them short).
# Not 0.8: a rack seen from 35 degrees and 0.3-0.6 rad aside lost 40-45 of its tiles.
PHOTO_FLAT_SHARE = 0.55


def off_the_rack(d: TileDetections) -> np.ndarray:
    """(N,) True for each tile lying on the table beside or behind the rack, not standing
    on it: one that faces another way than the rack's tiles (they all face its way, up or
    turned round), one in a row of tiles that is not one of the stand's tiers
    (`vision.game.tiers.stand_tiers`: a chain of up to three rows, each within a tier step
    of the next and meeting it, from the row with the most tile height, or from two rows
    that stack where that row stacks with none), one at a kept row's end past a
    gap and flat beside the tiles across it (`_flat_beyond_a_gap`), or one kept whose box
    is too short for a standing tile at its place (`FLAT_TILE_SHARE`). Judged only where most
    tiles, or most box height squared, agree on a way; else only the boxes far shorter
    than the tallest are named off (`_much_shorter`: a stand of one tile among tiles
    lying by).

    Judged twice, in the photo and on the plane estimated from the tiles (as `rows_of`),
    and the view that keeps more tile height on the rack (its tiles' box heights in the
    photo squared, summed, where one view keeps `VIEW_MARGIN` times the other's, else the
    heights summed: a row of flat tiles weighs less than the stand's; not the plane's
    where it trades the photo's taller tiles for shorter ones, `_plane_keeps_more`) is
    taken: seen from the side, a rack's up vectors fan out in the photo and only the plane
    holds them parallel; but tiles standing on a stand and lying on the table lie on two
    planes, and one plane fit to both can misplace the stand's rows
    (docs/decisions/rack-tiers.md). So the plane's view is weighed only where every tile
    it adds looks like the photo's fan, not a row lying by, or where the two views keep
    no tile in common (`_only_the_photos_fan`).
    Where the plane's view is taken, the boxes far too short in the photo for a standing
    tile there (`PHOTO_FLAT_SHARE`) are named off as well. Where the photo agrees on no
    way at all, the plane's view is taken if it judges and the boxes it keeps are at
    least the photo's median height: on the plane, tiles lying by each their own way lie
    flat and a stand of one tile stands up (white 730,006); a row lying far behind the
    stand that lines up there is boxed short (760,026; rack-tiles-only.md, "A stand of
    one tile seen in perspective"). In each view the rack's way is
    found twice, from every box alike and weighted by box height squared (`_best_way`):
    tiles lying by that outnumber the stand's and lean another way pull the plain way off
    the stand's (rack-tiles-only.md, "The rack's way weighted by box height")."""
    n = len(d)
    if n < 3:
        return np.zeros(n, bool)
    q = d.corners.astype(np.float64)
    tall = tile_frames(q)[4]  # in the photo: the stand's tiles stand taller than flat ones
    off = _best_way(q, tall, stacked=True)
    no_way = rack_axis(q) is None and rack_axis(q, weighted=True) is None
    plane = TablePlane.from_tiles(q)
    if plane.tilted:
        on_plane = _best_way(plane.to_plane(q).reshape(-1, 4, 2), tall)
        # where the photo agrees on no way, the plane's judgement, if its stand stands tall
        tall_stand = on_plane.any() and np.median(tall[~on_plane]) >= np.median(tall)
        if (no_way and tall_stand) or (_plane_keeps_more(tall, on_plane, off)
                                       and _only_the_photos_fan(q, off, on_plane)):
            off = on_plane
            way = rack_axis(q)
            if way is not None:
                off = _drop_squashed(q, way[0], off, PHOTO_FLAT_SHARE)
    if not off.any() and no_way:
        # no way agreed on (a stand of one tile among tiles lying by): the boxes far
        # shorter than the tallest lie flat
        off[_much_shorter(tall)] = True
    return _in_a_kept_row(q, off, np.array([c == "J" for c in d.codes], bool))


def _only_the_photos_fan(q: np.ndarray, in_photo: np.ndarray, on_plane: np.ndarray) -> bool:
    """Whether every tile the plane's view keeps and the photo's names off looks like the
    photo's own fan of the stand's tiles, not a row lying by: it faces off the rack's way in
    the photo (either weighting, `rack_axis`), or its box is at least `FLAT_TILE_SHARE` as
    tall as a tile both views keep at its place (box height fit as a plane over their
    centres, held within their range). Seen from the side, a stand's far tiles lean off its
    way or its slanting rows split, and both views keep the rest; a plane fit over a stand
    and the table lines rows lying by up as tiers, and their boxes are short (white 3,000,025:
    a row of six lying behind the top tier, three of them boxed 0.56-0.79 of the stand's
    height at their place; rack-tiles-only.md, "The plane's view only for the photo's
    fan"). False where the plane's view adds nothing; True where it keeps none of the
    photo's tiles: two guesses at where the stand is, left to the weighing (rendered
    1,008,104: the photo's view keeps a row of five lying tiles boxed 23-35 px, the plane's
    the stand's three of 110-121)."""
    gained, both = in_photo & ~on_plane, ~in_photo & ~on_plane
    if not gained.any():
        return False
    if not both.any():
        return True
    facing = np.zeros(len(q), bool)
    for weighted in (False, True):
        way = rack_axis(q, weighted)
        if way is not None:
            facing |= ~way[1]
    centres, _r, _d, _w, heights = tile_frames(q)
    kept = np.nonzero(both)[0]
    fit = np.full(len(q), float(np.median(heights[kept])))
    if len(kept) >= FIT_TILES:
        fit = np.clip(_height_fit(centres, heights, kept), heights[kept].min(),
                      heights[kept].max())
    return bool((facing | (heights >= FLAT_TILE_SHARE * fit))[gained].all())


def _plane_keeps_more(tall: np.ndarray, on_plane: np.ndarray, in_photo: np.ndarray) -> bool:
    """`_keeps_more` for the plane's view against the photo's, but not where the plane's
    view trades tall tiles for short ones: the tiles it names off and the photo's view
    keeps box taller (median) than those it keeps. Where the summed heights decide, one
    such tile is enough; where the plane's view keeps `VIEW_MARGIN` times the box height
    squared, `TRADED_TILES`. A plane fit to rows lying by that outnumber a small stand
    keeps them and names the stand's own front tier off (white 3,100,001 upright: four
    front tiles of 195-211 px for six lying ones of 142-157), while seen from the side
    the plane's view keeps the far, shorter tiles the photo's fans away
    (rack-tiles-only.md, "The plane's view trading tall tiles for short ones")."""
    traded = ~in_photo & on_plane
    if traded.any() and (~on_plane).any() and (
            np.median(tall[traded]) > np.median(tall[~on_plane])):
        sq_plane, sq_photo = (tall[~on_plane] ** 2).sum(), (tall[~in_photo] ** 2).sum()
        clear = max(sq_plane, sq_photo) > VIEW_MARGIN * min(sq_plane, sq_photo)
        if not clear or traded.sum() >= TRADED_TILES:
            return False
    return _keeps_more(tall, on_plane, in_photo)


def _keeps_more(tall: np.ndarray, off_a: np.ndarray, off_b: np.ndarray) -> bool:
    """Whether judging `off_a` keeps more tile height on the rack than `off_b`: box heights
    in the photo (`tall`) squared, summed, where one keeps `VIEW_MARGIN` times the other's,
    else the heights summed (a row of flat tiles weighs less than the stand's)."""
    sq_a, sq_b = (tall[~off_a] ** 2).sum(), (tall[~off_b] ** 2).sum()
    if max(sq_a, sq_b) > VIEW_MARGIN * min(sq_a, sq_b):
        return bool(sq_a > sq_b)
    return bool(tall[~off_a].sum() > tall[~off_b].sum())


def _best_way(q: np.ndarray, tall: np.ndarray, stacked: bool = False) -> np.ndarray:
    """`_off_in_view` with the rack's way found from all the boxes alike, or weighted by
    their height squared (`rack_axis`), whichever keeps more tile height on the rack: where
    tiles lying on the table outnumber the stand's and lean other ways, their mean way is
    not the stand's. A way not found (`rack_axis` None) is never taken over one found.
    `stacked`: as `stand_tiers`."""
    plain = _off_in_view(q, stacked=stacked)
    weighted = _off_in_view(q, weighted=True, stacked=stacked)
    # A way not found judges nothing and would keep every tile: it never outweighs a way
    # that judges (white 3,000,029: near tiles lying each their own way outweigh a stand of
    # six by height squared, and all fifteen were counted).
    if plain is None or weighted is None:
        judged = weighted if plain is None else plain
        return np.zeros(len(q), bool) if judged is None else judged
    return weighted if _keeps_more(tall, weighted, plain) else plain


def _in_a_kept_row(q: np.ndarray, off: np.ndarray, jokers: np.ndarray | None = None) -> np.ndarray:
    """`off` less the tiles facing off the rack's way that stand in a kept row between two
    of its tiles or next to one (`ROW_NEIGHBOUR`), as tall as they are: a tile leaning, or
    boxed askew, in a tier or at its end (a tile lying by lies off a row's depth, away from
    its ends, or is seen shorter). `jokers` (N,) bool: those are taken back from
    `JOKER_SHARE` of the row's height, whichever way they face. Then any tile still off
    next to a row tile on each side is taken back from `BETWEEN_SHARE` of its height, and one
    at the row's end from `END_AREA` of its end tile's box."""
    kept = np.nonzero(~off)[0]
    if len(kept) < 3:
        return off
    way = rack_axis(q[kept])
    if way is None:
        return off
    axis = way[0]
    up = (q[:, 0] + q[:, 1]) / 2 - (q[:, 3] + q[:, 2]) / 2
    up = up / np.maximum(np.linalg.norm(up, axis=1, keepdims=True), 1e-9)
    lean = np.abs(up @ axis)
    centres, _r, _d, widths, heights = tile_frames(q)
    depth, along = centres @ axis, centres @ np.array([axis[1], -axis[0]])
    out = off.copy()
    jokers = np.zeros(len(q), bool) if jokers is None else jokers
    for i in np.nonzero(off & ((lean < COS_ON_RACK) | jokers))[0]:
        row = kept[np.abs(depth[kept] - depth[i]) < 0.3 * heights[kept]]
        if len(row) < 2:
            continue
        left = row[along[row] < along[i] - 0.3 * widths[i]]
        right = row[along[row] > along[i] + 0.3 * widths[i]]
        near = (np.abs(along[row] - along[i])
                < ROW_NEIGHBOUR * 0.5 * (widths[row] + widths[i])).any()
        share = JOKER_SHARE if jokers[i] else FLAT_TILE_SHARE
        if ((len(left) and len(right)) or near) and \
                heights[i] >= share * float(np.median(heights[row])):
            out[i] = False
    for i in np.nonzero(out)[0]:
        row = kept[np.abs(depth[kept] - depth[i]) < 0.3 * heights[kept]]
        if len(row) < 2:
            continue
        gap = along[row] - along[i]
        reach = ROW_NEIGHBOUR * 0.5 * (widths[row] + widths[i])
        left = ((gap < -0.3 * widths[i]) & (-gap < reach)).any()
        right = ((gap > 0.3 * widths[i]) & (gap < reach)).any()
        if left and right and heights[i] >= BETWEEN_SHARE * float(np.median(heights[row])):
            out[i] = False
            continue
        # at the row's end, next to its end tile: a box as big as that tile's is the
        # tile seen at an angle (its side in the box), not one lying flat (foreshortened)
        near = row[np.abs(gap) < reach]
        if left == right or len(near) != 1:
            continue
        end = near[0]
        if (widths[i] * heights[i] >= END_AREA * widths[end] * heights[end]
                and heights[i] >= END_HEIGHT * heights[end]
                and heights[end] >= FLAT_SHARE * float(np.median(heights[row]))):
            out[i] = False
    return out


def _off_in_view(q: np.ndarray, weighted: bool = False,
                 stacked: bool = False) -> np.ndarray | None:
    """`off_the_rack` judged on corners `q` (N, 4, 2) in one view, the rack's way found
    `weighted` or not (`rack_axis`); None where no way is found. `stacked`: as
    `stand_tiers`."""
    n = len(q)
    off = np.zeros(n, bool)
    way = rack_axis(q, weighted)
    if way is None:
        return None
    axis, aligned = way
    off |= ~aligned
    # The rack's rows, along its way: depth down the rack, split at gaps (`ROW_GAP`).
    centres, _r, _d, widths, heights = tile_frames(q)
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
    if len(rows) <= 1:  # one row: no tiers to choose, but its flat tiles are still off
        return _drop_squashed(q, axis, off)
    foot_hidden = np.zeros(n, bool)
    foot_hidden[idx] = _foot_hidden(q, axis, idx, idx)
    ends = -(q @ axis)  # (N, 4): down the rack is deeper
    along = centres @ np.array([axis[1], -axis[0]])
    short: list[int] = []  # the short tiles of rows taken as tiers for their middle
    for k in set(range(len(rows))) - set(stand_tiers(rows, depth, heights, height, foot_hidden,
                                                   ends.min(axis=1), ends.max(axis=1),
                                                   along, short, stacked, widths)):
        off[rows[k]] = True
    off[short] = True
    off = _flat_beyond_a_gap(rows, off, along, depth, heights, widths)
    return _drop_squashed(q, axis, off)


def _flat_beyond_a_gap(rows: list, off: np.ndarray, along: np.ndarray, depth: np.ndarray,
                       heights: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """`off` with the tiles of a kept row's end named off where they lie beyond a gap of
    `END_GAP` tile widths from the rest of the row (no box of any way at the row's depth
    in it) and their boxes are shorter than `FLAT_SHARE` of the tiles' across the gap:
    tiles lying flat on the table past the stand's end, in line with a tier (a gap alone
    is no sign: a player spreads tiles). Heights are compared at each tile's place along
    the rack (`vision.game.tiers.at_place` over the other kept tiles)."""
    off = off.copy()
    kept = np.nonzero(~off)[0]
    for row in rows:
        row = np.asarray([i for i in row if not off[i]], int)
        if len(row) < 2:
            continue
        row = row[np.argsort(along[row])]
        edges = along[row[1:]] - along[row[:-1]] - 0.5 * (widths[row[1:]] + widths[row[:-1]])
        wide = float(np.median(widths[row]))
        level, tall = float(np.median(depth[row])), float(np.median(heights[row]))
        at_depth = np.abs(depth - level) < 0.5 * tall
        for g in np.nonzero(edges > END_GAP * wide)[0]:
            lo, hi = along[row[g]], along[row[g + 1]]
            if (at_depth & (along > lo) & (along < hi)).any():
                continue  # a tile facing another way stands in the gap
            for end, across in ((row[:g + 1], row[g + 1:g + 1 + END_NEAR]),
                                (row[g + 1:], row[max(0, g + 1 - END_NEAR):g + 1])):
                rest = np.setdiff1d(row, end)
                if (heights[end] ** 2).sum() >= (heights[rest] ** 2).sum():
                    continue
                # each set against the kept tiles' height at its place: the far end of a
                # stand seen from one side boxes shorter than its near end
                fit = at_place(heights, np.setdiff1d(kept, end), along)
                share = heights / fit
                if np.median(share[end]) < FLAT_SHARE * np.median(share[across]):
                    off[end] = True
    return off


def rack_axis(q: np.ndarray, weighted: bool = False) -> tuple[np.ndarray, np.ndarray] | None:
    """(the rack's up direction (2,), (N,) True for the tiles facing within `COS_ON_RACK`
    of it either way) from the boxes `q`, or None where neither half the tiles (3 at
    least) nor half their box height squared (2 tiles at least: a close-up of a stand
    holding two, small tiles lying far behind it) agree on a way."""
    up = (q[:, 0] + q[:, 1]) / 2 - (q[:, 3] + q[:, 2]) / 2
    up = up / np.maximum(np.linalg.norm(up, axis=1, keepdims=True), 1e-9)
    weight = tile_frames(q)[4] ** 2
    # up vectors as lines: turned tiles count; `weighted`, by box height squared and
    # fit again over the tiles near the way found
    w = weight if weighted else np.ones(len(q))
    axis = np.linalg.eigh((up * w[:, None]).T @ up)[1][:, -1]
    along = up @ axis
    aligned = np.abs(along) >= COS_ON_RACK
    if weighted and aligned.sum() >= 3:
        axis = np.linalg.eigh((up[aligned] * weight[aligned, None]).T @ up[aligned])[1][:, -1]
        along = up @ axis
        aligned = np.abs(along) >= COS_ON_RACK
    if aligned.sum() < max(3, 0.5 * len(q)):
        # More tiles lie by than stand (scattered over the table, each its own way): the
        # way the most box height squared agrees on, a stand's tiles seen taller than
        # flat ones (docs/decisions/rack-tiles-only.md, "More tiles lying by"; two
        # tiles will do: "A stand of one row, a stand of two tiles").
        lines = np.abs(up @ up.T) >= COS_ON_RACK  # (candidate, tile)
        best = int(np.argmax(lines.astype(np.float64) @ weight))
        aligned = lines[best]
        if aligned.sum() < 2 or weight[aligned].sum() < 0.5 * weight.sum():
            return None
        axis = np.linalg.eigh(up[aligned].T @ up[aligned])[1][:, -1]
        along = up @ axis
        aligned = np.abs(along) >= COS_ON_RACK
    if (along[aligned] >= 0).sum() < (along[aligned] < 0).sum():
        axis = -axis
    return axis, aligned


def _drop_squashed(q: np.ndarray, axis: np.ndarray, off: np.ndarray,
                   flat: float = FLAT_TILE_SHARE) -> np.ndarray:
    """`off` with the tiles kept whose boxes `q` are too short for a standing tile at
    their place (`_squashed`) named off too, unless the tier in front hides their foot."""
    off = off.copy()
    centres, _r, _d, _w, heights = tile_frames(q)
    kept = np.nonzero(~off)[0]
    shares = _standing_shares(centres[kept], heights[kept])
    squashed = kept[_squashed(centres[kept], heights[kept], flat, shares)]
    if len(squashed):
        hidden = _foot_hidden(q, axis, squashed, kept, SQUASHED_HIDE_GAP)
        if shares is not None:  # what shows of a hidden tier is at least HIDDEN_SHOWS
            hidden &= shares[np.searchsorted(kept, squashed)] >= HIDDEN_SHOWS
        off[squashed[~hidden]] = True
    return off


def _squashed(place: np.ndarray, heights: np.ndarray,
              flat: float = FLAT_TILE_SHARE, shares: np.ndarray | None = None) -> np.ndarray:
    """Indices of the tiles whose box is shorter than `FLAT_TILE_SHARE` of the height a
    standing tile's box has at its place (`place`, (N, 2)): box height fit as a plane over
    the photo (perspective shrinks a stand's tiles smoothly along it), first on the tiles
    within `FIRST_FIT_BAND` of the median height, then refit on those within `FIT_BAND`
    of the fit. Where the tiles the fit leaves above it outweigh those it keeps (box
    heights squared: flat tiles beside a short stand outnumber its tiles), it starts again
    from the median weighted so (`_tall_median`). Where fewer than `FIT_TILES` agree on a
    fit, `_much_shorter`. `shares`: `_standing_shares`, where already taken."""
    if shares is None:
        shares = _standing_shares(place, heights)
    if shares is None:
        return _much_shorter(heights)
    return np.nonzero(shares < flat)[0]


def _standing_shares(place: np.ndarray, heights: np.ndarray) -> np.ndarray | None:
    """Each box's height over the height a standing tile's box has at its place (the fit
    of `_squashed`), or None where fewer than `FIT_TILES` agree on a fit."""
    if len(heights) < FIT_TILES:
        return None
    # the first fit on the tiles near the median height: a few flat ones at the end of a
    # row would tilt a fit over all of them
    share = _fit_share(place, heights, float(np.median(heights)))
    if share is not None:
        kept, above = np.abs(share - 1) < FIT_BAND, share >= 1 + FIT_BAND
        if (heights[above] ** 2).sum() > (heights[kept] ** 2).sum():
            share = _fit_share(place, heights, _tall_median(heights))
    return share


def _fit_share(place: np.ndarray, heights: np.ndarray, start: float) -> np.ndarray | None:
    """Each box's height over the plane fit (`_squashed`) from the tiles within
    `FIRST_FIT_BAND` of `start`; None where fewer than `FIT_TILES` agree."""
    use = np.nonzero(np.abs(heights / start - 1) < FIRST_FIT_BAND)[0]
    for _round in range(3):
        if len(use) < FIT_TILES:
            return None
        share = heights / np.maximum(_height_fit(place, heights, use), 1e-9)
        use = np.nonzero(np.abs(share - 1) < FIT_BAND)[0]
    return share if len(use) >= FIT_TILES else None


def _height_fit(place: np.ndarray, heights: np.ndarray, over: np.ndarray) -> np.ndarray:
    """Box height fit as a plane over the places (N, 2) of the tiles `over` (indices),
    at every tile's place."""
    a = np.c_[np.ones(len(heights)), place]
    return a @ np.linalg.lstsq(a[over], heights[over], rcond=None)[0]


def _tall_median(heights: np.ndarray) -> float:
    """The median of box heights weighted by their squares: a few standing tiles outweigh
    more flat ones beside them (seen nearer and taller, `stand_tiers`)."""
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
    # a tier behind stands a step further away than the tier in front, its boxes nearly
    # as wide; a tile lying on the table behind the stand lies much further (HIDE_WIDTH)
    wide = width[i] >= HIDE_WIDTH * width[j]
    return (beside & below & meets & wide).any(axis=1)

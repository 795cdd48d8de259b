"""Which rows of a rack photo's tiles are the stand's tiers (issue #19): `stand_tiers`, a
chain of up to three rows from the fullest, judged from the boxes alone. `vision.game.stand`
splits the rows and names off the tiles of the rows left out. See docs/decisions/
rack-tiers.md and rack-tiles-only.md.
"""

from __future__ import annotations

import numpy as np

# A stand has one to three tiers, each about a tile height (and a little) from the next: a
# row of tiles further than this many tile heights from the nearest tier lies on the table
# behind or before the stand (see docs/decisions/rack-tiers.md).
TIER_STEP = 1.7
MAX_TIERS = 3
# A row flat as a whole is still a tier where at least this many of its tiles lie within
# the span of the tiers taken and are not flat: tiles lying on the table beyond the
# stand's end at a tier's depth join its row (rack-tiles-only.md, "A tier joined by tiles
# lying beyond the stand's end").
SPAN_TILES = 2
# A tile lying flat on the table is seen foreshortened: from 20-45 degrees above, 0.35-0.84
# of the height of a tile standing on a stand leaning back 6-18 degrees. A row whose tiles
# are shorter than this share of the tiers' is not a tier (rendered tiers: 0.91-1.05).
FLAT_SHARE = 0.8
# A row behind the tiers whose feet the tier in front hides (`foot_hidden`: within
# `vision.game.stand.HIDE_GAP`) is a tier though foreshortened, where its boxes are at
# least this share as tall as the tiers': a tier hides the lower third to half of the
# tier behind (the real white stands of issue #19), so what shows of a tier is at least
# half a tile; a row of tiles lying flat just behind the stand is seen shorter (rendered stands: rows taken by the exception above, lying 0.44-0.75 of the
# tiers' height, standing 0.68; rack-tiles-only.md, "A row behind the tiers shorter than
# half of them").
HIDDEN_SHOWS = 0.5
# A tier's tiles stand on the ledge above and behind the tier in front, their feet hidden
# by it: in the photo a tier's boxes' feet reach down to the tops of the boxes of the tier
# in front, or over them. A row whose boxes' tops lie further than this many box heights
# below the feet of the lowest tier (or whose feet lie that far above the tops of the
# highest) lies on the table before or behind the stand (rack-tiles-only.md).
TIER_GAP = 0.45
# Two rows stack where the upper one's boxes' feet reach this share of its box height over
# the lower one's tops, their boxes alike in height (`STACK_HEIGHTS`), two tiles or more
# each: a tier standing behind the one in front, its foot hidden by it. Rows lying on the
# table do not (white ranges, landscape and upright, the photo's rows: pairs of tiers
# 0.25 over, median, 5-95 % 0.02-0.42, heights 0.85-1.07 of each other; every pair with
# a lying row 0.29 or more apart but one, a far row 0.28 as tall). Where the fullest
# row's chain holds no stacked pair and two other rows stack, the chain is taken from
# those: a row lying nearest an upright phone is boxed taller than the stand's
# (rack-tiles-only.md, "Two rows stacked are a stand").
STACK_OVERLAP = 0.1
STACK_HEIGHTS = (0.75, 1.35)
# A row above the tiers whose tiles box narrower than this share of the tier's it meets
# (medians) lies further behind than a tier step: tiles lying flat behind the top tier,
# whose feet it hides as a tier's (white ranges, landscape and upright, the top row kept
# over the tier in front: tiers 0.90-1.09, 5-95 %, least 0.77 (a close-up); rows lying by
# 0.75 median, 16 of 27 under 0.8; rack-tiles-only.md, "A row behind the top tier boxed
# narrower").
BEHIND_WIDTH = 0.78
# Sizes are set at a place along the rack (`at_place`) by a line fit over the tiers'
# boxes, where at least PLACE_TILES of them spread PLACE_SPREAD of their median size along
# it and the line stays within PLACE_RANGE times that median: one box boxed askew must not
# tilt it (rack-tiles-only.md, "A stand seen from one side").
PLACE_TILES = 3
PLACE_SPREAD = 1.5
PLACE_RANGE = 1.5


def stand_tiers(rows: list, depth: np.ndarray, heights: np.ndarray, height: float,
           foot_hidden: np.ndarray, top: np.ndarray | None = None,
           foot: np.ndarray | None = None, along: np.ndarray | None = None,
           short: list | None = None, stacked: bool = False,
           widths: np.ndarray | None = None) -> list[int]:
    """The rows that stand on the stand: its fullest row (by tile height: see below), then
    row by row up and down the rack while the next row lies within a tier step of the last
    tier taken (a chain, so a three-tier stand's rows all count), meets it (`_touches`:
    tiles lying before or behind the stand leave a gap) and is not foreshortened
    as tiles lying flat are (`FLAT_SHARE`; a row behind whose feet the tier in front hides,
    `foot_hidden`, is exempt), at most MAX_TIERS. Of the two rows next to the tiers taken
    so far, the fuller one is taken first. A foreshortened row whose tiles all lie beyond
    both ends of the tiers taken (flat tiles beside the stand, at a tier's depth) is passed
    over: the row of two tiles or more beyond it may still be the next tier. The tiers'
    ends are those of their tiles boxed at least `FLAT_SHARE` of the tiers' height: a flat
    tile lying beside the stand at a tier's depth joins its row but does not stretch it.

    The first tier is the row with the most tile height (its boxes' heights squared,
    summed): tiles lying flat are seen foreshortened, and a row of them behind the stand
    is also further away, so a row of them longer than the stand's weighs less, and a
    tier's row that tiles lying beside it join keeps its weight (rack-tiles-only.md).

    A row flat as a whole is still a tier where `SPAN_TILES` of its tiles within the span
    of the tiers taken are not flat (it must meet the tier next to it on those); its tiles
    shorter than `FLAT_SHARE` of the tiers' height are added to `short`, to be named off.

    A row above the tiers whose tiles box narrower than the tier it meets
    (`BEHIND_WIDTH`, where `widths` are given) is no tier, and none beyond it is.

    A row longer than the tiers both ways (`_longer`) has the heights and widths of its
    tiles past their ends set against the tiers' at those ends (`at_place`): seen from
    one side, a stand's far end boxes smaller than its near end.

    `stacked` (the photo's view, not the plane's: a plane fit over a stand and the table
    makes far rows stack): where the fullest row's chain holds neither row of any pair that
    stacks (`_stacked`), the chain is taken from the fuller row of the heaviest pair."""
    weight = [float((heights[r] ** 2).sum()) for r in rows]
    fullest = max(range(len(rows)), key=weight.__getitem__)
    taken, cuts = _chain(fullest, rows, depth, heights, height, foot_hidden, top, foot, along,
                         widths)
    if stacked and top is not None and along is not None:
        # the fullest row's chain holds no two rows stacked, but two others stack: a row
        # lying nearest the phone outweighs the stand (STACK_OVERLAP)
        pairs = _stacked(rows, top, foot, heights, along)
        if pairs and not any(k in taken or k + 1 in taken for k in pairs):
            k = max(pairs, key=lambda k: weight[k] + weight[k + 1])
            taken, cuts = _chain(max((k, k + 1), key=weight.__getitem__), rows, depth,
                                 heights, height, foot_hidden, top, foot, along, widths)
    if short is not None:
        short.extend(cuts)
    return taken


def _chain(start: int, rows: list, depth: np.ndarray, heights: np.ndarray, height: float,
           foot_hidden: np.ndarray, top: np.ndarray | None, foot: np.ndarray | None,
           along: np.ndarray | None, widths: np.ndarray | None = None
           ) -> tuple[list[int], list[int]]:
    """(the rows taken as tiers from row `start`, as `stand_tiers` says; the short tiles of the
    rows taken for their middle)."""
    level = [float(np.mean(depth[r])) for r in rows]
    cuts: list[int] = []
    taken: list[int] = [start]
    while len(taken) < MAX_TIERS:
        lo, hi = min(taken), max(taken)
        tiers = np.concatenate([rows[k] for k in taken])
        # each tile's box height over the tiers' median; in a row longer than the tiers
        # both ways, the tiles past their ends over their end's (`at_place`)
        plain = heights / float(np.median(heights[tiers]))
        # the stand's extent along the rack, from the tiers' tiles boxed as tall as standing
        # ones (at least the median one): a tile lying flat beside the stand joins a tier's
        # row but is no end of it (white 3,500,039: the row between two tiers that it
        # spanned stopped the chain)
        span = along[tiers[plain[tiers] >= FLAT_SHARE]] if along is not None else None
        # every tile of row k beyond both ends of the tiers taken, along the rack
        beside = [span is not None and bool(((along[rows[k]] < span.min())
                                             | (along[rows[k]] > span.max())).all())
                  for k in range(len(rows))]
        placed = heights / at_place(heights, tiers, along, beyond=True)
        shares = [placed if _longer(rows[k], tiers, along) else plain for k in range(len(rows))]
        tall = [float(np.median(shares[k][rows[k]])) for k in range(len(rows))]
        flat = [tall[k] < FLAT_SHARE
                and not (k < lo and foot_hidden[rows[k]].mean() >= 0.5
                         and tall[k] >= HIDDEN_SHOWS)
                for k in range(len(rows))]
        # a row flat as a whole whose tiles within the tiers' span are not: a tier that
        # tiles lying at its depth beyond the stand's end join; those short ones are off
        cut, near = {}, list(rows)  # near: each row as the tiers meet it
        if span is not None:
            for k in range(len(rows)):
                row = np.asarray(rows[k])
                inside = (along[row] >= span.min()) & (along[row] <= span.max())
                if flat[k] and inside.sum() >= SPAN_TILES and float(np.median(
                        shares[k][row[inside]])) >= FLAT_SHARE:
                    flat[k] = False
                    cut[k] = [int(i) for i in row if shares[k][i] < FLAT_SHARE]
                    near[k] = [int(i) for i in row[inside]]
        nexts = []
        for step in (-1, 1):
            k, last = (lo, hi)[step > 0] + step, (lo, hi)[step > 0]
            skipped = False
            # Flat tiles lying beside the stand at a tier's depth are no tier, and no end
            # of the stand either: the next tier (of two tiles or more) may lie beyond.
            while 0 <= k < len(rows) and abs(level[k] - level[last]) <= TIER_STEP * height:
                if not flat[k]:
                    if (not skipped or len(rows[k]) >= 2) and (
                            top is None or _touches(near, k, lo, hi, top, foot, heights)) and (
                            step > 0 or not _narrower(near[k], rows[lo], widths, along)):
                        nexts.append(k)
                    break
                if not beside[k]:
                    break
                skipped = True
                k += step
        if not nexts:
            break
        k = max(nexts, key=lambda k: len(rows[k]))
        taken.append(k)
        cuts.extend(cut.get(k, []))
    return sorted(taken), cuts


def _stacked(rows: list, top: np.ndarray, foot: np.ndarray, heights: np.ndarray,
             along: np.ndarray) -> list[int]:
    """The rows k that stack on row k + 1 (`STACK_OVERLAP`, `STACK_HEIGHTS`): beside each
    other along the rack, the feet of row k's boxes over row k + 1's tops (medians)."""
    pairs = []
    for k in range(len(rows) - 1):
        upper, lower = np.asarray(rows[k]), np.asarray(rows[k + 1])
        if len(upper) < 2 or len(lower) < 2:
            continue
        if not _beside(upper, lower, along):
            continue
        ratio = float(np.median(heights[upper]) / np.median(heights[lower]))
        if (_over(upper, lower, top, foot, heights) >= STACK_OVERLAP
                and STACK_HEIGHTS[0] <= ratio <= STACK_HEIGHTS[1]):
            pairs.append(k)
    return pairs


def _narrower(upper, lower, widths: np.ndarray | None, along: np.ndarray | None = None) -> bool:
    """Whether the tiles of row `upper` box narrower than `BEHIND_WIDTH` of those of the
    tier `lower` it stands on (medians; where `upper` reaches past both its ends,
    `_longer`, the tiles past them against its end's width: `at_place`): further away
    than a tier step."""
    if widths is None:
        return False
    upper, lower = np.asarray(upper), np.asarray(lower)
    if _longer(upper, lower, along):
        placed = widths[upper] / at_place(widths, lower, along, beyond=True)[upper]
        return bool(np.median(placed) < BEHIND_WIDTH)
    return bool(np.median(widths[upper]) < BEHIND_WIDTH * np.median(widths[lower]))


def _longer(row, tiers, along: np.ndarray | None) -> bool:
    """Whether `row` has tiles past both ends of the tiers `tiers` along the rack: a tier
    longer than the one it meets reaches the stand's far and near ends, where a photo from
    one side boxes the tiles smallest and largest."""
    if along is None:
        return False
    x, ends = along[np.asarray(row)], along[np.asarray(tiers)]
    return bool((x < ends.min()).any() and (x > ends.max()).any())


def at_place(sizes: np.ndarray, tiers, along: np.ndarray | None,
             beyond: bool = False) -> np.ndarray:
    """(N,) the size (box height or width) a tile of the tiers `tiers` (indices) has at
    each tile's place along the rack: `sizes` of the tiers fit as a line along it,
    clamped to the tiers' span, where `PLACE_TILES` of them spread `PLACE_SPREAD` median
    sizes along it and the line stays within `PLACE_RANGE` of their median; else their
    median. `beyond`: the line only past the tiers' ends (the end's size there), their
    median within their span, where a row lying behind the top tier is judged as before
    (a line over a few tiles' noisy boxes moved such rows, 0.8 as tall, either way).
    Seen from one side, a stand's near end boxes larger than its far end, so a row
    reaching past the tiers' far end set against their median looks narrower and shorter
    than a tier (real train/ rummy3-16; rack-tiles-only.md, "A stand seen from one
    side")."""
    tiers = np.asarray(tiers, int)
    median = float(np.median(sizes[tiers]))
    flat = np.full(len(sizes), median)
    if along is None or len(tiers) < PLACE_TILES:
        return flat
    x = along[tiers]
    if np.ptp(x) < PLACE_SPREAD * median:
        return flat
    slope, offset = np.polyfit(x, sizes[tiers], 1)
    ends = slope * np.array([x.min(), x.max()]) + offset
    if ends.min() < median / PLACE_RANGE or ends.max() > median * PLACE_RANGE:
        return flat
    fit = slope * np.clip(along, x.min(), x.max()) + offset
    return np.where((along < x.min()) | (along > x.max()), fit, median) if beyond else fit


def _beside(a, b, along: np.ndarray) -> bool:
    """Whether rows `a` and `b` overlap along the rack (their tiles' centres' spans)."""
    return bool(min(along[a].max(), along[b].max()) >= max(along[a].min(), along[b].min()))


def _touches(rows: list, k: int, lo: int, hi: int, top: np.ndarray, foot: np.ndarray,
             heights: np.ndarray) -> bool:
    """Whether row `k` (next to the tiers `lo`..`hi`) meets the tier next to it: the upper
    row's boxes' feet within `TIER_GAP` of their heights of the lower row's tops, or over
    them (medians over each row)."""
    upper, lower = (rows[k], rows[lo]) if k < lo else (rows[hi], rows[k])
    return _over(upper, lower, top, foot, heights) >= -TIER_GAP


def _over(upper, lower, top: np.ndarray, foot: np.ndarray, heights: np.ndarray) -> float:
    """How far row `upper`'s boxes' feet reach over row `lower`'s tops, in `upper`'s box
    heights (medians over each row; below 0, the gap between them)."""
    return float((np.median(foot[upper]) - np.median(top[lower])) / np.median(heights[upper]))

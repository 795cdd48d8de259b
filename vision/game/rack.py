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

from vision.game.back_tier import SWAPPED_TURNED, rack_way, recrop_stand
from vision.game.footing import rack_off
from vision.game.stand import off_the_rack
from vision.recognition.detections import TileDetections
from vision.recognition.geometry import TablePlane, tile_frames

# A reading the rack's way round is taken when it holds at least this share of the
# probability of the reading as drawn (tuned on rendered racks 90,000+, see bench).
RACK_WAY_RATIO = 0.01
COS_ALONG = np.cos(np.radians(25))  # a tile within 25 degrees of the rack's way lies on it
# ...and a 6 read turned round as a 9 (or a 9 as a 6) on a rack where no other tile reads
# turned round, at this share (rendered stands, tuning seeds 600,100+ and 640,100+: 13
# more read right; flat racks 2 fewer: docs/decisions/back-tier-crops.md, "A lone 6 or 9").
LONE_SWAP_RATIO = 1e-4


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
              frame: tuple[int, int] | None = None, photo=None, reader=None,
              stand: np.ndarray | None = None) -> RackReading:
    """The tiles of one rack photo, re-read with the rack's way and the copy counts, and
    their total. `frame`: the photo's (width, height), to warn about tiles its edge may cut.
    With the `photo` (a BGR array or a `Photo`) and the `reader` (a `TileReader`) that read
    it, each tile standing on the stand is first read again in its box moved down to the
    face (`vision.game.back_tier.recrop_stand`: a box reaching above the face reads a 6 as
    a 9). `stand` (N,): the tiles standing on the stand as the photo's gates judged them
    (`vision.game.cover.stand_tiles`), not judged by the box rules again.

    Tiles lying on the table beside or behind the rack (`off_the_rack`) keep their reading
    and their ids in `detections`, but are in no row, not in the total, and named in
    `off_rack` and a warning."""
    import re

    from referee import DEFAULT_RULES, Tile, copy_problems, rack_penalty
    from vision.game.table import _fix_copies, _read_turned, edge_tiles, edge_warning

    rules = rules or DEFAULT_RULES
    labels = tuple(detections.labels)
    off = ~stand if stand is not None else off_the_rack(detections)
    if photo is not None:
        off = rack_off(detections, off, photo)
    if photo is not None and hasattr(reader, "classify_at"):
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
    if off.any() and frame is not None and frame[1] > frame[0]:
        warnings.append(UPRIGHT_WORDS)
    if not len(on):
        warnings.append(EMPTY_WORDS)
    doubtful = [int(i) for i in np.nonzero(fixed.uncertain & ~off)[0]]
    if doubtful:
        warnings.append(f"{len(doubtful)} tile(s) read with low confidence: ids "
                        f"{', '.join(map(str, doubtful))}; check the total")
    total = rack_penalty([Tile.from_code(fixed.codes[i]) for i in on], rules)
    rows = [[int(on[j]) for j in row] for row in rows_of(fixed[on])] if len(on) else []
    return RackReading(fixed, rows, total, warnings, edge, [int(i) for i in np.nonzero(off)[0]])


# Said of a rack photo taken upright with tiles lying by: upright, more of the table shows
# before the stand, and rows lying nearest the phone, boxed taller than the stand's tiles,
# can be taken for it (white racks F1 0.955 upright against 0.980 sideways, the same
# scenes: docs/decisions/rack-tiles-only.md, "A phone held upright").
UPRIGHT_WORDS = ("photographed upright with tiles lying by: check which tiles are counted; "
                 "a rack reads best with the phone held sideways, the rack filling the photo")


# Said of a rack photo where no tile stands on the rack: its total is 0, which a rack
# photographed at a round's end never is (the winner's rack is not photographed), so the
# photo shows something else, or a hand hides the tiles (real rack photos of one or two
# tiles with a painted hand over them: 10 of the 56 hands read silently wrong in
# `bench.eval_real_racks` left no tile found; docs/decisions/covered-photo.md).
EMPTY_WORDS = ("no tile found on the rack: if it holds tiles, photograph it again, "
               "the whole rack in the photo")


def off_rack_warning(d: TileDetections, off: np.ndarray) -> str:
    ids = [int(i) for i in np.nonzero(off)[0]]
    codes = " ".join(d.codes[i] for i in ids)
    n = len(ids)
    return (f"{n} tile{'s lie' if n != 1 else ' lies'} off the rack: not counted "
            f"({codes}; ids {', '.join(map(str, ids))})")


def _face_the_rack(d: TileDetections) -> list[tuple[int, int]]:
    """(tile, class id) for tiles read turned round against the rack whose reading the
    rack's way round is plausible and differs (a 6 seen as a 9; an 8 stays an 8): at
    `RACK_WAY_RATIO` of the reading as drawn, or for a 6 or a 9 read as its swap on a
    rack where every other tile reads the rack's way, at `LONE_SWAP_RATIO`."""
    if d.flip_probs is None or len(d) < 3:
        return []
    # the way three to one of the tiles agree on, 6s and 9s left out (they are what turns)
    axis = rack_way(d, np.arange(len(d)))
    if axis is None:
        return []
    along = d.up_vectors @ axis
    out = []
    other, share = d.other_way()
    against = along <= -COS_ALONG
    swapped = [SWAPPED_TURNED.get(code[1:]) for code in d.codes]
    # Where no other tile stands turned round, a 6 or 9 read so is the box sitting high
    # on a stand, not a player's doing: its swap is taken on far less (LONE_SWAP_RATIO).
    lone = not any(a and s is None for a, s in zip(against, swapped, strict=True))
    for i in np.nonzero(against)[0]:
        swap = swapped[i] is not None and d.labels[int(other[i])] == d.codes[i][:1] + swapped[i]
        ratio = LONE_SWAP_RATIO if lone and swap else RACK_WAY_RATIO
        if other[i] != d.class_ids[i] and share[i] >= ratio:
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

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


@dataclass
class RackReading:
    detections: TileDetections
    rows: list[list[int]] = field(default_factory=list)
    total: int = 0
    warnings: list[str] = field(default_factory=list)
    edge: list[int] = field(default_factory=list)  # at the photo's edge: may be cut off

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
              frame: tuple[int, int] | None = None) -> RackReading:
    """The tiles of one rack photo, re-read with the rack's way and the copy counts, and
    their total. `frame`: the photo's (width, height), to warn about tiles its edge may cut."""
    from referee import DEFAULT_RULES, Tile, copy_problems, rack_penalty
    from vision.game.table import _fix_copies, _read_turned, edge_tiles, edge_warning

    rules = rules or DEFAULT_RULES
    labels = tuple(detections.labels)
    ids = detections.class_ids.astype(np.int64).copy()
    corners = detections.corners.copy()
    warnings: list[str] = []
    rereads: dict[int, tuple[str, str]] = {}
    _read_turned(_face_the_rack(detections), ids, corners, labels, rereads, warnings,
                 "a rack all face one way")
    for _round in range(8):
        problems = copy_problems([Tile.from_code(labels[k]) for k in ids], rules)
        if not problems:
            break
        if not _fix_copies(ids, detections.class_probs, labels, [], rules, rereads, warnings):
            warnings.extend(f"impossible count: {p}" for p in problems)
            break
    fixed = TileDetections(corners, detections.detector_scores,
                           detections.class_probs, ids, labels, detections.uncertain.copy())
    for i in rereads:
        fixed.uncertain[i] = True
    edge = edge_tiles(fixed, frame)
    warnings.extend(edge_warning(edge, "rack"))
    doubtful = [int(i) for i in np.nonzero(fixed.uncertain)[0]]
    if doubtful:
        warnings.append(f"{len(doubtful)} tile(s) read with low confidence: ids "
                        f"{', '.join(map(str, doubtful))}; check the total")
    total = rack_penalty([Tile.from_code(c) for c in fixed.codes], rules)
    return RackReading(fixed, rows_of(fixed), total, warnings, edge)


def _face_the_rack(d: TileDetections) -> list[tuple[int, int]]:
    """(tile, class id) for tiles read turned round against the rack whose reading the
    rack's way round is plausible and differs (a 6 seen as a 9; an 8 stays an 8)."""
    if d.flip_probs is None or len(d) < 3:
        return []
    up = d.up_vectors
    # The rack's axis: the tiles' up vectors taken as lines, so a tile upside down on the
    # rack lies on it as well as an upright one.
    axis = np.linalg.eigh(up.T @ up)[1][:, -1]
    along = up @ axis
    ahead, behind = int((along >= COS_ALONG).sum()), int((along <= -COS_ALONG).sum())
    if behind > ahead:
        along, ahead, behind = -along, behind, ahead
    # Only where the tiles along the rack mostly agree on a way up (three to one). Tiles at
    # other angles lie on the table beside the rack, face any way and have no say.
    if ahead < max(2, 3 * behind):
        return []
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

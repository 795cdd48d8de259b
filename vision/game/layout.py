"""From tiles to the sets they lie in: pure geometry on the tiles' corners.

Players lay a set as a line of tiles side by side, each tile touching (or nearly touching)
the next along the tile's reading direction. So two tiles are neighbours in a set when,
seen in each tile's own frame (its "right" axis from the upright top-left to top-right
corner, its "down" axis from top to bottom), the other tile sits beside it: centre offset
along the right axis about one tile width (a small gap allowed), little offset across it,
the axes roughly parallel and the sizes alike. Everything is measured in the tiles' own
widths and heights, so it holds at any angle, in rows or columns, and in oblique photos
where far tiles look smaller.

Each tile has two sides (left and right along its axis) and takes at most one neighbour
on each; candidate links are accepted best-first, so the lines are paths. A path of two or
more tiles is a set, ordered as a player reads it: along the tiles' upright reading
direction (left to right for upright numbers). Tiles on no path are loose.

An oblique photo is grouped as if seen from above: the tiles themselves give the table
plane (`vision.recognition.geometry.TablePlane`: rectangles of one size and shape), and when the
photo is tilted enough to matter the tiles are grouped on that plane (see `PLANE`).

Only numpy here: the referee-aware refinements (splitting a line at a wide gap when that
makes valid sets) live in `vision.game.table`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vision.recognition.geometry import TablePlane, _median, tile_frames

# Tolerances, in tile widths / heights / degrees. Measured with the detector's corners on
# the real valid/ photos and on rendered tables (bench/eval_table.py): tiles of one set lie
# 0-0.08 w apart, but the detector's sizes and centres scatter, so measured in-set gaps
# run from -0.45 (a box shifted into its neighbour) to 0.51 (boxes drawn too small on
# steep perspective); gaps between two sets in one row measure at least 0.55 w on rendered
# and 0.76 w on real photos. Two sets that do merge into one line are split again by the
# rules (`vision.game.table`).
MAX_GAP = 0.55  # largest gap between two tiles of one set, in tile widths
MAX_OVERLAP = 0.5  # corners are noisy: allow this much apparent overlap
MAX_ACROSS = 0.35  # sideways offset of the neighbour's centre, in tile heights
MAX_ANGLE_DEG = 25.0  # axes of neighbours differ by at most this (mod 180)
MAX_SIZE_RATIO = 1.6  # heights of neighbours differ by at most this factor
# A line of only two tiles is a set only when they clearly touch: scattered tiles often
# lie near each other by chance, a deliberate pair (or a longer line) is laid tight.
PAIR_MAX_GAP = 0.25
PAIR_MAX_ANGLE_DEG = 10.0
# Group on the table plane the tiles give ("auto": when the photo is tilted enough to
# matter, `TablePlane.tilted`), or on the photo as it is ("off"). The grouping above is
# measured in each tile's own frame, so it mostly holds in oblique views already; on the
# plane it found the same sets on the rendered and real valid/ tables
# (`bench/eval_table.py --plane auto|off`) and a few more on tables seen from 25-55
# degrees (`bench/eval_geometry.py`: +6 of 653 sets through the models), never fewer.
PLANE = "auto"


@dataclass
class Layout:
    """Tiles grouped into lines.

    `sets[k]` is the tile indices of line k in reading order; `gaps[k]` the gaps between
    consecutive tiles of that line in tile widths (len = len(sets[k]) - 1); `loose` the
    tiles in no line of two or more.
    """

    sets: list[list[int]] = field(default_factory=list)
    loose: list[int] = field(default_factory=list)
    gaps: list[list[float]] = field(default_factory=list)
    plane: TablePlane | None = None  # the table plane the tiles were grouped on, if any

    def to_json(self) -> dict:
        return {"sets": [list(s) for s in self.sets], "loose": list(self.loose)}


def _link_candidates(corners: np.ndarray, max_gap: float):
    """Every plausible neighbour pair as (cost, i, side_i, j, side_j, gap) tuples.

    side is +1 when the neighbour lies along the tile's right axis, -1 along its left.
    """
    centres, right, _down, widths, heights = tile_frames(corners)
    n = len(centres)
    if n < 2:
        return []
    d = centres[None, :, :] - centres[:, None, :]  # d[i, j] = c_j - c_i
    along = np.einsum("ijk,ik->ij", d, right)  # offset of j along i's right axis
    # Perpendicular of i's right axis (rotated 90 deg): offsets across the line.
    perp = np.stack([-right[:, 1], right[:, 0]], axis=1)
    across = np.einsum("ijk,ik->ij", d, perp)
    cos_axes = np.abs(right @ right.T)  # axis agreement, mod 180 deg
    w_mean = (widths[:, None] + widths[None, :]) / 2
    h_mean = (heights[:, None] + heights[None, :]) / 2
    # The neighbour's extent along i's axis: its width when the axes agree.
    gap = (np.abs(along) - w_mean) / np.maximum(w_mean, 1e-9)
    across_rel = np.abs(across) / np.maximum(h_mean, 1e-9)
    size_ratio = np.maximum(heights[:, None], heights[None, :]) / np.maximum(
        np.minimum(heights[:, None], heights[None, :]), 1e-9
    )
    ok = (
        (gap <= max_gap)
        & (gap >= -MAX_OVERLAP)
        & (across_rel <= MAX_ACROSS)
        & (cos_axes >= np.cos(np.radians(MAX_ANGLE_DEG)))
        & (size_ratio <= MAX_SIZE_RATIO)
    )
    # Judge each pair from both tiles' frames: both must agree.
    ok = ok & ok.T
    ii, jj = np.nonzero(np.triu(ok, 1))
    if len(ii) == 0:
        return []
    # The same float64 arithmetic per pair as one pair at a time, for all pairs at once.
    g = np.maximum(gap[ii, jj], gap[jj, ii])
    a = np.maximum(across_rel[ii, jj], across_rel[jj, ii])
    angle = 1.0 - cos_axes[ii, jj]
    cost = np.maximum(g, 0.0) + 0.5 * np.maximum(-g, 0.0) + a + 5.0 * angle
    side_i = np.where(along[ii, jj] > 0, 1, -1)
    side_j = np.where(along[jj, ii] > 0, 1, -1)
    # Sorted as the tuples (cost, i, side_i, j, side_j, gap) sort: cheapest first.
    order = np.lexsort((g, side_j, jj, side_i, ii, cost))
    return list(zip(cost[order].tolist(), ii[order].tolist(), side_i[order].tolist(),
                    jj[order].tolist(), side_j[order].tolist(), g[order].tolist(),
                    strict=True))


def group_lines(corners: np.ndarray, *, max_gap: float = MAX_GAP,
                plane: TablePlane | bool | None = None) -> Layout:
    """Group tiles (their (N,4,2) upright corners) into lines of touching tiles.

    `plane`: the table plane to group on (a `TablePlane`), True to estimate it from the
    tiles, False for the photo as it is; None follows `PLANE`. Returns a `Layout` whose
    sets are in reading order along the tiles' right axis, sorted top-to-bottom then
    left-to-right by the first tile.
    """
    corners = np.asarray(corners, np.float64).reshape(-1, 4, 2)
    n = len(corners)
    if n == 0:
        return Layout()
    if plane is None:
        plane = PLANE == "auto"
    if plane is True:
        plane = TablePlane.from_tiles(corners)
    if isinstance(plane, TablePlane) and plane.tilted:
        corners = plane.to_plane(corners)
    else:
        plane = None
    centres, right, _down, widths, heights = tile_frames(corners)
    slots: dict[tuple[int, int], tuple[int, float]] = {}
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for _cost, i, si, j, sj, g in _link_candidates(corners, max_gap):
        if (i, si) in slots or (j, sj) in slots:
            continue
        ri, rj = find(i), find(j)
        if ri == rj:
            continue
        slots[(i, si)] = (j, g)
        slots[(j, sj)] = (i, g)
        parent[ri] = rj

    neighbours: dict[int, list[tuple[int, float]]] = {k: [] for k in range(n)}
    for (i, _side), (j, g) in slots.items():
        neighbours[i].append((j, g))

    seen = np.zeros(n, bool)
    sets, gaps, loose = [], [], []
    for start in range(n):
        if seen[start] or len(neighbours[start]) == 2:
            continue  # walk paths from an end
        path, path_gaps = [start], []
        seen[start] = True
        prev, cur = -1, start
        while True:
            nxt = [(j, g) for j, g in neighbours[cur] if j != prev]
            if not nxt:
                break
            j, g = nxt[0]
            if seen[j]:
                break
            path.append(j)
            path_gaps.append(g)
            seen[j] = True
            prev, cur = cur, j
        if len(path) == 2 and not _tight_pair(right, path, path_gaps[0]):
            loose.extend(path)
            continue
        if len(path) == 1:
            loose.append(start)
            continue
        # Reading direction: the tiles' mean right axis; walk the path along it.
        axis = right[path].sum(axis=0)
        if float(np.dot(centres[path[-1]] - centres[path[0]], axis)) < 0:
            path.reverse()
            path_gaps.reverse()
        sets.append(path)
        gaps.append(path_gaps)
    # Any tile left unseen sits on a cycle (not possible for straight lines); keep it loose.
    loose.extend(int(k) for k in np.nonzero(~seen)[0])

    row_h = _median(heights) if n else 1.0  # np.median's number, without its overhead
    order = sorted(
        range(len(sets)),
        key=lambda k: (
            round(float(centres[sets[k]][:, 1].mean()) / max(row_h, 1e-9)),
            float(centres[sets[k]][:, 0].mean()),
        ),
    )
    return Layout(
        sets=[sets[k] for k in order],
        loose=sorted(loose),
        gaps=[gaps[k] for k in order],
        plane=plane,
    )


def _tight_pair(right: np.ndarray, path: list[int], gap: float) -> bool:
    cos = abs(float(np.dot(right[path[0]], right[path[1]])))
    return gap <= PAIR_MAX_GAP and cos >= np.cos(np.radians(PAIR_MAX_ANGLE_DEG))


def upright_from_axis(quad: np.ndarray, up: tuple[float, float] = (0.0, -1.0)) -> np.ndarray:
    """Reorder a rectangle's 4 corners (any order) clockwise from the upright top-left.

    The tile's "up" is taken as the direction among its four sides' normals closest to
    `up` (a photo direction, default the photo's top). For tiles whose true orientation is
    known only roughly, e.g. labelled polygons: pass the direction the numbers point to.
    """
    q = np.asarray(quad, np.float64).reshape(4, 2)
    c = q.mean(axis=0)
    # Clockwise in image coordinates (y down) means increasing angle atan2(y, x).
    ang = np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0])
    q = q[np.argsort(ang)]
    up_v = np.asarray(up, np.float64)
    up_v = up_v / max(np.linalg.norm(up_v), 1e-9)
    best, best_score = None, -np.inf
    for k in range(4):
        r = np.roll(q, -k, axis=0)  # r0 = top-left candidate
        top_mid = (r[0] + r[1]) / 2
        up_dir = top_mid - c
        up_dir = up_dir / max(np.linalg.norm(up_dir), 1e-9)
        # Tiles are taller than wide: prefer the orientation whose long side is "down".
        w = np.linalg.norm(r[1] - r[0])
        h = np.linalg.norm(r[3] - r[0])
        score = float(np.dot(up_dir, up_v)) + (0.1 if h >= w else 0.0)
        if score > best_score:
            best, best_score = r, score
    return best.astype(np.float32)

"""A turn judged from two photos of the table: BEFORE and AFTER.

Tiles of the two photos are matched by place first and by reading second:

1. The camera may have moved a little between the photos, so the tiles whose reading is
   the same in both (and unique in each) give a similarity transform (RANSAC) from the
   BEFORE photo to the AFTER one; with too few such tiles the photos are taken as aligned.
2. A tile of BEFORE and one of AFTER that lie in the same place (within ~half a tile) are
   the same tile when their readings agree, or when the camera was unsure enough that
   they may (each gives the other's reading some probability): then both take the reading
   the two photos together make most probable. Two identical tiles are told apart by
   where they lie, so a second R5 laid next to the first is the new one.
3. Tiles that moved (the table was rearranged) are matched by reading alone.
4. A numbered tile still unmatched that lies where an unmatched numbered tile lay before,
   read differently with confidence, is taken as the same tile misread in one photo (said
   in `warnings`, marked uncertain): a tile swapped for another on the very same spot
   would have to leave the table, which never happens legally, while misreads do. A joker
   and a numbered tile on one spot stay apart: that is a joker being won back.
5. A pair read differently keeps the AFTER photo's own reading when the merged reading
   would break a set that is valid as the AFTER photo alone reads it (what `scan` says):
   the photos together must never make a valid set invalid.
What is left over in AFTER was played; what is left over in BEFORE left the table. A
tile the camera barely saw lying alone (`TableReading.faint`, maybe a knot in the wood) is
not held against the player: it is left out of the referee's check, and named in
`warnings` when only one photo shows it.

Then both tables are judged (`vision.game.table.judge_table`) and the referee's `check_turn`
says whether the turn was legal, judging what the player changed: a set already invalid in
BEFORE and left as it was is named in `invalid_before`, not held against the player. A
tile matched across the photos is one tile to the referee's count (same reading in both,
counted in both or in neither), so `verdict.played` names the tiles of `played`.
Without a rack photo, the played tiles are assumed to have come from the player's rack.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from vision.game.checks import covered_note, edge_note, hidden_note
from vision.game.layout import Layout, group_lines
from vision.game.table import TableReading, judge_table
from vision.recognition.detections import TileDetections

SAME_PLACE = 0.6  # centres closer than this many tile heights: the same place
UNSURE_SHARE = 0.05  # a reading the other photo gives at least this probability


@dataclass
class TurnReading:
    before: TableReading
    after: TableReading
    verdict: object  # referee TurnVerdict
    matches: list[tuple[int, int]] = field(default_factory=list)  # (before id, after id)
    played: list[int] = field(default_factory=list)  # after ids new on the table
    left: list[int] = field(default_factory=list)  # before ids gone from the table
    moved: list[int] = field(default_factory=list)  # after ids matched by reading only
    touched_sets: list[int] = field(default_factory=list)  # before set indexes changed
    joker_missing: bool = False
    first_meld: bool = False
    warnings: list[str] = field(default_factory=list)
    # Why the verdict needs a person's look before it stands (tiles at one photo's edge,
    # tiles hidden under a hand): the referee judged without them.
    check: list[str] = field(default_factory=list)
    edge_before: list[int] = field(default_factory=list)  # before ids at one photo's edge only
    edge_after: list[int] = field(default_factory=list)  # after ids at one photo's edge only
    covered_before: list[int] = field(default_factory=list)  # before ids hidden in AFTER

    def to_json(self) -> dict:
        v = self.verdict
        codes_a = self.after.detections.codes
        codes_b = self.before.detections.codes
        out = {
            "legal": bool(v.legal),
            "problems": list(v.problems),
            "invalid_before": list(getattr(v, "invalid_before", [])),
            "draw": int(getattr(v, "draw", 0)),
            "played": [{"id": i, "code": codes_a[i]} for i in self.played],
            "left_table": [{"id": i, "code": codes_b[i]} for i in self.left],
            "joker_missing": bool(self.joker_missing),
            "matches": [[int(b), int(a)] for b, a in self.matches],
            "moved": [int(i) for i in self.moved],
            "before": {"tiles": self.before.detections.to_json(), **self.before.to_json()},
            "after": {"tiles": self.after.detections.to_json(), **self.after.to_json()},
            "warnings": list(self.warnings),
            "check": list(self.check),
            "check_ids": [c.ref() for c in self.check],  # the page words them
            "hidden_after": [{"id": i, "code": codes_b[i]} for i in self.covered_before],
            "edge_only": {"before": [{"id": i, "code": codes_b[i]} for i in self.edge_before],
                          "after": [{"id": i, "code": codes_a[i]} for i in self.edge_after]},
        }
        if self.first_meld:
            out["initial_meld_total"] = v.initial_meld_total
            out["table_sets_touched"] = [
                [codes_b[i] for i in self.before.sets[k]] for k in self.touched_sets
            ]
        return out


# ----------------------------------------------------------------------------- matching
def _tile_size(d: TileDetections) -> float:
    if not len(d):
        return 1.0
    q = d.corners
    return float(np.median(np.linalg.norm(q[:, 3] - q[:, 0], axis=1)))


def _align(before: TileDetections, after: TileDetections) -> np.ndarray:
    """2x3 similarity transform from BEFORE photo pixels to AFTER photo pixels."""
    import cv2

    identity = np.array([[1, 0, 0], [0, 1, 0]], np.float64)
    cb, ca = before.codes, after.codes
    count_b, count_a = Counter(cb), Counter(ca)
    pairs = [(i, ca.index(code)) for i, code in enumerate(cb)
             if count_b[code] == 1 and count_a[code] == 1]
    if len(pairs) < 3:
        return identity
    src = before.centers[[i for i, _ in pairs]].astype(np.float32)
    dst = after.centers[[j for _, j in pairs]].astype(np.float32)
    m, inliers = cv2.estimateAffinePartial2D(
        src, dst, method=cv2.RANSAC, ransacReprojThreshold=0.4 * _tile_size(after)
    )
    if m is None or inliers is None or int(inliers.sum()) < 3:
        return identity
    return m.astype(np.float64)


def match_tiles(before: TileDetections, after: TileDetections, align: np.ndarray | None = None):
    """(matches [(before id, after id)], moved after ids, combined probs per match,
    pairs matched by place despite confident different readings). `align`: the 2x3
    BEFORE -> AFTER transform when already found (`_align`)."""
    nb, na = len(before), len(after)
    if nb == 0 or na == 0:
        return [], [], {}, []
    m = _align(before, after) if align is None else align
    cb = before.centers @ m[:, :2].T + m[:, 2]
    ca = after.centers
    size = (_tile_size(before) * float(np.sqrt(abs(np.linalg.det(m[:, :2])))) + _tile_size(after)) / 2
    dist = np.linalg.norm(cb[:, None, :] - ca[None, :, :], axis=2) / max(size, 1e-9)
    pb, pa = before.class_probs, after.class_probs
    ib, ia = before.class_ids, after.class_ids
    same = ib[:, None] == ia[None, :]
    # Each photo gives the other's reading some probability: maybe the same tile, misread.
    maybe = (pb[:, ia] >= UNSURE_SHARE) | (pa[:, ib].T >= UNSURE_SHARE)
    used_b, used_a = set(), set()
    matches, combined = [], {}
    for allowed in (same, maybe & ~same):
        for b, a in _nearest_first(allowed & (dist < SAME_PLACE), dist, used_b, used_a):
            matches.append((b, a))
            joint = pb[b] * pa[a]
            if joint.sum() > 0:
                combined[(b, a)] = joint / joint.sum()
    # Moved tiles: same reading, any place (nearest first).
    moved = []
    for b, a in _nearest_first(same, dist, used_b, used_a):
        matches.append((b, a))
        moved.append(a)
    # Left over on one spot, read differently: one tile misread in one photo.
    joker = before.labels.index("J") if "J" in before.labels else -1
    numbered = (ib[:, None] != joker) & (ia[None, :] != joker)
    misread = []
    for b, a in _nearest_first(numbered & (dist < SAME_PLACE), dist, used_b, used_a):
        matches.append((b, a))
        misread.append((b, a))
        # The photo that was surer decides.
        combined[(b, a)] = pb[b] if pb[b].max() >= pa[a].max() else pa[a]
    return sorted(matches), sorted(moved), combined, misread


def _inside(quads: np.ndarray, frame: tuple[int, int]) -> np.ndarray:
    """(N,) True for each quad wholly inside a `frame` = (width, height) photo."""
    w, h = frame
    return ((quads.min(axis=1) >= 0).all(axis=1) & (quads[..., 0].max(axis=1) <= w - 1)
            & (quads[..., 1].max(axis=1) <= h - 1))


def edge_only(before: TileDetections, after: TileDetections, align: np.ndarray | None,
              matches: list[tuple[int, int]],
              frames: tuple[tuple[int, int] | None, tuple[int, int] | None]
              ) -> tuple[list[int], list[int]]:
    """(BEFORE ids, AFTER ids) of the tiles found in one photo only that lie at the edge of
    the part both photos show: cut by their own photo's edge, or, carried into the other
    photo by the alignment, not wholly inside it. The camera moved between the photos:
    whether such a tile was played or taken away, the photos cannot say."""
    import cv2

    if align is None or frames[0] is None or frames[1] is None:
        return [], []
    matched_b = {b for b, _ in matches}
    matched_a = {a for _, a in matches}
    back = cv2.invertAffineTransform(align)
    out = []
    for det, m, own, other, matched in ((before, align, frames[0], frames[1], matched_b),
                                        (after, back, frames[1], frames[0], matched_a)):
        q = det.corners.astype(np.float64)
        cut = det.at_edge(*own) | ~_inside(q @ m[:, :2].T + m[:, 2], other)
        out.append([i for i in range(len(det)) if cut[i] and i not in matched])
    return out[0], out[1]


def hidden_after(before: TileDetections, after: TileDetections, align: np.ndarray | None,
                 left: list[int], pictures, frames) -> list[int]:
    """BEFORE ids of `left` (found in BEFORE only) whose place in the AFTER photo shows
    something lying over it, or still the tile (`vision.game.occlusion`), not the table:
    hidden (a hand in the photo), not taken away. `pictures`: the two photos' small
    pictures (~160 px wide, BGR); `frames`: the photos' (width, height)."""
    from vision.game import occlusion

    if (align is None or not left or pictures is None
            or any(x is None for x in (*pictures, *frames))):
        return []
    small_b, small_a = (np.asarray(p) for p in pictures)
    to_b = np.array([small_b.shape[1] / frames[0][0], small_b.shape[0] / frames[0][1]])
    to_a = np.array([small_a.shape[1] / frames[1][0], small_a.shape[0] / frames[1][1]])
    quads_b = before.corners.astype(np.float64)
    every_b = occlusion.tiles_mask(small_b.shape, [q * to_b for q in quads_b])
    found_a = occlusion.tiles_mask(small_a.shape, [q * to_a for q in
                                                   after.corners.astype(np.float64)])
    pic_b, pic_a = occlusion.prepare(small_b), occlusion.prepare(small_a)
    out = []
    for b in left:
        look = occlusion.look_of(pic_b, quads_b[b] * to_b, every_b)
        there = (quads_b[b] @ align[:, :2].T + align[:, 2]) * to_a
        if occlusion.place_state(pic_a, there, look, found_a) in (occlusion.COVERED,
                                                                  occlusion.TILE):
            out.append(b)
    return out


def _nearest_first(allowed: np.ndarray, dist: np.ndarray, used_b: set, used_a: set):
    """Greedy one-to-one pairs among the allowed ones, closest first; marks them used."""
    cand = np.argwhere(allowed)
    order = np.argsort(dist[cand[:, 0], cand[:, 1]]) if len(cand) else []
    for k in order:
        b, a = (int(x) for x in cand[k])
        if b in used_b or a in used_a:
            continue
        used_b.add(b)
        used_a.add(a)
        yield b, a


def _with_probs(d: TileDetections, rows: dict[int, np.ndarray], doubt=()) -> TileDetections:
    """A copy of `d` with the given rows of class probabilities, and tiles in `doubt`
    marked uncertain."""
    if not rows and not doubt:
        return d
    probs = d.class_probs.copy()
    ids = d.class_ids.copy()
    uncertain = d.uncertain.copy()
    for i, p in rows.items():
        probs[i] = p
        ids[i] = int(np.argmax(p))
        uncertain[i] = bool(uncertain[i] and p.max() < 0.6)
    for i in doubt:
        uncertain[i] = True
    return TileDetections(d.corners, d.detector_scores, probs, ids, d.labels, uncertain)


def _in_valid_sets(reading: TableReading) -> set[int]:
    return {i for ids, v in zip(reading.sets, reading.verdicts, strict=True) if v.valid
            for i in ids}


def _keep_valid_after_sets(after: TileDetections, combined: dict, doubt: set, rules,
                           layout: Layout | None = None,
                           frame: tuple[int, int] | None = None):
    """(combined, merged): `combined` (merged class probabilities per matched pair), where
    a pair whose merged reading breaks a set that the AFTER photo alone reads as valid takes
    the AFTER photo's own probabilities instead, in both photos: one tile, read as its
    valid set says; `merged` is the AFTER table judged with them. `layout` is the AFTER
    photo's grouping into lines (it depends on the corners alone, so it is made once);
    `frame` its (width, height)."""
    combined = dict(combined)
    alone = None  # what `scan AFTER` says; judged only when a merged set is invalid
    for _round in range(3):
        merged = judge_table(_with_probs(after, {a: p for (_b, a), p in combined.items()},
                                         doubt=doubt), rules, layout=layout, frame=frame)
        in_invalid = {i for ids, v in zip(merged.sets, merged.verdicts, strict=True)
                      if not v.valid for i in ids}
        suspects = [(b, a) for (b, a) in combined if a in in_invalid]
        if not suspects:
            break
        if alone is None:
            alone = judge_table(after, rules, suggest=False, layout=layout)
            valid_alone = _in_valid_sets(alone)
        broken = [(b, a) for (b, a) in suspects if a in valid_alone
                  and merged.detections.codes[a] != alone.detections.codes[a]]
        if not broken:
            break
        for b, a in broken:
            combined[(b, a)] = after.class_probs[a]
    else:
        merged = judge_table(_with_probs(after, {a: p for (_b, a), p in combined.items()},
                                         doubt=doubt), rules, layout=layout, frame=frame)
    return combined, merged


# ----------------------------------------------------------------------------- judging
def judge_turn(before: TileDetections, after: TileDetections, *, rules=None,
               rack: TileDetections | list | None = None, first_meld: bool = False,
               frames: tuple[tuple[int, int] | None, tuple[int, int] | None] = (None, None),
               hidden=(), pictures=None) -> TurnReading:
    """The referee's turn check from the tiles of a BEFORE and an AFTER photo.

    `rack` is the player's rack before the turn (detections of a rack photo, or a list of
    referee Tiles); None means the played tiles are taken to come from the rack. `frames`:
    the two photos' (width, height), to name the tiles at their edges. `hidden`: AFTER ids
    the camera did not see when the table was read, under a hand or another thing (the live
    tracker keeps them where they lay: `TrackerUpdate.covered`); they count as on the
    table, and the verdict asks for a look. `pictures`: the two photos' small pictures
    (~160 px wide, BGR): a tile found in BEFORE only whose place in AFTER shows a hand or
    the like (`hidden_after`) is hidden, not taken away, and named for a check.
    """
    from referee import DEFAULT_RULES, Tile, check_turn

    rules = rules or DEFAULT_RULES
    align = _align(before, after) if len(before) and len(after) else None
    matches, moved, combined, misread = match_tiles(before, after, align)
    was_b = [before.labels[k] for k in before.class_ids]
    was_a = [after.labels[k] for k in after.class_ids]
    combined, merged = _keep_valid_after_sets(after, combined, {a for _b, a in misread}, rules,
                                              group_lines(after.corners) if len(after) else None,
                                              frames[1])
    before = _with_probs(before, {b: p for (b, _a), p in combined.items()},
                         doubt={b for b, _a in misread})
    after = _with_probs(after, {a: p for (_b, a), p in combined.items()},
                        doubt={a for _b, a in misread})
    table_b = judge_table(before, rules, suggest=False, frame=frames[0])
    table_a = merged  # judged from these very probabilities
    warnings = [f"tile {a} read {was_a[a]} after but {was_b[b]} before on the same spot: "
                f"taken as one tile, {after.codes[a]}; check it" for b, a in misread]
    # The rules may re-read a matched tile in one photo (each photo's sets ask for their
    # own reading): keep the pair agreeing. It is one tile, so the referee counts it in
    # BEFORE as the AFTER photo reads it, the reading the turn is judged on; else the count
    # says that one tile left the table and another one came from the rack.
    codes_b, codes_a = table_b.detections.codes, table_a.detections.codes
    counted_b = list(codes_b)
    for b, a in matches:
        if codes_b[b] != codes_a[a]:
            warnings.append(f"tile {a} reads {codes_a[a]} after but {codes_b[b]} before")
            counted_b[b] = codes_a[a]
    matched_b = {b for b, _ in matches}
    matched_a = {a for _, a in matches}
    played = [a for a in range(len(after)) if a not in matched_a]
    left = [b for b in range(len(before)) if b not in matched_b]
    # A barely-seen lone tile is more likely a knot than a tile: not held against anyone.
    for label, reading, unmatched in (("after", table_a, played), ("before", table_b, left)):
        codes = reading.detections.codes
        for i in sorted(set(reading.faint) & set(unmatched)):
            warnings.append(f"tile {i} ({codes[i]}?) seen only in the {label} photo, barely and "
                            f"alone: left out of the turn check; check the table there")
    played = [a for a in played if a not in table_a.faint]
    left = [b for b in left if b not in table_b.faint]
    # Found in one photo only, at the edge of what both show: not counted either way.
    edge_b, edge_a = edge_only(before, after, align, matches, frames)
    played = [a for a in played if a not in edge_a]
    left = [b for b in left if b not in edge_b]
    covered_b = hidden_after(before, after, align, left, pictures, frames)
    left = [b for b in left if b not in covered_b]
    check = []
    hidden = sorted({int(i) for i in hidden if 0 <= int(i) < len(after)})
    if hidden:
        check.append(hidden_note([codes_a[i] for i in hidden]))
    if covered_b:
        check.append(covered_note([codes_b[b] for b in covered_b]))
    if edge_b or edge_a:
        check.append(edge_note([codes_b[b] for b in edge_b], [codes_a[a] for a in edge_a]))
    # A faint tile matched to one the other photo sees clearly is a tile: counted on both
    # sides or on neither, as the matching says it stayed.
    faint_b = set(table_b.faint) - {b for b, a in matches if a not in table_a.faint}
    faint_a = set(table_a.faint) - {a for b, a in matches if b not in table_b.faint}

    def table_of(reading: TableReading, codes, faint, edge):
        sets = [[Tile.from_code(codes[i]) for i in s if i not in edge] for s in reading.sets]
        sets = [s for s in sets if s]
        sets += [[Tile.from_code(codes[i])] for i in reading.loose
                 if i not in faint and i not in edge]
        return sets

    if rack is None:
        rack_tiles = [Tile.from_code(codes_a[a]) for a in played]
    elif isinstance(rack, TileDetections):
        rack_tiles = [Tile.from_code(c) for c in rack.codes]
    else:
        rack_tiles = list(rack)
    verdict = check_turn(table_of(table_b, counted_b, faint_b, set(edge_b) | set(covered_b)),
                         table_of(table_a, codes_a, faint_a, set(edge_a)), rack_tiles,
                         not first_meld, rules)
    after_of = dict(matches)
    after_sets = {tuple(sorted(s)) for s in table_a.sets}
    touched = [k for k, s in enumerate(table_b.sets)
               if tuple(sorted(after_of.get(b, -1) for b in s)) not in after_sets]
    joker_missing = any(t.is_joker for t in verdict.left_table)
    if rack is None:
        warnings.append("no rack photo: the played tiles are taken to come from the rack")
    return TurnReading(table_b, table_a, verdict, matches, played, left, moved, touched,
                       joker_missing, first_meld, warnings, check, edge_b, edge_a, covered_b)

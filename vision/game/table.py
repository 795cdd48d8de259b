"""The table a photo shows, judged: tiles -> sets -> referee verdicts, read with the rules.

`judge_table(detections, rules)` groups the tiles into sets (`vision.game.layout`), reads each
set with the referee, and uses the rules to settle what the camera was unsure of:

- Where the best reading of a set breaks a rule that another plausible reading of one of
  its tiles satisfies (one odd colour in a run, a number that breaks a run, a group with a
  repeated colour), the most probable consistent reading is chosen. "Plausible" means the
  classifier gave the alternative at least `ALT_RATIO` of the best reading's probability:
  players do lay invalid sets, so a confident reading is never talked into validity.
- Where the table holds more copies of a tile than the edition has, the copy whose
  alternative reading costs least (and keeps its set valid) is re-read.
- Each change is said in `warnings`. A tile whose reading stays doubtful keeps
  `uncertain=True`; one whose doubt the rules settled (exactly one plausible reading keeps
  its set valid) is no longer uncertain.
- A line of tiles that is invalid as one set, but splits at its widest gap into valid
  sets, is taken as those sets (two sets laid end to end).
- A barely-seen tile at the end of a line (detector score x class probability below
  `DOUBTFUL_BELOW`) is left out of the set when the rest is a valid set without it: a
  knot in the wood or a spot on the cloth beside a run must not lengthen or break it.
  It stays on the table as a loose, uncertain tile.
- A barely-seen loose tile (the same measure) is listed in `loose` and named in `warnings`
  but does not make the table invalid: a referee does not fail a table for a knot in the
  wood. True tiles measure at least 0.59 on the real photos; the annotation draws such a
  tile dashed with a "?" for a player to look at.

When the table is not valid but its tiles can be arranged into valid sets, `suggestion`
holds one such arrangement (tile codes), from the referee's solver.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache, lru_cache

import numpy as np

from vision.game.layout import Layout, group_lines
from vision.recognition.detections import TileDetections

ALT_RATIO = 0.05  # an alternative reading is plausible at >= this share of the best one
ALT_MIN = 0.01  # ... and at least this probability
TOP_K = 3  # readings per tile considered
# A tile turned against the rest of its set is read the set's way round when that reading
# holds this share of the reading as drawn (as a rack's, `vision.game.rack.RACK_WAY_RATIO`)...
SET_WAY_RATIO = 0.01
SET_WAY_COS = np.cos(np.radians(25))  # ... and the set's tiles agree within 25 degrees
RESOLVED_MIN = 0.1  # readings this probable count when deciding if the rules settled a tile
SPLIT_MIN_GAP = 0.15  # a line splits only at a gap at least this wide (tile widths)
# Detector score x best class probability: true tiles measure >= 0.59 on the real valid/
# photos (7 of 5,431 below 0.3 on rendered tables), false finds 0.10-0.26.
DOUBTFUL_BELOW = 0.3
# The suggestion's search stops after this many states: a legal 106-tile table needs ~100,
# the slowest random draws far more. `python -m bench.table_bench`: 80 loose random tiles
# take at most ~47 ms capped (3 % give up) against ~115 ms uncapped.
SUGGEST_MAX_STATES = 10_000


@dataclass
class TableReading:
    """Everything `scan` reports about a table beyond the tiles themselves."""

    detections: TileDetections
    sets: list[list[int]] = field(default_factory=list)
    loose: list[int] = field(default_factory=list)
    verdicts: list = field(default_factory=list)  # referee SetVerdicts, one per set
    table_valid: bool = True
    suggestion: list[list[str]] | None = None
    warnings: list[str] = field(default_factory=list)
    rereads: dict[int, tuple[str, str]] = field(default_factory=dict)  # id -> (was, now)
    faint: list[int] = field(default_factory=list)  # loose, barely seen, not counted
    edge: list[int] = field(default_factory=list)  # at the photo's edge: may be cut off

    def to_json(self) -> dict:
        sets = []
        for ids, verdict in zip(self.sets, self.verdicts, strict=True):
            sets.append(
                {
                    "tiles": [int(i) for i in ids],
                    "valid": bool(verdict.valid),
                    "kind": verdict.kind,
                    "reasons": list(verdict.reasons),
                    "notes": list(verdict.notes),
                    "jokers": [t.code() for t in verdict.jokers],
                    "value": int(verdict.value),
                }
            )
        return {
            "sets": sets,
            "loose": [int(i) for i in self.loose],
            "table_valid": bool(self.table_valid),
            "suggestion": self.suggestion,
            "edge_tiles": [int(i) for i in self.edge],
        }


# ----------------------------------------------------------------------------- helpers
@cache
def _tile(code: str):
    from referee import Tile

    return Tile.from_code(code)


@lru_cache(maxsize=8192)
def _verdict(codes: tuple[str, ...], rules):
    from referee import check_set

    return check_set([_tile(c) for c in codes], rules)


def _alternatives(probs: np.ndarray, labels: tuple[str, ...], current: int) -> list[tuple[int, float]]:
    """Plausible other readings of one tile: (class id, probability), most probable first."""
    best = float(probs[current])
    order = np.argsort(-probs)[: TOP_K + 1]
    out = []
    for k in order:
        k = int(k)
        p = float(probs[k])
        if k == current or p < ALT_MIN or p < ALT_RATIO * best:
            continue
        out.append((k, p))
    return out[:TOP_K]


def _log(p: float) -> float:
    return float(np.log(max(p, 1e-12)))


# ----------------------------------------------------------------------------- judging
def judge_table(detections: TileDetections, rules=None, *, suggest: bool = True,
                layout: Layout | None = None,
                frame: tuple[int, int] | None = None) -> TableReading:
    """Group, re-read with the rules, and judge the tiles of one table photo.

    `frame`: the photo's (width, height), to warn about tiles its edge may cut."""
    from referee import DEFAULT_RULES, SearchBudgetExceeded, TooManyTiles, arrange, copy_problems

    rules = rules or DEFAULT_RULES
    n = len(detections)
    if n == 0:
        return TableReading(detections=detections)
    layout = layout or group_lines(detections.corners)
    labels = tuple(detections.labels)
    ids = detections.class_ids.astype(np.int64).copy()
    uncertain = detections.uncertain.astype(bool).copy()
    probs = detections.class_probs
    warnings: list[str] = []
    rereads: dict[int, tuple[str, str]] = {}

    def codes_of(members) -> tuple[str, ...]:
        return tuple(labels[ids[i]] for i in members)

    # 1. A barely-seen tile at a line's end may be no tile; one line may be two sets laid
    #    end to end: split it where that makes valid sets.
    sets: list[list[int]] = []
    loose = list(layout.loose)
    confidence = detections.tile_scores
    for members, gaps in zip(layout.sets, layout.gaps, strict=True):
        members, gaps, dropped = _drop_doubtful_ends(members, gaps, confidence, codes_of, rules)
        for i in dropped:
            uncertain[i] = True
            loose.append(i)
            warnings.append(
                f"tile {i} ({labels[ids[i]]}?) at the end of a set is barely seen "
                f"(confidence {confidence[i]:.2f}): left out of the set, which is valid "
                f"without it"
            )
        sets.extend(_split_line(members, gaps, codes_of, rules))

    # 1b. The tiles of a set face one way: a tile read turned round against all the others
    #     of its set is read again the set's way round, when that reading is plausible.
    turned = _face_the_set(detections, sets)
    corners = detections.corners.copy() if turned else detections.corners
    _read_turned(turned, ids, corners, labels, rereads, warnings, "a set face one way")
    # 1c. A set read facing two ways that is not valid as read, but is valid with one side
    #     read the other way round (each such reading plausible): that side is turned.
    if detections.flip_probs is not None:
        for members in sets:
            if (len(members) < 3 or any(i in rereads for i in members)
                    or _verdict(codes_of(members), rules).valid):
                continue
            turned = _turn_one_side(detections, members, labels, rules)
            if turned:
                if corners is detections.corners:
                    corners = corners.copy()
                _read_turned(turned, ids, corners, labels, rereads, warnings,
                             "a set face one way, and read so it is valid")

    # 2. Per set: the most probable reading that makes it valid, one tile changed at most.
    for members in sets:
        if _verdict(codes_of(members), rules).valid:
            continue
        best = None  # (log-prob loss, position, class id)
        for pos, i in enumerate(members):
            for k, p in _alternatives(probs[i], labels, int(ids[i])):
                trial = list(codes_of(members))
                trial[pos] = labels[k]
                if _verdict(tuple(trial), rules).valid:
                    loss = _log(float(probs[i][ids[i]])) - _log(p)
                    if best is None or loss < best[0]:
                        best = (loss, pos, k)
        if best is not None:
            _, pos, k = best
            i = members[pos]
            was = labels[ids[i]]
            ids[i] = k
            rereads[i] = (was, labels[k])
            warnings.append(
                f"tile {i} read as {labels[k]}, not {was}: {was} breaks its set "
                f"({' '.join(codes_of(members))} is valid with {labels[k]})"
            )

    # 3. More copies of a tile than the edition has: re-read the cheapest copy.
    for _round in range(8):
        if not _may_break_the_box(ids, labels, rules):
            break  # what copy_problems would say at more cost: nothing
        problems = copy_problems([_tile(labels[k]) for k in ids], rules)
        if not problems:
            break
        changed = _fix_copies(ids, probs, labels, sets, rules, rereads, warnings)
        if not changed:
            for problem in problems:
                warnings.append(f"impossible count: {problem} (misread tiles, or another box)")
            break

    # 4. Doubt settled by the rules, or not: a tile is settled when its set is valid as
    #    read and no other plausible reading of it (>= RESOLVED_MIN) keeps the set valid.
    #    (Every tile's plausible readings are found in one pass over the probabilities.)
    plausible: dict[int, list[int]] = {}
    for i, k in zip(*(a.tolist() for a in np.nonzero(probs >= RESOLVED_MIN)), strict=True):
        plausible.setdefault(i, []).append(k)
    read = ids.tolist()
    for members in sets:
        codes = [labels[read[j]] for j in members]
        valid = _verdict(tuple(codes), rules).valid
        for pos, i in enumerate(members):
            settled = valid and not any(
                _verdict(tuple(codes[:pos] + [labels[k]] + codes[pos + 1:]), rules).valid
                for k in plausible.get(i, ()) if k != read[i])
            if i in rereads:
                uncertain[i] = not settled
            elif uncertain[i] and settled:
                uncertain[i] = False

    out = TileDetections(
        corners=corners,
        detector_scores=detections.detector_scores,
        class_probs=detections.class_probs,
        class_ids=ids,
        labels=labels,
        uncertain=uncertain,
    )
    loose = sorted(loose)
    verdicts = [_verdict(codes_of(members), rules) for members in sets]
    faint = [i for i in loose if confidence[i] < DOUBTFUL_BELOW]
    counted = [i for i in loose if i not in faint]
    table_valid = all(v.valid for v in verdicts) and not counted
    if counted:
        warnings.append(
            f"{len(counted)} loose tile(s) in no set: ids {', '.join(map(str, counted))}"
        )
    for i in faint:
        uncertain[i] = True
        warnings.append(
            f"tile {i} ({labels[ids[i]]}?) lies alone and is barely seen (confidence "
            f"{confidence[i]:.2f}): maybe no tile at all, not counted against the table; "
            f"check there"
        )
    edge = edge_tiles(out, frame)
    warnings.extend(edge_warning(edge, "table"))
    doubtful = [i for i in range(n) if uncertain[i]]
    if doubtful:
        warnings.append(
            f"{len(doubtful)} tile(s) still uncertain after the rules: "
            f"ids {', '.join(map(str, doubtful))}"
        )
    suggestion = None
    if suggest and not table_valid:
        counted_tiles = [_tile(labels[ids[i]]) for i in range(n) if i not in faint]
        try:
            arranged = arrange(counted_tiles, rules, max_states=SUGGEST_MAX_STATES)
        except SearchBudgetExceeded as error:
            arranged = None
            warnings.append(f"no suggestion: the search for a valid arrangement gave up "
                            f"({error})")
        except TooManyTiles as error:
            arranged = None  # two boxes, or many false finds: nothing to arrange
            warnings.append(f"no suggestion: {error}")
        if arranged:
            suggestion = [[t.code() for t in s] for s in arranged]
    return TableReading(out, sets, loose, verdicts, table_valid, suggestion, warnings, rereads,
                        faint, edge)


def edge_tiles(detections: TileDetections, frame: tuple[int, int] | None) -> list[int]:
    """The tiles at the edge of a photo of `frame` = (width, height) (none without it)."""
    if frame is None or len(detections) == 0:
        return []
    return [int(i) for i in np.nonzero(detections.at_edge(*frame))[0]]


def edge_warning(edge: list[int], what: str) -> list[str]:
    """The warning for tiles at the photo's edge: the frame may cut a tile's number off or
    hide a tile beyond it, and the readings and totals then miss it (most tiles the reader
    misses are cut by the edge)."""
    if not edge:
        return []
    return [f"{len(edge)} tile(s) at the photo's edge (ids {', '.join(map(str, edge))}): "
            f"the edge may cut them or hide more; photograph the whole {what}"]


def _read_turned(turned, ids, corners, labels, rereads, warnings, because: str) -> None:
    """Re-read each (tile, class id) of `turned` the other way round: its reading, its
    corners (the top is now the other end), the reread and the warning saying why."""
    for i, k in turned:
        was = labels[ids[i]]
        ids[i] = k
        corners[i] = np.roll(corners[i], 2, axis=0)
        rereads[i] = (was, labels[k])
        warnings.append(f"tile {i} read as {labels[k]}, not {was}: the tiles of {because}")


def _face_the_set(d: TileDetections, sets: list[list[int]]) -> list[tuple[int, int]]:
    """(tile, class id) for tiles read turned round against every other tile of their set
    (at least two, agreeing) whose reading the set's way round is plausible and differs.
    An edition that prints 6 and 9 alike on a centred face tells them apart only by the
    tiles beside them, which a player lays the same way up; a confident reading (a 6 with
    its mark) is left as read."""
    # Tiles with a plausible other-way reading first (few, and cheap to find for all).
    other, share = d.other_way()
    could = (other != d.class_ids) & (share >= SET_WAY_RATIO)
    if not could.any():
        return []
    up = d.up_vectors
    out = []
    for members in sets:
        if len(members) < 3 or not could[members].any():
            continue
        for i in members:
            if not could[i]:
                continue
            others = up[[j for j in members if j != i]]
            way = others.sum(axis=0)
            way /= max(float(np.hypot(*way)), 1e-9)
            # The others agree on a way up, and tile i lies against it.
            if (others @ way).min() >= SET_WAY_COS and up[i] @ way <= -SET_WAY_COS:
                out.append((i, int(other[i])))
    return out


def _turn_one_side(d: TileDetections, members: list[int], labels, rules) -> list[tuple[int, int]]:
    """(tile, class id) re-readings of the likelier side of a set read facing two ways
    (a group of 6s read as two 6s and two 9s) that make it valid; [] if none does. A tile
    that reads the same either way round (an 8) goes with either side unchanged."""
    up = d.up_vectors[members]
    along = up @ up[0]
    if not (np.abs(along) >= SET_WAY_COS).all() or (along > 0).all():
        return []  # not two clear ways up
    other, share = d.other_way()
    best = None  # (cost, re-readings)
    for side in (along > 0, along < 0):
        trial = [labels[int(d.class_ids[i])] for i in members]
        turned, cost = [], 0.0
        for pos in np.flatnonzero(side):
            i = members[pos]
            k = int(other[i])
            if k == int(d.class_ids[i]):
                continue
            if share[i] < SET_WAY_RATIO:
                break  # a sure reading on this side: it does not turn
            trial[pos] = labels[k]
            turned.append((i, k))
            cost -= float(np.log(share[i]))
        else:
            if turned and _verdict(tuple(trial), rules).valid and (best is None
                                                                   or cost < best[0]):
                best = (cost, turned)
    return best[1] if best else []


def _drop_doubtful_ends(members: list[int], gaps: list[float], confidence, codes_of, rules):
    """(members, gaps, dropped): barely-seen end tiles dropped while the rest is valid."""
    members, gaps, dropped = list(members), list(gaps), []
    while len(members) > 3:
        conf, k = min((float(confidence[members[k]]), k) for k in (0, -1))
        rest = members[1:] if k == 0 else members[:-1]
        if conf >= DOUBTFUL_BELOW or not _verdict(codes_of(rest), rules).valid:
            break
        dropped.append(members[k])
        members, gaps = rest, (gaps[1:] if k == 0 else gaps[:-1])
    return members, gaps, dropped


def _split_line(members: list[int], gaps: list[float], codes_of, rules) -> list[list[int]]:
    """`members` as one set, or split at its widest gap when both parts are valid sets."""
    if len(members) < 6 or _verdict(codes_of(members), rules).valid:
        return [members]
    k = int(np.argmax(gaps))
    if gaps[k] < SPLIT_MIN_GAP or k + 1 < 3 or len(members) - (k + 1) < 3:
        return [members]
    left, right = members[: k + 1], members[k + 1 :]
    if _verdict(codes_of(left), rules).valid and _verdict(codes_of(right), rules).valid:
        return [left, right]
    return [members]


def _fix_copies(ids, probs, labels, sets, rules, rereads, warnings) -> bool:
    """Re-read one copy of an over-counted tile; True when something changed."""
    from collections import Counter

    from referee import copy_problems

    counts = Counter(labels[k] for k in ids)
    limit = {code: (rules.jokers if code == "J" else rules.copies) for code in counts}
    over = [code for code, c in counts.items() if c > limit[code]]
    set_of = {i: members for members in sets for i in members}
    best = None  # (loss, tile, class id)
    for code in over:
        for i in np.nonzero([labels[k] == code for k in ids])[0]:
            i = int(i)
            for k, p in _alternatives(probs[i], labels, int(ids[i])):
                alt = labels[k]
                if counts.get(alt, 0) + 1 > (rules.jokers if alt == "J" else rules.copies):
                    continue
                members = set_of.get(i)
                if members is not None:
                    was_valid = _verdict(tuple(labels[ids[j]] for j in members), rules).valid
                    trial = tuple(alt if j == i else labels[ids[j]] for j in members)
                    if was_valid and not _verdict(trial, rules).valid:
                        continue
                loss = _log(float(probs[i][ids[i]])) - _log(p)
                if best is None or loss < best[0]:
                    best = (loss, i, k)
    if best is None:
        return False
    _, i, k = best
    was = labels[ids[i]]
    ids[i] = k
    rereads[i] = (rereads.get(i, (was,))[0], labels[k])
    problem = copy_problems([_tile(was)] * counts[was], rules)
    why = problem[0] if problem else f"too many {was}"
    warnings.append(f"tile {i} read as {labels[k]}, not {was}: {why}")
    return True


def _may_break_the_box(ids, labels, rules) -> bool:
    """False when `copy_problems` has nothing to say about the tiles read as `ids`: no
    code more often than the edition has it, no colour it does not print. (A count of
    the codes; copy_problems itself builds and sorts every tile.)"""
    from collections import Counter

    for code, count in Counter(labels[k] for k in ids.tolist()).items():
        tile = _tile(code)
        if tile.is_joker:
            if count > rules.jokers:
                return True
        elif tile.color not in rules.colors or count > rules.copies:
            return True
    return False

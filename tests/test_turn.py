"""A turn from two photos: tiles matched by place and reading, then the referee's check."""

from __future__ import annotations

import math

import numpy as np

from referee import Tile, edition
from tests.table_helpers import detections_from, row
from vision.turn import judge_turn, match_tiles

RULES = edition("original")


def _moved(quads, angle_deg=4.0, shift=(25.0, -12.0), scale=1.03):
    """The same tiles seen by a camera that moved a little."""
    a = math.radians(angle_deg)
    m = scale * np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    return [np.asarray(q) @ m.T + np.array(shift) for q in quads]


def _table(sets_with_places):
    codes, quads = [], []
    for set_codes, (x, y) in sets_with_places:
        codes += set_codes
        quads += row(set_codes, x=x, y=y)
    return codes, quads


def test_identical_tiles_are_told_apart_by_place():
    before_codes, before_quads = _table([(["R3", "R4", "R5"], (100, 100)),
                                         (["K9", "B9", "O9"], (100, 300))])
    after_codes, after_quads = _table([(["K9", "B9", "O9"], (100, 300)),
                                       (["R5", "K5", "B5"], (400, 500)),
                                       (["R3", "R4", "R5"], (100, 100))])
    before = detections_from(before_codes, before_quads)
    after = detections_from(after_codes, _moved(after_quads))
    turn = judge_turn(before, after, rules=RULES)
    assert turn.verdict.legal, turn.verdict.problems
    assert sorted(turn.played) == [3, 4, 5]  # the new R5 is the one in the new set
    assert turn.left == [] and not turn.joker_missing
    assert sorted(turn.matches) == sorted([(0, 6), (1, 7), (2, 8), (3, 0), (4, 1), (5, 2)])


def test_joker_taken_to_the_rack_is_illegal():
    before_codes, before_quads = _table([(["R3", "J", "R5"], (100, 100))])
    after_codes, after_quads = _table([(["R3", "R4", "R5"], (100, 100))])
    turn = judge_turn(detections_from(before_codes, before_quads),
                      detections_from(after_codes, after_quads), rules=RULES)
    assert turn.joker_missing and not turn.verdict.legal
    assert turn.played == [1] and turn.left == [1]
    assert any("joker" in p for p in turn.verdict.problems)


def test_first_meld_total_and_untouched_table():
    before_codes, before_quads = _table([(["K1", "K2", "K3"], (100, 100))])
    after_codes, after_quads = _table([(["K1", "K2", "K3"], (100, 100)),
                                       (["R10", "R11", "R12"], (100, 400))])
    turn = judge_turn(detections_from(before_codes, before_quads),
                      detections_from(after_codes, after_quads), rules=RULES, first_meld=True)
    assert turn.verdict.legal and turn.verdict.initial_meld_total == 33
    assert turn.touched_sets == []
    out = turn.to_json()
    assert out["initial_meld_total"] == 33 and out["table_sets_touched"] == []
    assert [p["code"] for p in out["played"]] == ["R10", "R11", "R12"]


def test_first_meld_too_small_and_touching_the_table():
    before_codes, before_quads = _table([(["K1", "K2", "K3"], (100, 100))])
    after_codes, after_quads = _table([(["K1", "K2", "K3", "K4"], (100, 100)),
                                       (["R1", "B1", "O1"], (100, 400))])
    turn = judge_turn(detections_from(before_codes, before_quads),
                      detections_from(after_codes, after_quads), rules=RULES, first_meld=True)
    assert not turn.verdict.legal
    assert turn.touched_sets == [0]
    assert turn.verdict.initial_meld_total == 3


def test_misread_in_one_photo_is_settled_by_the_other():
    codes = ["B5", "B6", "B7"]
    before = detections_from(codes, row(codes))
    # AFTER reads the 6 as a 9 with the 6 close behind; the place says it is the same tile.
    after = detections_from(["B5", "B9", "B7"], row(codes), probs={1: {"B9": 0.55, "B6": 0.4}})
    matches, moved, combined, _misread = match_tiles(before, after)
    assert sorted(matches) == [(0, 0), (1, 1), (2, 2)] and moved == []
    turn = judge_turn(before, after, rules=RULES)
    assert turn.after.detections.codes == codes
    assert not turn.verdict.legal  # nothing was laid
    assert turn.played == []


def test_rearranged_table_tiles_are_matched_by_reading():
    before_codes, before_quads = _table([(["R3", "R4", "R5", "R6"], (100, 100))])
    after_codes, after_quads = _table([(["R3", "R4", "R5"], (100, 100)),
                                       (["R6", "K6", "B6"], (100, 400))])
    rack = [Tile.from_code("K6"), Tile.from_code("B6"), Tile.from_code("O2")]
    turn = judge_turn(detections_from(before_codes, before_quads),
                      detections_from(after_codes, after_quads), rules=RULES, rack=rack)
    assert turn.verdict.legal, turn.verdict.problems
    assert turn.moved == [3] and sorted(turn.played) == [4, 5]


def test_a_tile_read_confidently_differently_on_the_same_spot_is_one_tile_misread():
    before_codes, before_quads = _table([(["R7", "R8", "R9"], (100, 100))])
    after_codes, after_quads = _table([(["R7", "R8", "K9"], (100, 100)),
                                       (["B1", "B2", "B3"], (100, 400))])
    before = detections_from(before_codes, before_quads)
    after = detections_from(after_codes, _moved(after_quads), probs={2: {"K9": 0.7, "B9": 0.3}})
    turn = judge_turn(before, after, rules=RULES)
    # Not "R9 left the table, K9 was played": one tile, misread in one photo; the surer
    # photo's reading stands.
    assert turn.left == [] and sorted(turn.played) == [3, 4, 5]
    assert turn.after.detections.codes[2] == "R9" and turn.verdict.legal
    assert any("same spot" in w and "R9" in w and "K9" in w for w in turn.warnings)
    assert not before.uncertain.any()  # the caller's detections are not changed


def test_a_joker_won_back_on_its_spot_is_not_taken_for_a_misread():
    before_codes, before_quads = _table([(["R7", "J", "R9"], (100, 100))])
    after_codes, after_quads = _table([(["R7", "R8", "R9"], (100, 100))])
    turn = judge_turn(detections_from(before_codes, before_quads),
                      detections_from(after_codes, after_quads), rules=RULES)
    assert turn.joker_missing and turn.played == [1] and turn.left == [1]


def test_a_barely_seen_lone_tile_in_one_photo_is_not_held_against_the_player():
    before_codes, before_quads = _table([(["R7", "R8", "R9"], (100, 100))])
    after_codes, after_quads = _table([(["R7", "R8", "R9"], (100, 100)),
                                       (["B1", "B2", "B3"], (100, 400))])
    after_codes.append("J")  # a knot in the wood, read as a joker
    after_quads += row(["J"], x=600, y=600)
    after = detections_from(after_codes, after_quads, scores={6: 0.15})
    turn = judge_turn(detections_from(before_codes, before_quads), after, rules=RULES)
    assert turn.verdict.legal, turn.verdict.problems
    assert sorted(turn.played) == [3, 4, 5]
    assert any("tile 6 (J?)" in w and "left out of the turn check" in w for w in turn.warnings)
    # Clearly seen, the same lone tile is a real problem.
    after = detections_from(after_codes, after_quads)
    turn = judge_turn(detections_from(before_codes, before_quads), after, rules=RULES)
    assert not turn.verdict.legal and 6 in turn.played
    assert any("lies alone" in p for p in turn.verdict.problems)


def test_a_knot_seen_in_both_photos_is_not_a_lone_tile_on_the_table():
    before_codes, before_quads = _table([(["R7", "R8", "R9"], (100, 100))])
    after_codes, after_quads = _table([(["R7", "R8", "R9"], (100, 100)),
                                       (["B1", "B2", "B3"], (100, 400))])
    knot = row(["J"], x=600, y=600)
    before = detections_from(before_codes + ["J"], before_quads + knot, scores={3: 0.15})
    after = detections_from(after_codes + ["J"], after_quads + knot, scores={6: 0.2})
    turn = judge_turn(before, after, rules=RULES)
    assert turn.verdict.legal, turn.verdict.problems
    assert sorted(turn.played) == [3, 4, 5] and turn.left == []

"""A turn from two photos: tiles matched by place and reading, then the referee's check."""

from __future__ import annotations

import math

import numpy as np

from referee import Tile, edition
from tests.table_helpers import detections_from, row
from vision.game.turn import judge_turn, match_tiles

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


def test_the_merge_never_breaks_a_set_the_after_photo_reads_as_valid():
    # Seen on real photos: B11 B12 B13, read right by `scan AFTER`, became "B11 B1 B13
    # INVALID" in `turn`, because the BEFORE photo read the middle tile B1 more surely.
    before_codes, before_quads = _table([(["B11", "B1", "B13"], (100, 100))])
    after_codes, after_quads = _table([(["B11", "B12", "B13"], (100, 100))])
    before = detections_from(before_codes, before_quads)
    after = detections_from(after_codes, after_quads, probs={1: {"B12": 0.9, "B1": 0.1}})
    turn = judge_turn(before, after, rules=RULES)
    assert turn.after.detections.codes == ["B11", "B12", "B13"]
    assert all(v.valid for v in turn.after.verdicts)
    # One tile on one spot: nothing played, nothing taken away; the turn is a pass.
    assert turn.played == [] and turn.left == []
    assert not any("invalid" in p for p in turn.verdict.problems), turn.verdict.problems


def test_the_same_photo_twice_is_a_pass_and_old_invalid_sets_are_not_this_players():
    codes, quads = _table([(["R3", "R4", "R5"], (100, 100)), (["K9", "R9", "K9"], (100, 300))])
    table = detections_from(codes, quads)
    turn = judge_turn(table, table, rules=RULES)
    problems = turn.verdict.problems
    assert problems == ["laid nothing from the rack: a pass"] and turn.verdict.draw == 1
    assert len(turn.verdict.invalid_before) == 1
    assert "K9 R9 K9" in turn.verdict.invalid_before[0]
    assert "already invalid before this turn" in turn.verdict.invalid_before[0]
    assert turn.to_json()["invalid_before"] == turn.verdict.invalid_before


def test_a_turn_is_judged_on_what_the_player_changed():
    before_codes, before_quads = _table([(["R3", "R4", "R5"], (100, 100)),
                                         (["K9", "R9", "K9"], (100, 300))])
    after_codes, after_quads = _table([(["R3", "R4", "R5"], (100, 100)),
                                       (["K9", "R9", "K9"], (100, 300)),
                                       (["B1", "B2", "B3"], (100, 500))])
    turn = judge_turn(detections_from(before_codes, before_quads),
                      detections_from(after_codes, after_quads), rules=RULES)
    # The old invalid group was left as it was: named, but the valid new run stands.
    assert turn.verdict.legal, turn.verdict.problems
    assert sorted(turn.played) == [6, 7, 8] and turn.verdict.invalid_before
    # Its place among the sets after the turn, so a caller can leave it out of the
    # player's invalid sets.
    [k] = turn.verdict.inherited_sets
    codes = turn.after.detections.codes
    assert sorted(codes[i] for i in turn.after.sets[k]) == ["K9", "K9", "R9"]
    # Adding a tile to the invalid group makes it this player's set: still invalid.
    after_codes, after_quads = _table([(["R3", "R4", "R5"], (100, 100)),
                                       (["K9", "R9", "K9", "B9"], (100, 300))])
    turn = judge_turn(detections_from(before_codes, before_quads),
                      detections_from(after_codes, after_quads), rules=RULES)
    assert not turn.verdict.legal and turn.verdict.invalid_before == []
    assert turn.verdict.inherited_sets == []
    assert any("K9 R9 K9 B9" in p and "invalid" in p for p in turn.verdict.problems)


def _played_codes(turn):
    return sorted(turn.after.detections.codes[i] for i in turn.played)


def test_a_tile_the_rules_reread_differently_in_each_photo_is_still_one_tile():
    # The tile right of K8 K9 is R6 or K10 (0.5 / 0.45). BEFORE's set makes it K10; the
    # player moved K8 K9 into a new run and laid R7 R8 after it, where it reads R6.
    # It never left the table: not "K10 left the table and R6 came from the rack".
    unsure = {"R6": 0.5, "K10": 0.45}
    before_codes, before_quads = _table([(["K8", "K9", "R6"], (100, 100))])
    after_codes, after_quads = _table([(["R6", "R7", "R8"], (184, 100)),
                                       (["K7", "K8", "K9"], (100, 400))])
    before = detections_from(before_codes, before_quads, probs={2: unsure})
    after = detections_from(after_codes, after_quads, probs={0: unsure})
    turn = judge_turn(before, after, rules=RULES)
    assert turn.before.detections.codes[2] == "K10" and turn.after.detections.codes[0] == "R6"
    assert turn.verdict.legal, turn.verdict.problems
    assert turn.verdict.left_table == [] and turn.left == []
    # The referee's count and the place matching name the same played tiles.
    assert sorted(t.code() for t in turn.verdict.played) == _played_codes(turn) \
        == ["K7", "R7", "R8"]


def test_a_faint_tile_matched_to_a_clear_one_is_counted_in_both_photos():
    # BEFORE saw the lone B5 barely; AFTER sees it clearly in the player's new run B5-B7.
    before_codes = ["R7", "R8", "R9", "B5"]
    before_quads = row(["R7", "R8", "R9"], x=100, y=100) + row(["B5"], x=100, y=400)
    before = detections_from(before_codes, before_quads, scores={3: 0.15})
    after_codes, after_quads = _table([(["R7", "R8", "R9"], (100, 100)),
                                       (["B5", "B6", "B7"], (100, 400))])
    turn = judge_turn(before, detections_from(after_codes, after_quads), rules=RULES)
    assert turn.before.faint == [3]
    assert sorted(t.code() for t in turn.verdict.played) == _played_codes(turn) == ["B6", "B7"]
    assert turn.verdict.legal, turn.verdict.problems


def test_a_turn_names_the_tiles_at_each_photos_edge():
    # The new set was laid at the far edge of the AFTER photo: its last tile may be cut.
    before_codes, before_quads = _table([(["R3", "R4", "R5"], (100, 100))])
    after_codes, after_quads = _table([(["R3", "R4", "R5"], (100, 100)),
                                       (["K7", "B7", "O7"], (560, 300))])
    turn = judge_turn(detections_from(before_codes, before_quads),
                      detections_from(after_codes, after_quads), rules=RULES,
                      frames=((640, 480), (640, 480)))
    assert turn.before.edge == [] and turn.after.edge == [5]
    assert turn.to_json()["after"]["edge_tiles"] == [5]
    assert any("photograph the whole table" in w for w in turn.after.warnings)

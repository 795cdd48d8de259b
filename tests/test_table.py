"""Judging a table: sets to the referee, rules-aware re-reading, suggestions, JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bench.synth_tables import synth_table
from referee import edition
from tests.table_helpers import detections_from, row, turned_round
from vision.game.table import judge_table
from vision.recognition.detections import TileDetections

RULES = edition("original")


def test_empty_table_is_valid():
    reading = judge_table(TileDetections.empty(), RULES)
    assert reading.sets == [] and reading.table_valid
    assert reading.to_json() == {"sets": [], "loose": [], "table_valid": True, "suggestion": None,
                                 "edge_tiles": []}


def test_valid_sets_and_json_shape():
    codes = ["R12", "R13", "J", "K7", "R7", "B7"]
    quads = row(codes[:3]) + row(codes[3:], y=300)
    reading = judge_table(detections_from(codes, quads), RULES)
    assert reading.table_valid and reading.loose == []
    out = reading.to_json()
    json.dumps(out)
    first = dict(out["sets"][0])
    assert first.pop("notes")  # the referee says where the joker should lie
    assert first == {"tiles": [0, 1, 2], "valid": True, "kind": "run", "reasons": [],
                     "jokers": ["R11"], "value": 36}
    assert out["sets"][1]["kind"] == "group" and out["sets"][1]["value"] == 21


def test_invalid_set_gets_reasons_and_a_suggestion():
    codes = ["R1", "R2", "R4", "R3", "K3", "B3"]
    quads = row(codes[:3]) + row(codes[3:], y=300)
    reading = judge_table(detections_from(codes, quads), RULES)
    assert not reading.table_valid
    assert not reading.verdicts[0].valid and reading.verdicts[0].reasons
    assert reading.suggestion is None  # R4 fits nowhere
    codes = ["R1", "R2", "B3", "R3", "K3", "O3"]  # B3 and R3 swapped between the sets
    quads = row(codes[:3]) + row(codes[3:], y=300)
    reading = judge_table(detections_from(codes, quads), RULES)
    assert not reading.table_valid
    assert sorted(map(sorted, reading.suggestion)) == [["B3", "K3", "O3"], ["R1", "R2", "R3"]]


def test_loose_tile_makes_the_table_invalid_and_is_reported():
    codes = ["K1", "K2", "K3", "B9"]
    quads = row(codes[:3]) + row(["B9"], x=600, y=600)
    reading = judge_table(detections_from(codes, quads), RULES)
    assert reading.loose == [3] and not reading.table_valid
    assert any("loose" in w for w in reading.warnings)


def test_second_reading_fixes_a_number_that_breaks_a_run():
    codes = ["B5", "B8", "B7"]  # the 6 read as 8 (second guess 6)
    reading = judge_table(detections_from(codes, row(codes), probs={1: {"B8": 0.55, "B6": 0.4}}),
                          RULES)
    assert reading.detections.codes == ["B5", "B6", "B7"]
    assert reading.table_valid
    assert any("B6" in w and "B8" in w for w in reading.warnings)
    assert reading.rereads == {1: ("B8", "B6")}
    assert not reading.detections.uncertain[1]  # the rules settled it


def test_second_reading_fixes_one_odd_colour():
    codes = ["O3", "O4", "R5", "O6"]
    reading = judge_table(detections_from(codes, row(codes), probs={2: {"R5": 0.7, "O5": 0.3}}),
                          RULES)
    assert reading.detections.codes[2] == "O5" and reading.table_valid


def test_confident_reading_is_not_talked_into_validity():
    codes = ["B5", "B8", "B7"]  # a player's real mistake, read confidently
    reading = judge_table(detections_from(codes, row(codes), probs={1: {"B6": 0.001}}), RULES)
    assert reading.detections.codes == codes and not reading.table_valid


def test_a_tile_turned_against_the_rest_of_its_set_is_read_the_sets_way_round():
    # An edition that prints 6 and 9 alike: the classifier took the 9 for a 6 standing on
    # its head, and only a sliver of its belief (below ALT_RATIO) says 9 the other way.
    codes = ["K9", "R9", "B6", "O9"]
    d = turned_round(detections_from(codes, row(codes)), 2, "B6", "B9", 0.02)
    reading = judge_table(d, RULES)
    assert reading.detections.codes == ["K9", "R9", "B9", "O9"] and reading.table_valid
    up = reading.detections.corners[2]
    assert up[0][1] < up[3][1]  # its corners now read upright with the rest
    assert any("face one way" in w for w in reading.warnings)


def test_a_tile_turned_in_its_set_keeps_a_sure_reading():
    codes = ["K9", "R9", "B6", "O9"]  # a 6 with its mark, laid upside down among 9s
    d = turned_round(detections_from(codes, row(codes)), 2, "B6", "B9", 0.001)
    reading = judge_table(d, RULES)
    assert reading.detections.codes == codes and not reading.table_valid


def test_a_set_read_facing_two_ways_is_read_the_way_that_makes_it_valid():
    # Four 6s of an edition that prints 6 and 9 alike: two were taken for 9s on their head.
    codes = ["K6", "O6", "B9", "R9"]
    d = turned_round(detections_from(codes, row(codes)), 2, "B9", "B6", 0.02)
    flips = d.flip_probs.copy()
    d = turned_round(d, 3, "R9", "R6", 0.02)
    d.flip_probs += flips
    reading = judge_table(d, RULES)
    assert reading.detections.codes == ["K6", "O6", "B6", "R6"] and reading.table_valid
    assert set(reading.rereads) == {2, 3}


def test_a_set_read_facing_two_ways_keeps_a_sure_side():
    codes = ["K6", "O6", "B9", "R9"]  # 9s with their mark, laid among 6s: a wrong group
    d = turned_round(detections_from(codes, row(codes)), 2, "B9", "B6", 0.001)
    flips = d.flip_probs.copy()
    d = turned_round(d, 3, "R9", "R6", 0.02)
    d.flip_probs += flips
    reading = judge_table(d, RULES)
    assert reading.detections.codes == codes and not reading.table_valid


def test_a_pair_of_tiles_says_nothing_about_which_way_is_up():
    codes = ["B6", "O9"]
    d = turned_round(detections_from(codes, row(codes)), 0, "B6", "B9", 0.3)
    assert judge_table(d, RULES).detections.codes == codes


def test_too_many_copies_rereads_the_cheapest_copy():
    # Three R9s on a two-copy table; the third one's second guess is R6 (a 6/9 mix-up).
    codes = ["R9", "K9", "B9", "R9", "R10", "R11", "R9"]
    quads = row(codes[:3]) + row(codes[3:6], y=300) + row(codes[6:], x=600, y=600)
    reading = judge_table(detections_from(codes, quads, probs={6: {"R9": 0.6, "R6": 0.35}}),
                          RULES)
    assert reading.detections.codes[6] == "R6"
    assert any("R9 appears 3 times" in w for w in reading.warnings)


def test_uncertain_tile_stays_uncertain_when_rules_do_not_settle_it():
    codes = ["K4", "R4", "B4", "O4"]
    # O4 vs O1: both keep... no: only O4 makes a group; but the doubt is between two colours
    # that both fit a group of 4s with the others: O4 vs K4 (K4 already there) -> settled.
    reading = judge_table(detections_from(codes, row(codes), probs={3: {"O4": 0.5, "K4": 0.45}}),
                          RULES)
    assert reading.detections.codes[3] == "O4" and not reading.detections.uncertain[3]
    codes = ["K4", "R4", "B4"]
    loose = judge_table(detections_from(codes + ["O4"], row(codes) + row(["O4"], x=700, y=700),
                                        probs={3: {"O4": 0.5, "O1": 0.45}}), RULES)
    assert loose.detections.uncertain[3]
    assert any("uncertain" in w for w in loose.warnings)


def test_two_sets_end_to_end_with_a_small_gap_are_split_by_the_rules():
    codes = ["R1", "R2", "R3", "K5", "K6", "K7"]
    quads = row(codes[:3]) + row(codes[3:], x=100 + 3 * 42 + 12)  # 0.3 w gap
    reading = judge_table(detections_from(codes, quads), RULES)
    assert reading.sets == [[0, 1, 2], [3, 4, 5]] and reading.table_valid


@pytest.mark.parametrize("seed", range(5))
def test_rendered_table_all_valid_sets_are_valid(seed):
    table = synth_table(np.random.default_rng(seed), n_loose=0, flip_p=0.0, pair_p=0.0)
    from referee import check_set, parse_tiles

    reading = judge_table(detections_from(table.codes, table.quads), RULES)
    assert sorted(map(tuple, reading.sets)) == sorted(map(tuple, table.sets))
    for ids, verdict in zip(reading.sets, reading.verdicts, strict=True):
        assert verdict.valid == check_set(parse_tiles(" ".join(table.codes[i] for i in ids))).valid


def test_barely_seen_tile_at_the_end_of_a_run_is_left_out_of_it():
    # A knot in the wood beside R8-R12, read as a joker that would make R13.
    codes = ["R8", "R9", "R10", "R11", "R12", "J"]
    reading = judge_table(detections_from(codes, row(codes), scores={5: 0.2}), RULES)
    assert reading.sets == [[0, 1, 2, 3, 4]] and reading.verdicts[0].valid
    assert reading.loose == [5] and reading.faint == [5] and reading.detections.uncertain[5]
    assert reading.table_valid  # a knot is not held against the table ...
    assert any("tile 5" in w and "barely seen" in w for w in reading.warnings)  # ... but named


def test_a_barely_seen_lone_tile_is_named_but_not_counted_against_the_table():
    codes = ["K1", "K2", "K3", "B9"]
    quads = row(codes[:3]) + row(["B9"], x=600, y=600)
    reading = judge_table(detections_from(codes, quads, scores={3: 0.2}), RULES)
    assert reading.loose == [3] and reading.faint == [3] and reading.table_valid
    assert any("tile 3 (B9?)" in w and "not counted" in w for w in reading.warnings)
    # An invalid table's suggestion leaves the faint tile out too.
    codes = ["K1", "K2", "B3", "K3", "R3", "O3", "B9"]
    quads = row(codes[:3]) + row(codes[3:6], y=300) + row(["B9"], x=600, y=600)
    reading = judge_table(detections_from(codes, quads, scores={6: 0.2}), RULES)
    assert not reading.table_valid and reading.faint == [6]
    # With B9 nothing could be arranged; without it K1 K2 K3 and B3 R3 O3 can.
    assert sorted(map(sorted, reading.suggestion)) == [["B3", "O3", "R3"], ["K1", "K2", "K3"]]


def test_clearly_seen_tile_that_breaks_a_run_stays_and_the_run_is_invalid():
    codes = ["R8", "R9", "R10", "R11", "R12", "K5"]
    reading = judge_table(detections_from(codes, row(codes)), RULES)
    assert reading.sets == [[0, 1, 2, 3, 4, 5]] and not reading.verdicts[0].valid


def test_barely_seen_end_tile_stays_when_the_rest_is_no_valid_set():
    codes = ["R8", "K9", "R10", "R11", "B4"]  # invalid with or without the end tile
    reading = judge_table(detections_from(codes, row(codes), scores={4: 0.2}), RULES)
    assert reading.sets == [[0, 1, 2, 3, 4]] and reading.loose == []


def test_barely_seen_tile_inside_a_run_is_not_taken_out():
    codes = ["R8", "R9", "R10", "R11"]
    reading = judge_table(detections_from(codes, row(codes), scores={1: 0.2}), RULES)
    assert reading.sets == [[0, 1, 2, 3]] and reading.table_valid


@pytest.mark.parametrize("seed", range(20))
def test_rendered_tables_hold_no_more_copies_than_a_box(seed):
    from collections import Counter

    counts = Counter(synth_table(np.random.default_rng(seed), n_sets=16).codes)
    assert counts["J"] <= 2 and max(counts.values()) <= 2


def test_suggestion_search_gives_up_with_a_warning_not_a_hang(monkeypatch):
    import vision.game.table

    monkeypatch.setattr(vision.game.table, "SUGGEST_MAX_STATES", 3)
    codes = ["R1", "R2", "B3", "R3", "K3", "O3"]  # arrangeable, but not as laid
    quads = row(codes[:3]) + row(codes[3:], y=300)
    reading = judge_table(detections_from(codes, quads), RULES)
    assert not reading.table_valid and reading.suggestion is None
    assert any("no suggestion" in w and "3 search states" in w for w in reading.warnings)


@pytest.mark.parametrize("name", ["original", "rummy"])
def test_the_quick_copy_count_finds_a_problem_exactly_where_copy_problems_does(name):
    from referee import copy_problems
    from vision.game.table import _may_break_the_box, _tile
    from vision.recognition.labels import TILE_CLASSES

    rules = edition(name)
    rng = np.random.default_rng(len(name))
    labels = TILE_CLASSES + tuple(f"G{n}" for n in range(1, 14))  # a profile reads green
    seen = set()
    for _ in range(400):
        # small draws from few codes, so triples and jokers over the limit come up often
        codes = rng.choice(len(labels), size=int(rng.integers(0, 12)))
        pool = rng.choice(len(labels), size=int(rng.integers(1, 6)))
        ids = pool[codes % len(pool)].astype(np.int64)
        expected = bool(copy_problems([_tile(labels[k]) for k in ids], rules))
        assert _may_break_the_box(ids, labels, rules) == expected
        seen.add(expected)
    assert seen == {True, False}


def test_tiles_at_the_photos_edge_are_named_so_the_player_photographs_the_whole_table():
    # The frame may cut a tile's number off, or hide a tile beyond it: most of the tiles a
    # reader misses lie there, so the reading says which tiles touch the edge.
    codes = ["R5", "R6", "R7"]
    cut = judge_table(detections_from(codes, row(codes, x=10)), RULES, frame=(640, 480))
    assert cut.edge == [0] and cut.to_json()["edge_tiles"] == [0]
    assert any("1 tile(s) at the photo's edge (ids 0)" in w and "the whole table" in w
               for w in cut.warnings)
    inside = judge_table(detections_from(codes, row(codes, x=100)), RULES, frame=(640, 480))
    assert inside.edge == [] and not any("edge" in w for w in inside.warnings)
    # without the photo's size nothing is said
    assert judge_table(detections_from(codes, row(codes, x=10)), RULES).edge == []

"""Sets (RULES.md section 2): runs, groups, jokers, values, and every reason a set fails."""

import pytest

from referee import Tile, check_set, check_table, edition, parse_tiles

VALID = [
    # tiles as laid, kind, what each joker stands for, value
    ("R1 R2 R3", "run", "", 6),
    ("K11 K12 K13", "run", "", 36),
    ("B1 B2 B3 B4 B5 B6 B7 B8 B9 B10 B11 B12 B13", "run", "", 91),
    ("K5 R5 B5", "group", "", 15),
    ("K5 R5 B5 O5", "group", "", 20),
    # A joker stands for the missing tile it fills.
    ("R1 R2 J", "run", "R3", 6),
    ("R12 R13 J", "run", "R11", 36),
    ("R1 J R3", "run", "R2", 6),
    # Position first: the joker is the tile at its place.
    ("R6 R7 J", "run", "R8", 21),
    ("J R6 R7", "run", "R5", 18),
    # Otherwise a valid reading, the highest-valued one.
    ("J R1 R2", "run", "R3", 6),
    ("R13 J J", "group", "K13 B13", 39),
    # In a group of three a joker stands for a missing colour.
    ("K5 R5 J", "group", "B5", 15),
    ("K5 J R5 B5", "group", "O5", 20),
    ("R5 J J", "run", "R6 R7", 18),
    # Tiles valid but out of order: still valid.
    ("R4 R6 R5", "run", "", 15),
]


@pytest.mark.parametrize(("codes", "kind", "jokers", "value"), VALID)
def test_valid_sets(codes, kind, jokers, value):
    verdict = check_set(parse_tiles(codes))
    assert verdict.valid, verdict.reasons
    assert verdict.kind == kind
    assert verdict.jokers == parse_tiles(jokers)
    assert verdict.value == value
    assert verdict.reasons == []


INVALID = [
    # tiles, a phrase each expected reason starts with
    ("R1 R2", ["too short"]),
    ("J", ["too short", "only jokers"]),
    ("R12 R13 R1", ["wraps past 13"]),
    ("R13 R1 R2", ["wraps past 13"]),
    ("R12 R13 J R1", ["wraps past 13"]),
    ("K5 R5 K5", ["duplicate colour in a group"]),
    ("R4 R5 B6", ["mixed colours"]),
    ("K5 R5 B6", ["mixed numbers"]),
    ("R5 B6 K8", ["mixed colours and numbers"]),
    ("R1 R3 R7 J", ["gap"]),
    ("R1 R2 R4", ["gap"]),
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 J", ["too long"]),
    ("K5 R5 B5 O5 J", ["too long"]),
    ("K5 R5 B5 O5 K5", ["duplicate colour in a group", "too long"]),
    ("J J J", ["only jokers", "too many jokers"]),
    ("R5 R5 J", ["duplicate tile"]),
    ("R3 R3 R4 R5", ["duplicate number in a run"]),
    ("R1 B2", ["too short", "mixed colours and numbers"]),
]


@pytest.mark.parametrize(("codes", "reasons"), INVALID)
def test_invalid_sets_name_every_reason(codes, reasons):
    verdict = check_set(parse_tiles(codes))
    assert not verdict.valid
    assert verdict.kind is None
    assert [r.split(":")[0] for r in verdict.reasons] == reasons


def test_a_set_of_three_jokers_is_allowed_no_more_by_a_four_joker_edition():
    verdict = check_set(parse_tiles("J J J"), edition("rummy"))
    assert [r.split(":")[0] for r in verdict.reasons] == ["only jokers"]


def test_out_of_order_sets_carry_a_note():
    assert "out of order" in check_set(parse_tiles("R4 R6 R5")).notes[0]
    assert check_set(parse_tiles("R4 R5 R6")).notes == []


def test_a_group_of_three_says_which_colours_its_joker_could_be():
    assert check_set(parse_tiles("K5 R5 J")).notes == ["the joker could stand for B5 or O5"]


def test_a_colour_the_edition_does_not_print_is_invalid():
    verdict = check_set(parse_tiles("K5 R5 G5"))
    assert not verdict.valid and "no green tiles" in verdict.reasons[0]
    assert check_set(parse_tiles("K5 R5 G5"), edition("rummy")).valid


def test_the_six_player_edition_still_has_four_colours_per_group():
    assert not check_set(parse_tiles("K5 R5 B5 O5 J"), edition("six-player")).valid


def test_invalid_set_value_is_its_face_value():
    assert check_set(parse_tiles("R12 R13 R1")).value == 26


def test_check_table_judges_each_set_in_order():
    verdicts = check_table([parse_tiles("R1 R2 R3"), parse_tiles("K1 K2")])
    assert [v.valid for v in verdicts] == [True, False]


def test_check_set_accepts_a_code_string():
    assert check_set("R1 R2 J").jokers == [Tile.from_code("R3")]


def test_verdict_json_shape():
    assert check_set("R12 R13 J").to_dict() == {
        "tiles": ["R12", "R13", "J"], "valid": True, "kind": "run", "reasons": [],
        "notes": ["a joker lies out of place: read as R11 R12 R13"], "jokers": ["R11"],
        "value": 36,
    }

"""Editions as presets of the settings of RULES.md section 10, and copy limits (section 1)."""

import dataclasses

import pytest

from referee import EDITIONS, Color, Rules, copy_problems, edition, parse_tiles


def test_the_default_is_original_de_luxe():
    rules = edition()
    assert rules == EDITIONS["original"] == Rules()
    assert (len(rules.colors), rules.copies, rules.jokers) == (4, 2, 2)
    assert rules.initial_meld_minimum == 30
    assert rules.table_play_in_initial_meld is True
    assert rules.turn_seconds == 120
    assert rules.timeout_penalty == "loose-tiles"
    assert (rules.timeout_draw, rules.invalid_table_draw, rules.empty_turn_draw) == (3, 3, 1)
    assert rules.rack_joker_penalty == 25
    assert rules.pool_empty_scoring == "difference"
    assert rules.tile_count == 106


@pytest.mark.parametrize(
    ("name", "setting", "value"),
    [("travel-tin", "timeout_penalty", "restore-table"),
     ("travel-tin", "rack_joker_penalty", 30),
     ("rummy", "jokers", 4),
     ("rummy", "joker_sets_splittable", False),
     ("rummy", "rack_joker_penalty", 30),
     ("rummy", "colors", (Color.BLACK, Color.RED, Color.BLUE, Color.GREEN)),
     ("six-player", "copies", 3),
     ("six-player", "jokers", 4),
     ("tournament", "table_play_in_initial_meld", False)],
)
def test_each_edition_differs_from_the_default_only_where_its_sheet_does(name, setting, value):
    assert getattr(edition(name), setting) == value


def test_six_player_box_has_160_tiles():
    assert edition("six-player").tile_count == len(edition("six-player").all_tiles()) == 160


def test_unknown_edition_lists_the_known_ones():
    with pytest.raises(ValueError, match="original, travel-tin, rummy, six-player, tournament"):
        edition("deluxe")


def test_a_game_may_override_single_settings():
    rules = edition("travel-tin").replace(turn_seconds=60, rack_joker_penalty=50)
    assert (rules.turn_seconds, rules.rack_joker_penalty, rules.timeout_penalty) == (
        60, 50, "restore-table")
    assert edition("travel-tin").turn_seconds == 120  # presets are values, never changed


def test_settings_from_command_line_text():
    rules = edition().with_setting("turn-seconds", "off").with_setting("colors", "KRBG")
    assert rules.turn_seconds is None
    assert rules.colors[-1] is Color.GREEN
    assert edition().with_setting("table_play_in_initial_meld", "no").table_play_in_initial_meld is False


@pytest.mark.parametrize(
    "overrides",
    [{"jokers": -1}, {"copies": 0}, {"timeout_penalty": "shrug"}, {"turn_seconds": 0},
     {"colors": ("K", "K", "R")}, {"nonsense": 1}],
)
def test_bad_overrides_are_refused(overrides):
    with pytest.raises(ValueError):
        edition().replace(**overrides)


def test_rules_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        edition().jokers = 3


def test_more_copies_than_the_box_holds_is_flagged():
    problems = copy_problems(parse_tiles("R5 R5 R5 J J J K1"))
    assert problems == ["R5 appears 3 times; the original edition has 2 of each tile",
                        "J appears 3 times; the original edition has 2 jokers"]


def test_copy_limits_follow_the_edition():
    assert copy_problems(parse_tiles("R5 R5 R5 J J J J"), edition("six-player")) == []
    assert copy_problems(parse_tiles("G5")) == ["G5: the original edition has no green tiles"]


def test_a_full_box_is_within_its_limits():
    for rules in EDITIONS.values():
        assert copy_problems(rules.all_tiles(), rules) == []

"""Tiles and notation (RULES.md section 1, DESIGN.md vocabulary)."""

import pytest

from referee import Color, Tile, TileCodeError, format_tiles, parse_tiles


@pytest.mark.parametrize(
    ("code", "color", "number"),
    [("R12", Color.RED, 12), ("K1", Color.BLACK, 1), ("B13", Color.BLUE, 13),
     ("O7", Color.ORANGE, 7), ("G3", Color.GREEN, 3), ("r12", Color.RED, 12),
     ("Y7", Color.ORANGE, 7)],
)
def test_a_code_names_a_colour_slot_and_a_number(code, color, number):
    tile = Tile.from_code(code)
    assert (tile.color, tile.number, tile.is_joker) == (color, number, False)


def test_j_is_a_joker_with_neither_colour_nor_number():
    joker = Tile.from_code("j")
    assert joker == Tile.joker() and joker.is_joker
    assert (joker.color, joker.number) == (None, None)


def test_codes_print_back_canonically():
    assert format_tiles(parse_tiles("r12, R13   j")) == "R12 R13 J"
    assert Tile.from_code("O7").code() == "O7"


def test_repr_is_constructor_like():
    tile = Tile.from_code("R12")
    assert repr(tile) == "Tile.from_code('R12')"
    assert eval(repr(tile)) == tile


def test_tiles_are_values_hashable_and_ordered():
    assert Tile(Color.RED, 5) == Tile.from_code("R5") == Tile("R", 5) == Tile("red", 5)
    assert len({Tile.from_code("R5"), Tile.from_code("R5")}) == 1
    assert sorted(parse_tiles("J R2 K9 R1 B1")) == parse_tiles("K9 R1 R2 B1 J")


@pytest.mark.parametrize("bad", ["X5", "R14", "R0", "R", "12", "JJ", "R1.5", "K-1"])
def test_a_bad_code_raises_a_value_error_naming_the_token(bad):
    with pytest.raises(TileCodeError) as caught:
        parse_tiles(f"R1 {bad} R3")
    assert isinstance(caught.value, ValueError)
    assert caught.value.token == bad
    assert repr(bad) in str(caught.value)


@pytest.mark.parametrize(("number"), [0, 14, None, 1.5, True])
def test_a_tile_number_is_1_to_13(number):
    with pytest.raises(ValueError):
        Tile(Color.RED, number)


def test_colour_words_match_the_camera_json():
    assert [c.name_word for c in Color] == ["black", "red", "blue", "orange", "green"]
    assert Color.from_word("red") is Color.RED
    assert Color.from_word("Yellow") is Color.ORANGE  # some editions print the slot yellow
    assert Color.from_word("teal") is Color.BLUE
    with pytest.raises(ValueError, match="purple"):
        Color.from_word("purple")


@pytest.mark.parametrize(
    ("bad", "why"),
    [("R²", "'²' is not a number"), ("R①", "'①' is not a number"), ("R٣", "is not a number"),
     ("R" + "1" * 5000, "no tile numbered above 13"), ("R013", "never starts with 0")],
)
def test_only_ascii_digits_make_a_tile_number(bad, why):
    # str.isdigit() says yes to "²" and "①", int() does not: a TileCodeError, never another.
    with pytest.raises(TileCodeError) as caught:
        Tile.from_code(bad)
    message = str(caught.value)
    assert why in message and caught.value.token == bad
    assert len(message) < 200  # a pasted page of digits is named, not repeated


@pytest.mark.parametrize("empty", ["", "   ", " , ;"])
def test_text_with_no_tile_code_is_refused_where_tiles_were_asked_for(empty):
    assert parse_tiles(empty) == []  # an empty table or rack
    with pytest.raises(TileCodeError, match="no tile codes"):
        parse_tiles(empty, allow_empty=False)

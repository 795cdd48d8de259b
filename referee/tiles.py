"""Tiles and their notation: `R12` is the red twelve, `K1` the black one, `J` a joker.

Colours are slots, not paints: `O` is the fourth colour whether an edition prints it orange
or yellow, and `G` is the green some "Rummy" editions use instead. What a slot looks like
is the camera's business; the referee only counts and compares slots.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import total_ordering

__all__ = ["Color", "Tile", "TileCodeError", "parse_tiles", "format_tiles", "JOKER"]


class Color(StrEnum):
    """A colour slot; the value is the one-letter code used in tile codes."""

    BLACK = "K"
    RED = "R"
    BLUE = "B"
    ORANGE = "O"
    GREEN = "G"

    @property
    def name_word(self) -> str:
        """The word the camera JSON and people use: "black", "red", "blue", "orange", "green"."""
        return self.name.lower()

    @classmethod
    def from_word(cls, word: str) -> Color:
        """`Color.from_word("red")`; also takes the printed variants "yellow" and "teal"."""
        key = word.strip().lower()
        if key in _WORD_ALIASES:
            return _WORD_ALIASES[key]
        for color in cls:
            if key in (color.name_word, color.value.lower()):
                return color
        raise ValueError(f"unknown colour {word!r} (expected black, red, blue, orange or green)")

    @classmethod
    def from_code(cls, code: str) -> Color:
        """`Color.from_code("R")`; `Y` is read as the orange slot."""
        key = code.strip().upper()
        if key == "Y":
            return cls.ORANGE
        try:
            return cls(key)
        except ValueError:
            raise ValueError(f"unknown colour code {code!r} (expected K, R, B, O or G)") from None


# Editions print the fourth slot yellow and sometimes blue as teal; the slot is the same.
_WORD_ALIASES = {"yellow": Color.ORANGE, "teal": Color.BLUE}
_COLOR_ORDER = {color: index for index, color in enumerate(Color)}


class TileCodeError(ValueError):
    """A tile code that cannot be read; `token` is the offending text."""

    def __init__(self, token: str, why: str = ""):
        self.token = token
        detail = f": {why}" if why else ""
        super().__init__(
            f"bad tile code {_shown(token)}{detail} (expected a colour K, R, B, O or G and a "
            f"number 1-13, like R12, or J for a joker)"
        )


def _shown(token: str, limit: int = 24) -> str:
    """The token as quoted in a message: a pasted page of text stays one short line."""
    if len(token) <= limit:
        return repr(token)
    return f"{token[:limit]!r}... ({len(token)} characters)"


@total_ordering
@dataclass(frozen=True, slots=True)
class Tile:
    """One tile: a colour slot and a number 1-13, or a joker (both None).

    Tiles are values: two red twelves are equal, which is what counting copies needs.
    They sort by colour slot (K, R, B, O, G), then number, jokers last.
    """

    color: Color | None
    number: int | None

    def __post_init__(self) -> None:
        if self.color is None and self.number is None:
            return
        if self.color is None or self.number is None:
            raise ValueError("a tile has both a colour and a number, or neither (a joker)")
        if not isinstance(self.color, Color):
            # Accept "R" or "red" so callers need not import Color for one tile.
            text = str(self.color)
            color = Color.from_code(text) if len(text) == 1 else Color.from_word(text)
            object.__setattr__(self, "color", color)
        if isinstance(self.number, bool) or not isinstance(self.number, int):
            raise ValueError(f"a tile number is a whole number 1-13, not {self.number!r}")
        if not 1 <= self.number <= 13:
            raise ValueError(f"a tile number is 1-13, not {self.number}")

    @classmethod
    def joker(cls) -> Tile:
        return JOKER

    @classmethod
    def from_code(cls, code: str) -> Tile:
        """`Tile.from_code("R12")`, case-insensitive; `J` is a joker."""
        tile = _BY_CODE.get(code.strip().upper()) if isinstance(code, str) else None
        if tile is None:
            raise TileCodeError(str(code), _why_bad(str(code)))
        return tile

    @property
    def is_joker(self) -> bool:
        return self.color is None

    @property
    def value(self) -> int:
        """Face value; a joker's value depends on the set it is in, so 0 here."""
        return self.number or 0

    def code(self) -> str:
        if self.color is None:
            return "J"
        return f"{self.color.value}{self.number}"

    def sort_key(self) -> tuple[int, int, int]:
        if self.color is None:
            return (1, 0, 0)
        return (0, _COLOR_ORDER[self.color], self.number)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Tile):
            return NotImplemented
        return self.sort_key() < other.sort_key()

    def __repr__(self) -> str:
        return f"Tile.from_code({self.code()!r})"

    def __str__(self) -> str:
        return self.code()


JOKER = Tile(None, None)
_BY_CODE: dict[str, Tile] = {"J": JOKER}
for _color in Color:
    for _number in range(1, 14):
        _BY_CODE[f"{_color.value}{_number}"] = Tile(_color, _number)
        if _color is Color.ORANGE:
            _BY_CODE[f"Y{_number}"] = _BY_CODE[f"O{_number}"]
_TOKEN_SPLIT = re.compile(r"[\s,;]+")


def _why_bad(token: str) -> str:
    text = token.strip().upper()
    if not text:
        return "empty"
    if text[0] not in "KRBOGYJ":
        return f"no colour {text[0]!r}"
    if text[0] == "J":
        return "a joker is just J"
    digits = text[1:]
    # Only ASCII digits make a number: "R²" and "R①" are digits to str.isdigit, not to int().
    if not digits:
        return "the number is missing"
    if not (digits.isascii() and digits.isdigit()):
        return f"{_shown(digits)} is not a number"
    if digits.startswith("0"):
        return "a tile number never starts with 0"
    if len(digits) > 2:
        return "no tile numbered above 13"
    return f"no tile numbered {int(digits)}"


def parse_tiles(text: str | Iterable[str], *, allow_empty: bool = True) -> list[Tile]:
    """`parse_tiles("R12 R13 J")` -> three tiles. Commas or spaces separate codes.

    With `allow_empty=False` text holding no code at all raises TileCodeError: where a
    person was asked for tiles, "" is a mistake, not an empty rack.
    """
    if isinstance(text, str):
        tokens = [token for token in _TOKEN_SPLIT.split(text) if token]
    else:
        text = list(text)
        tokens = [token for item in text for token in _TOKEN_SPLIT.split(item) if token]
    if not tokens and not allow_empty:
        shown = text if isinstance(text, str) else " ".join(text)
        raise TileCodeError(shown, "no tile codes")
    return [Tile.from_code(token) for token in tokens]


def format_tiles(tiles: Iterable[Tile]) -> str:
    """`format_tiles(tiles)` -> "R12 R13 J", the inverse of parse_tiles."""
    return " ".join(tile.code() for tile in tiles)

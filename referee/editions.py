"""Editions: named presets of the rule settings in RULES.md section 10.

An edition is not a subclass with its own logic: it is one `Rules` value, and every rule
check reads the few switches it needs from it. A game picks a preset and may override
single settings with `rules.replace(...)`.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from referee.tiles import JOKER, Color, Tile

__all__ = ["Rules", "edition", "EDITIONS", "copy_problems", "DEFAULT_RULES"]

_CHOICES = {
    "freed_joker": ("same-turn", "new-set-with-two-rack-tiles"),
    "joker_freeing": ("tile-or-rearrange", "tile-from-rack"),
    "timeout_penalty": ("loose-tiles", "restore-table"),
    "pool_empty_scoring": ("difference", "full"),
}


@dataclass(frozen=True)
class Rules:
    """The settings of RULES.md section 10; the defaults are Goliath "Original de Luxe"."""

    name: str = "original"
    colors: tuple[Color, ...] = (Color.BLACK, Color.RED, Color.BLUE, Color.ORANGE)
    copies: int = 2
    jokers: int = 2
    initial_meld_minimum: int = 30
    # "direct of later": the initial-meld turn may go on to play on table sets.
    table_play_in_initial_meld: bool = True
    # Where a freed joker must go; it never goes to the rack either way.
    freed_joker: str = "same-turn"
    joker_freeing: str = "tile-or-rearrange"
    joker_sets_splittable: bool = True
    turn_seconds: float | None = 120.0
    timeout_penalty: str = "loose-tiles"
    timeout_draw: int = 3
    # Pressman: one tile even when the table is valid but time ran out.
    timeout_draw_when_valid: int = 0
    invalid_table_draw: int = 3
    empty_turn_draw: int = 1
    rack_joker_penalty: int = 25
    pool_empty_scoring: str = "difference"
    # A loser who never made the initial meld pays this instead of the rack (0: the rack,
    # as for anyone), and the second when the rack held a valid initial meld (MSO: 100/200).
    no_meld_penalty: int = 0
    no_meld_penalty_if_meld_possible: int = 0

    def __post_init__(self) -> None:
        colors = tuple(c if isinstance(c, Color) else Color.from_code(str(c)) for c in self.colors)
        object.__setattr__(self, "colors", colors)
        if len(set(colors)) != len(colors) or not 3 <= len(colors) <= 5:
            raise ValueError(f"colors: 3 to 5 different colour slots, not {self.colors!r}")
        for name in ("copies", "jokers", "initial_meld_minimum", "timeout_draw",
                     "timeout_draw_when_valid", "invalid_table_draw", "empty_turn_draw",
                     "rack_joker_penalty", "no_meld_penalty",
                     "no_meld_penalty_if_meld_possible"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name}: a whole number 0 or more, not {value!r}")
        if self.copies < 1:
            raise ValueError("copies: at least 1")
        if self.turn_seconds is not None and not self.turn_seconds > 0:
            raise ValueError(f"turn_seconds: more than 0, or None for no timer, not {self.turn_seconds!r}")
        for name, allowed in _CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name}: one of {', '.join(allowed)}, not {getattr(self, name)!r}")

    @property
    def group_max(self) -> int:
        """A group holds each colour once, so at most as many tiles as there are colours."""
        return len(self.colors)

    @property
    def tile_count(self) -> int:
        return len(self.colors) * 13 * self.copies + self.jokers

    def all_tiles(self) -> list[Tile]:
        """Every tile of this edition, sorted: the pool before the game starts."""
        tiles = [Tile(color, number) for color in self.colors for number in range(1, 14)
                 for _ in range(self.copies)]
        return tiles + [JOKER] * self.jokers

    def replace(self, **overrides: object) -> Rules:
        """This rule set with single settings changed: `edition("original").replace(jokers=4)`."""
        unknown = sorted(set(overrides) - set(SETTINGS))
        if unknown:
            raise ValueError(f"unknown setting {unknown[0]!r}; settings are: {', '.join(SETTINGS)}")
        return dataclasses.replace(self, **overrides)

    def with_setting(self, name: str, text: str) -> Rules:
        """One override from text, as typed on a command line: `turn_seconds=60`, `colors=KRBG`."""
        key = name.strip().replace("-", "_")
        if key not in SETTINGS:
            raise ValueError(f"unknown setting {name!r}; settings are: {', '.join(SETTINGS)}")
        return self.replace(**{key: _parse_setting(key, text.strip())})


SETTINGS = tuple(f.name for f in dataclasses.fields(Rules) if f.name != "name")
_TRUE = {"yes", "true", "on", "1", "allowed"}
_FALSE = {"no", "false", "off", "0", "forbidden"}


def _parse_setting(key: str, text: str) -> object:
    lowered = text.lower()
    if key == "colors":
        parts = [p for p in lowered.replace(",", " ").split() if p]
        if len(parts) == 1 and len(parts[0]) <= 5 and parts[0] not in ("black", "red", "blue",
                                                                         "orange", "green"):
            return tuple(Color.from_code(letter) for letter in parts[0])
        return tuple(Color.from_word(word) for word in parts)
    if key == "turn_seconds":
        if lowered in ("off", "none", "no"):
            return None
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"turn_seconds: a number of seconds or 'off', not {text!r}") from None
    if key in ("table_play_in_initial_meld", "joker_sets_splittable"):
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError(f"{key}: yes or no, not {text!r}")
    if key in _CHOICES:
        return lowered
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{key}: a whole number, not {text!r}") from None


_K, _R, _B, _O, _G = Color.BLACK, Color.RED, Color.BLUE, Color.ORANGE, Color.GREEN

EDITIONS: dict[str, Rules] = {
    # Goliath "Original de Luxe": the defaults of section 10.
    "original": Rules(),
    # Goliath "Travel Tin": timeout restores the whole table; a rack joker costs 30.
    "travel-tin": Rules(name="travel-tin", timeout_penalty="restore-table", rack_joker_penalty=30),
    # The "Rummy" edition: green instead of orange, 4 jokers, joker sets stay whole.
    "rummy": Rules(name="rummy", colors=(_K, _R, _B, _G), jokers=4,
                   joker_sets_splittable=False, rack_joker_penalty=30),
    # 160 tiles: three copies of each numbered tile and 4 jokers.
    "six-player": Rules(name="six-player", copies=3, jokers=4),
    # Dutch how-to and tournaments: the initial-meld turn may not touch table sets.
    "tournament": Rules(name="tournament", table_play_in_initial_meld=False),
    # World Rummikub Championship: 1 minute a turn; on timeout the table is restored and
    # the player draws 3.
    "world-championship": Rules(name="world-championship", table_play_in_initial_meld=False,
                                turn_seconds=60.0, timeout_penalty="restore-table"),
    # Mind Sports Olympiad: a rack joker costs 50; never melding costs 100, or 200 when
    # the rack held a valid initial meld.
    "mso": Rules(name="mso", rack_joker_penalty=50, no_meld_penalty=100,
                 no_meld_penalty_if_meld_possible=200),
}
DEFAULT_RULES = EDITIONS["original"]


def edition(name: str = "original") -> Rules:
    """The preset called `name`; an unknown name raises ValueError listing the known ones."""
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    if key not in EDITIONS:
        raise ValueError(f"unknown edition {name!r}; known editions: {', '.join(EDITIONS)}")
    return EDITIONS[key]


def copy_problems(tiles: Iterable[Tile], rules: Rules | None = None) -> list[str]:
    """Every tile seen more often than the edition has it, and every colour it does not have.

    An edition has `copies` of each numbered tile and `jokers` jokers, so a table or rack
    holding more was misread (by a camera or a person).
    """
    rules = rules or DEFAULT_RULES
    problems = []
    for tile, count in sorted(Counter(tiles).items()):
        if tile.is_joker:
            # More jokers than the box holds.
            if count > rules.jokers:
                problems.append(f"J appears {count} times; the {rules.name} edition has "
                                f"{rules.jokers} jokers")
        elif tile.color not in rules.colors:
            # A colour slot this edition does not print.
            problems.append(f"{tile.code()}: the {rules.name} edition has no "
                            f"{tile.color.name_word} tiles")
        elif count > rules.copies:
            problems.append(f"{tile.code()} appears {count} times; the {rules.name} edition has "
                            f"{rules.copies} of each tile")
    return problems

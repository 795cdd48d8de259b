"""Tournament formats: a preset of a few switches, like editions (referee/editions.py).

A format says how many sit at a table, how many games a round has and how many rounds,
how the next round is seated, how a game's scores become tournament points, the order of
the tie-breaks, and the finals. The presets follow the public sources in
docs/tournament-rules.md; a tournament may override single switches with `replace`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from referee.editions import EDITIONS

__all__ = ["Format", "Finals", "FORMATS", "tournament_format", "TIE_BREAKS"]

SEATINGS = ("standings", "drawn")
GAME_POINTS = ("raw", "places")
# What a player who sits out a round (a bye) earns for each of its games.
BYE_POINTS = ("average", "win")
# Every tie-break the standings compute; a format orders some of them.
TIE_BREAKS = ("final-round-board", "final-round-result", "points", "wins", "head-to-head",
              "buchholz")


@dataclass(frozen=True)
class Finals:
    """After the qualifying rounds: the top `size` (0 = no finals, 4 = a final table,
    8 = two semi-final tables seeded 1,3,5,7 and 2,4,6,8 whose best `advance` go on to the
    final table). Semi-finals play `games` games summed; the final table plays until
    someone has `wins_needed` game wins, or `games` games when that is 0."""

    size: int = 0
    advance: int = 2
    games: int = 3
    wins_needed: int = 0

    def problems(self) -> list[str]:
        found = []
        if self.size not in (0, 4, 8):
            found.append(f"finals size: 0, 4 or 8 players, not {self.size!r}")
        if self.size == 8 and self.advance != 2:
            # Two semi-finals feed one final table of 4.
            found.append(f"finals advance: 2 from each semi-final, not {self.advance!r}")
        for name in ("games", "wins_needed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                found.append(f"finals {name}: a whole number 0 or more, not {value!r}")
        if not self.games and not self.wins_needed:
            found.append("finals: a number of games or a number of wins to reach")
        return found

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Finals:
        return cls(**_known(cls, data, "finals"))


@dataclass(frozen=True)
class Format:
    """The switches of one tournament format; build with `tournament_format(name)`."""

    name: str = "club"
    # 4 (tables of 3 where the count needs them, never 2) or 2 for 2-player formats.
    players_per_table: int = 4
    games_per_round: int = 4
    rounds: int = 3
    # Round 1 is always drawn from a seed; later rounds by standings or drawn again.
    seating: str = "standings"
    game_points: str = "raw"
    # With game_points="places": points for 1st, 2nd, ... at a table; ties share them.
    place_points: tuple[int, ...] = (4, 2, 1, 0)
    tie_breaks: tuple[str, ...] = ("wins", "head-to-head", "buchholz")
    # A bye's points per game: "average" (what a table of the format hands out per seat:
    # the mean of the place points; 0 in raw scoring, where a game's scores sum to 0) or
    # "win" (the first place's points, as a Swiss gives a bye a win).
    bye_points: str = "average"
    finals: Finals = Finals()
    # The edition (referee/editions.py) the games are played by.
    edition: str = "tournament"

    def __post_init__(self) -> None:
        object.__setattr__(self, "place_points", tuple(self.place_points))
        object.__setattr__(self, "tie_breaks", tuple(self.tie_breaks))
        if isinstance(self.finals, dict):
            object.__setattr__(self, "finals", Finals.from_dict(self.finals))
        found = self.problems()
        if found:
            raise ValueError("; ".join(found))

    def problems(self) -> list[str]:
        """Every switch that is out of range, not just the first."""
        found = []
        if self.players_per_table not in (2, 4):
            found.append(f"players_per_table: 4 (with tables of 3 where needed) or 2, "
                         f"not {self.players_per_table!r}")
        for name in ("games_per_round", "rounds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                found.append(f"{name}: a whole number 1 or more, not {value!r}")
        if self.seating not in SEATINGS:
            found.append(f"seating: one of {', '.join(SEATINGS)}, not {self.seating!r}")
        if self.bye_points not in BYE_POINTS:
            found.append(f"bye_points: one of {', '.join(BYE_POINTS)}, not {self.bye_points!r}")
        if self.game_points not in GAME_POINTS:
            found.append(f"game_points: one of {', '.join(GAME_POINTS)}, not {self.game_points!r}")
        if len(self.place_points) < self.players_per_table or any(
                isinstance(p, bool) or not isinstance(p, int) for p in self.place_points):
            found.append(f"place_points: a whole number for each of the "
                         f"{self.players_per_table} places, not {self.place_points!r}")
        elif list(self.place_points) != sorted(self.place_points, reverse=True):
            found.append(f"place_points: a better place never earns less, not {self.place_points!r}")
        unknown = [t for t in self.tie_breaks if t not in TIE_BREAKS]
        if unknown:
            found.append(f"tie_breaks: unknown {', '.join(map(repr, unknown))}; "
                         f"known: {', '.join(TIE_BREAKS)}")
        if len(set(self.tie_breaks)) != len(self.tie_breaks):
            found.append("tie_breaks: each tie-break once")
        if self.edition not in EDITIONS:
            found.append(f"edition: one of {', '.join(EDITIONS)}, not {self.edition!r}")
        if isinstance(self.finals, Finals):
            found.extend(self.finals.problems())
        else:
            found.append(f"finals: a Finals value, not {self.finals!r}")
        return found

    def replace(self, **overrides: object) -> Format:
        unknown = sorted(set(overrides) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise ValueError(f"unknown format switch {unknown[0]!r}")
        return dataclasses.replace(self, **overrides)

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data["place_points"] = list(self.place_points)
        data["tie_breaks"] = list(self.tie_breaks)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Format:
        """The inverse of to_dict; an unknown key or bad value raises ValueError."""
        return cls(**_known(cls, data, "format"))


def _known(cls, data: dict, what: str) -> dict:
    if not isinstance(data, dict):
        raise ValueError(f"a {what} is a JSON object, not {type(data).__name__}")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"unknown {what} key {unknown[0]!r}; keys are: {', '.join(sorted(names))}")
    return dict(data)


FORMATS: dict[str, Format] = {
    # German federation club and championship rules: 4 a table, 3 rounds of 4 games,
    # reseated by points after each round with the leaders at table 1.
    "club": Format(),
    # Mind Sports Olympiad: 2 players, 5-round Swiss, its tie-break order.
    "swiss-2p": Format(name="swiss-2p", players_per_table=2, games_per_round=1, rounds=5,
                       game_points="places", place_points=(1, 0),
                       tie_breaks=("final-round-board", "final-round-result", "points", "wins",
                                   "head-to-head", "buchholz"),
                       bye_points="win", edition="mso"),
    # Qualifying rounds, then the top 8 in two semi-finals (1,3,5,7 / 2,4,6,8) and a final
    # table of 4 playing to 4 game wins (Belgian club format, Dutch championship final).
    "championship": Format(name="championship", games_per_round=3, rounds=3,
                           game_points="places", tie_breaks=("points", "wins", "head-to-head",
                                                             "buchholz"),
                           finals=Finals(size=8, advance=2, games=3, wins_needed=4),
                           edition="world-championship"),
}


def tournament_format(name: str = "club") -> Format:
    """The preset called `name`; an unknown name raises ValueError listing the known ones."""
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    if key not in FORMATS:
        raise ValueError(f"unknown tournament format {name!r}; known formats: {', '.join(FORMATS)}")
    return FORMATS[key]

"""Seating: table sizes, the drawn first round, and later rounds from the standings.

Round 1 is drawn from a seed, so anyone can redo the draw. Later rounds seat by standings
with the leaders at table 1, and keep apart players who already shared a table where the
standings allow: among all seatings, the fewest repeated table-mates first, then the one
closest to plain standings order. Small fields are searched exhaustively; large ones
within a budget of search steps, starting from the greedy seating.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from referee.tournament.format import Format

__all__ = ["Seating", "table_sizes", "seat_first_round", "seat_next_round", "seating_problems",
           "repeat_count", "met_before", "byes_needed", "choose_bye"]

# Search steps for the next round's seating: exhaustive up to about 12 players.
SEARCH_STEPS = 20_000


@dataclass(frozen=True)
class Seating:
    """One round's tables, table 1 first; `bye` sits out (2-player formats, odd count)."""

    tables: tuple[tuple[str, ...], ...]
    bye: str | None = None

    @property
    def players(self) -> list[str]:
        return [p for table in self.tables for p in table] + ([self.bye] if self.bye else [])

    def table_of(self, player: str) -> int | None:
        """The table number (1 = first) a player sits at, None for the bye or a stranger."""
        for number, table in enumerate(self.tables, 1):
            if player in table:
                return number
        return None

    def to_dict(self) -> dict:
        return {"tables": [list(t) for t in self.tables], "bye": self.bye}

    @classmethod
    def from_dict(cls, data: dict) -> Seating:
        if not isinstance(data, dict) or not isinstance(data.get("tables"), list):
            raise ValueError("a seating is an object with a list of tables")
        tables = []
        for table in data["tables"]:
            if not isinstance(table, list) or not all(isinstance(p, str) for p in table):
                raise ValueError("a table is a list of player names")
            tables.append(tuple(table))
        bye = data.get("bye")
        if bye is not None and not isinstance(bye, str):
            raise ValueError("bye: a player name or null")
        return cls(tuple(tables), bye)


def byes_needed(players: int, fmt: Format) -> int:
    """How many sit out a round: one for an odd count in a 2-player format, and one of 5
    players at tables of 4 (5 cannot sit at tables of 4 and 3 without a table of 2)."""
    if fmt.players_per_table == 2:
        return players % 2
    return 1 if players == 5 else 0


def table_sizes(players: int, fmt: Format) -> list[int]:
    """Tables for `players` (the bye, where one is due, left out): all of 4 with as few
    tables of 3 as the count needs (never 2), or all of 2 in a 2-player format. Raises
    ValueError when no such split exists (fewer than 3 players)."""
    if fmt.players_per_table == 2:
        if players < 2:
            raise ValueError(f"{players} player(s): a 2-player format needs at least 2")
        return [2] * (players // 2)
    if players < 3:
        raise ValueError(f"{players} player(s) cannot sit at tables of 4 and 3 (a table of 2 "
                         f"is never made); add a player")
    players -= byes_needed(players, fmt)
    threes = (-players) % 4  # 0, 1, 2 or 3 tables of 3 make the rest divisible by 4
    return [4] * ((players - 3 * threes) // 4) + [3] * threes


def choose_bye(order: Sequence[str], history: Iterable[Seating]) -> str:
    """Who sits out: among the players with the fewest byes so far, the last in `order`
    (the standings, or the draw in round 1). So nobody sits out twice before everyone
    has, and after round 1 the lowest in the standings goes first."""
    had = Counter(s.bye for s in history if s.bye is not None)
    fewest = min(had[p] for p in order)
    return next(p for p in reversed(order) if had[p] == fewest)


def seat_first_round(players: Sequence[str], fmt: Format, seed: int | str,
                     history: Sequence[Seating] = ()) -> Seating:
    """A drawn seating: the players shuffled by `seed`, then dealt into tables in order.
    Where a bye is due it goes by `choose_bye` over the drawn order (`history`: the
    rounds before, for a format that draws every round)."""
    _check_names(players)
    order = list(players)
    random.Random(str(seed)).shuffle(order)
    bye = None
    if byes_needed(len(order), fmt):
        bye = choose_bye(order, history)
        order.remove(bye)
    sizes = table_sizes(len(players), fmt)
    tables, start = [], 0
    for size in sizes:
        tables.append(tuple(order[start:start + size]))
        start += size
    return Seating(tuple(tables), bye)


def met_before(history: Iterable[Seating]) -> Counter:
    """How often each pair (a frozenset of two names) shared a table in `history`."""
    met: Counter = Counter()
    for seating in history:
        for table in seating.tables:
            for a, b in combinations(table, 2):
                met[frozenset((a, b))] += 1
    return met


def repeat_count(seating: Seating, history: Iterable[Seating]) -> int:
    """Pairs at this seating's tables that met before, each counted once per earlier meeting."""
    met = met_before(history)
    return sum(met[frozenset(pair)] for table in seating.tables for pair in combinations(table, 2))


def seat_next_round(ranking: Sequence[str], history: Sequence[Seating], fmt: Format, *,
                    seed: int | str = 0, max_steps: int = SEARCH_STEPS) -> Seating:
    """The next round's tables from `ranking` (standings order, leader first).

    With seating "drawn" it is a fresh draw from `seed` and the round number. Otherwise:
    the fewest repeated table-mates (see repeat_count), then the least distance from plain
    standings order (each player's table number against the table that order gives them);
    table 1 holds the leader. Where a bye is due (an odd count in a 2-player format, 5 at
    tables of 4) it goes by `choose_bye`: the lowest-ranked of those with the fewest byes.
    """
    _check_names(ranking)
    if fmt.seating == "drawn":
        return seat_first_round(ranking, fmt, f"{seed}/round {len(history) + 1}", history)
    order = list(ranking)
    bye = None
    if byes_needed(len(order), fmt):
        bye = choose_bye(order, history)
        order.remove(bye)
    sizes = table_sizes(len(ranking), fmt)
    tables = _Search(order, sizes, met_before(history), max_steps).run()
    return Seating(tuple(tuple(t) for t in tables), bye)


class _Search:
    """Players in standings order each join an open table or open the next one; a table's
    number is fixed when it opens, so both costs are known as soon as a player sits."""

    def __init__(self, order, sizes, met, max_steps):
        self.order = order
        self.met = met
        self.max_steps = max_steps
        self.steps = 0
        # Plain standings order: the table each rank would get.
        self.ideal = [i for i, size in enumerate(sizes) for _ in range(size)]
        self.sizes = Counter(sizes)
        self.best: tuple[int, int] | None = None
        self.best_tables: list[list[str]] = []

    def run(self) -> list[list[str]]:
        self._place(0, [], [], self.sizes, 0, 0)
        return self.best_tables

    def _place(self, rank, tables, room, sizes, repeats, distance):
        if self.best is not None and (repeats, distance) >= self.best:
            return
        if rank == len(self.order):
            self.best = (repeats, distance)
            self.best_tables = [list(t) for t in tables]
            return
        self.steps += 1
        if self.steps > self.max_steps and self.best is not None:
            return
        player = self.order[rank]
        choices = []
        for index, table in enumerate(tables):
            if room[index]:
                added = sum(self.met[frozenset((player, other))] for other in table)
                choices.append((added, abs(index - self.ideal[rank]), index, None))
        for size in sorted(sizes, reverse=True):
            if sizes[size]:
                choices.append((0, abs(len(tables) - self.ideal[rank]), len(tables), size))
        # Cheapest first: the first complete seating is the greedy one.
        choices.sort(key=lambda c: (c[0], c[1], c[2]))
        for added, moved, index, size in choices:
            if size is None:
                tables[index].append(player)
                room[index] -= 1
                self._place(rank + 1, tables, room, sizes, repeats + added, distance + moved)
                room[index] += 1
                tables[index].pop()
            else:
                tables.append([player])
                room.append(size - 1)
                sizes[size] -= 1
                self._place(rank + 1, tables, room, sizes, repeats, distance + moved)
                sizes[size] += 1
                room.pop()
                tables.pop()


def _check_names(players: Sequence[str]) -> None:
    problems = _name_problems(players)
    if problems:
        raise ValueError("; ".join(problems))


def _name_problems(players: Sequence[str]) -> list[str]:
    found = []
    for name, count in Counter(players).items():
        if count > 1:
            found.append(f"{name!r} is listed {count} times")
    if any(not isinstance(p, str) or not p.strip() for p in players):
        found.append("every player has a name")
    return found


def seating_problems(seating: Seating, players: Sequence[str], fmt: Format,
                     history: Sequence[Seating] = ()) -> list[str]:
    """Every problem with a round's seating: a player seated twice, missing or unknown,
    a table of a size the format does not allow, a bye where none is due (or none where
    one is), and a second bye for a player while another has had fewer (`history`)."""
    found = _name_problems(players)
    seated = Counter(seating.players)
    for name, count in seated.items():
        if count > 1:
            found.append(f"{name} is seated {count} times")
        if name not in players:
            found.append(f"{name} is seated but not in the tournament")
    for name in players:
        if name not in seated:
            found.append(f"{name} has no seat")
    allowed = (2,) if fmt.players_per_table == 2 else (3, 4)
    for number, table in enumerate(seating.tables, 1):
        if len(table) not in allowed:
            found.append(f"table {number} has {len(table)} players; tables seat "
                         f"{' or '.join(map(str, allowed))}")
    due = byes_needed(len(players), fmt)
    if seating.bye is not None and not due:
        found.append(f"{seating.bye} has a bye, but the count needs none")
    if seating.bye is None and due:
        found.append(f"{len(players)} players at tables of {fmt.players_per_table} need one "
                     f"player with a bye")
    if seating.bye is not None and seating.bye in players and history:
        had = Counter(s.bye for s in history if s.bye is not None)
        fewer = sorted(p for p in players if had[p] < had[seating.bye])
        if fewer:
            found.append(f"{seating.bye} would sit out a round again while {', '.join(fewer)} "
                         f"{'has' if len(fewer) == 1 else 'have'} sat out fewer")
    return found

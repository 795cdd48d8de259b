"""Could you have melded? The best initial meld a rack holds (RULES.md section 4).

The best meld is the most points in complete sets taken from the rack, jokers counting as
the tiles they stand for. The search is exact: it takes the rack's lowest tile and either
leaves it on the rack or puts it in one of the sets that can hold it, and stops a branch
as soon as even laying every tile still unplaced could not beat the best found. A rack too
poor for the minimum is proved so by that same exhaustive search.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations

from referee.editions import DEFAULT_RULES, Rules
from referee.solver import SearchBudgetExceeded, check_box_holds
from referee.tiles import JOKER, Tile, format_tiles, parse_tiles

__all__ = ["BestMeld", "best_initial_meld"]

_TOP = 13
# A joker stands for a tile of at most 13 points: the most an unplaced joker can add.
_JOKER_MAX = _TOP


@dataclass(frozen=True)
class BestMeld:
    """The best initial meld in a rack: `sets` worth `total`; `reaches` says whether that is
    at least the edition's `minimum`. With no set at all, `sets` is empty and `total` 0."""

    sets: list[list[Tile]]
    total: int
    minimum: int
    states: int = 0
    rack: list[Tile] = field(default_factory=list)

    @property
    def reaches(self) -> bool:
        return self.total >= self.minimum

    def summary(self) -> str:
        if self.reaches:
            return (f"yes: {self.total} points in {len(self.sets)} set"
                    f"{'s' if len(self.sets) != 1 else ''} (at least {self.minimum} needed)")
        best = f"the best is {self.total} points" if self.sets else "no set at all"
        return f"no: {best}; at least {self.minimum} needed (every way was tried)"

    def to_dict(self) -> dict:
        return {"rack": [t.code() for t in self.rack], "reaches": self.reaches,
                "total": self.total, "minimum": self.minimum,
                "sets": [[t.code() for t in s] for s in self.sets]}


def best_initial_meld(rack: Iterable[Tile] | str, rules: Rules | None = None, *,
                      max_states: int | None = None) -> BestMeld:
    """The highest-scoring initial meld `rack` holds, or the proof (an exhaustive search)
    that none reaches the minimum. Tiles of a colour the edition lacks are never laid.
    More tiles than a box holds raise TooManyTiles; with `max_states` a search that takes
    longer raises SearchBudgetExceeded."""
    rules = rules or DEFAULT_RULES
    tiles = parse_tiles(rack) if isinstance(rack, str) else list(rack)
    check_box_holds(tiles, rules)
    jokers = min(sum(t.is_joker for t in tiles), rules.jokers)
    have = Counter(t for t in tiles if not t.is_joker and t.color in rules.colors)
    search = _Search(have, jokers, _candidates(have, jokers, rules), max_states)
    search.run()
    sets = [_lay(c) for c in search.best_sets]
    sets.sort(key=lambda s: format_tiles(s))
    return BestMeld(sets, search.best, rules.initial_meld_minimum, search.states, tiles)


@dataclass(frozen=True)
class _Candidate:
    """A set the rack could lay: its real tiles, how many jokers, its value, and the tiles
    in laid order (None marks a joker)."""

    reals: tuple[Tile, ...]
    jokers: int
    value: int
    laid: tuple[Tile | None, ...]


def _lay(candidate: _Candidate) -> list[Tile]:
    return [JOKER if t is None else t for t in candidate.laid]


def _candidates(have: Counter, jokers: int, rules: Rules) -> dict[Tile, list[_Candidate]]:
    """Every set holding each tile: runs with jokers anywhere in them (even where the rack
    has the tile, since another set may need that copy) and groups with jokers for colours."""
    by_tile: dict[Tile, list[_Candidate]] = {t: [] for t in have}
    for color in rules.colors:
        for start in range(1, _TOP - 1):
            for end in range(start + 2, _TOP + 1):
                numbers = range(start, end + 1)
                missing = [n for n in numbers if Tile(color, n) not in have]
                present = [n for n in numbers if Tile(color, n) in have]
                if len(missing) > jokers or not present:
                    continue
                for extra in range(0, min(jokers - len(missing), len(present) - 1) + 1):
                    for as_joker in combinations(present, extra):
                        joker_at = set(missing) | set(as_joker)
                        laid = tuple(None if n in joker_at else Tile(color, n) for n in numbers)
                        reals = tuple(t for t in laid if t is not None)
                        _add(by_tile, _Candidate(reals, len(joker_at), sum(numbers), laid))
    for number in range(1, _TOP + 1):
        colors = [c for c in rules.colors if Tile(c, number) in have]
        for size in range(1, len(colors) + 1):
            for chosen in combinations(colors, size):
                for extra in range(max(0, 3 - size), min(jokers, rules.group_max - size) + 1):
                    reals = tuple(Tile(c, number) for c in chosen)
                    laid = reals + (None,) * extra
                    _add(by_tile, _Candidate(reals, extra, number * (size + extra), laid))
    for options in by_tile.values():
        options.sort(key=lambda c: -c.value)
    return by_tile


def _add(by_tile, candidate):
    # Filed under its lowest real tile: the search reaches a set through that tile.
    by_tile[min(candidate.reals)].append(candidate)


class _Search:
    """Best value of what is left, remembered per state: the tiles still unplaced (from the
    lowest on) and the spare jokers. Sets already laid matter only through those. Tiles
    are numbered by sort order so a state is a short tuple of counts."""

    def __init__(self, have, jokers, candidates, max_states):
        self.order = sorted(have)
        place = {tile: i for i, tile in enumerate(self.order)}
        self.left = [have[t] for t in self.order]
        # Per tile: (places of the set's real tiles, jokers, value, the candidate).
        self.options = [[(tuple(place[t] for t in c.reals), c.jokers, c.value, c)
                         for c in candidates[tile]] for tile in self.order]
        self.jokers = jokers
        self.max_states = max_states
        self.states = 0
        self.memo: dict = {}
        self.best = 0
        self.best_sets: list[_Candidate] = []

    def run(self) -> None:
        left = self.left
        self.best = self._step(0, self.jokers)
        # Replay the remembered choices to name the sets.
        index, jokers = 0, self.jokers
        while True:
            key, index = self._key(index, jokers)
            if index == len(left):
                break
            choice = self.memo[key][1]
            if choice is None:
                # This tile's remaining copies stay on the rack.
                left[index] = 0
                continue
            slots, spent, _, candidate = choice
            for i in slots:
                left[i] -= 1
            jokers -= spent
            self.best_sets.append(candidate)

    def _key(self, index, jokers):
        left = self.left
        while index < len(left) and not left[index]:
            index += 1
        return (index, tuple(left[index:]), jokers), index

    def _step(self, index, jokers):
        """The most points the tiles from `index` on and `jokers` can still lay."""
        key, index = self._key(index, jokers)
        known = self.memo.get(key)
        if known is not None:
            return known[0]
        self.states += 1
        if self.max_states is not None and self.states > self.max_states:
            raise SearchBudgetExceeded(self.max_states)
        left = self.left
        if index == len(left):
            self.memo[key] = (0, None)
            return 0
        # Every remaining copy of this tile stays on the rack...
        count = left[index]
        left[index] = 0
        best, best_choice = self._step(index + 1, jokers), None
        left[index] = count
        # ...or one copy goes in a set that holds it (further copies: the next call).
        for option in self.options[index]:
            slots, spent, value, _ = option
            if spent > jokers or not all(left[i] for i in slots):
                continue
            for i in slots:
                left[i] -= 1
            value += self._step(index, jokers - spent)
            for i in slots:
                left[i] += 1
            if value > best:
                best, best_choice = value, option
        self.memo[key] = (best, best_choice)
        return best

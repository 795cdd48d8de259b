"""The arrangement solver: can these tiles be split into valid sets, and how?

Exact, not heuristic. The search walks the numbers 1 to 13 and, at each number, one colour
at a time. What it remembers between numbers is small: for each colour, how many runs are
still open and whether each is 1, 2, or 3+ tiles long, plus how many jokers are spent. Runs
are interchangeable once they are the same colour and length class, so the states repeat a
lot, and every state that failed is remembered. That keeps a 160-tile table to thousands
of states, not an exponential tree.

Jokers in runs are placed in a normal form that loses no solutions: a run starts with a
real tile, optionally preceded by jokers (needed when it ends at 13), and any joker after
that fills a number inside or above it. The search first lets jokers be left over (fewer
spent is never worse, which merges many states), then puts spare jokers into sets with
room; only if no set has room does it search again placing every joker itself.

Proving a table impossible means exhausting the search, so three cut-offs keep it short
(docs/tournament-rules.md has the bench): a table that does not settle within 250 states
is searched downwards from 13 as well, in turns (trouble in the high numbers is met
first that way); each top part of the table gets a lower bound on the jokers it needs,
whatever runs reach into it from below; and a state is dropped when one freer than it (an
extra run of 3+, or a run one tile longer) already failed, or when the tiles sent to groups
at a number cannot form groups.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from referee.editions import DEFAULT_RULES, Rules
from referee.solver_options import _groups_fit, _options_with_groups
from referee.tiles import JOKER, Tile, parse_tiles

__all__ = ["SearchBudgetExceeded", "TooManyTiles", "arrange", "check_box_holds"]

_TOP = 13


class SearchBudgetExceeded(RuntimeError):
    """`arrange` visited `max_states` search states without settling the question."""

    def __init__(self, max_states: int) -> None:
        super().__init__(f"no answer within {max_states} search states")
        self.max_states = max_states


class TooManyTiles(ValueError):
    """More tiles than one box of the edition holds (RULES.md section 10): no table or rack
    can show them, so they are refused before any search (which grows with the count)."""

    def __init__(self, count: int, rules: Rules) -> None:
        super().__init__(
            f"{count} tiles, but a box of the {rules.name} edition holds {rules.tile_count} "
            f"({len(rules.colors)} colours x 13 numbers x {rules.copies} copies + "
            f"{rules.jokers} jokers)")
        self.count = count
        self.limit = rules.tile_count


def check_box_holds(tiles: Iterable[Tile], rules: Rules | None = None) -> None:
    """Raise TooManyTiles when there are more tiles than the edition's box holds."""
    rules = rules or DEFAULT_RULES
    count = len(tiles) if isinstance(tiles, list | tuple) else sum(1 for _ in tiles)
    if count > rules.tile_count:
        raise TooManyTiles(count, rules)


def arrange(tiles: Iterable[Tile] | str, rules: Rules | None = None, *,
            max_states: int | None = None) -> list[list[Tile]] | None:
    """Split `tiles` (a multiset, order ignored) into valid sets, or None if that is impossible.

    Every tile is used exactly once. More jokers than the edition has, or a colour it does
    not print, make it impossible. An empty table is arranged as no sets. More tiles than
    the edition's box holds raise TooManyTiles at once.

    Proving a large table impossible can take long (seconds for some 100+ tile draws with
    jokers); with `max_states` the search raises `SearchBudgetExceeded` after that many
    states instead, so a caller on a deadline can say "no suggestion" and move on.
    """
    rules = rules or DEFAULT_RULES
    tiles = parse_tiles(tiles) if isinstance(tiles, str) else list(tiles)
    if not tiles:
        return []
    check_box_holds(tiles, rules)
    colors = rules.colors
    slot = {color: index for index, color in enumerate(colors)}
    ncolors = len(colors)
    counts = [[0] * ncolors for _ in range(_TOP + 2)]
    jokers = 0
    for tile in tiles:
        if tile.color is None:
            jokers += 1
        elif tile.color not in slot:
            return None
        else:
            counts[tile.number][slot[tile.color]] += 1
    if jokers == len(tiles) or jokers > rules.jokers:
        return None
    plan, mirrored, spent = _search_both_ways(counts, jokers, ncolors, rules.group_max,
                                              max_states)
    if plan is None:
        return None
    if mirrored:
        sets = _build(plan, jokers, colors, rules.group_max)
        sets = None if sets is None else sorted((_mirror(s) for s in sets), key=_set_order)
    else:
        sets = _build(plan, jokers, colors, rules.group_max)
    if sets is None:
        # Jokers were left over and every set was full: let the search place them itself.
        left = None if max_states is None else max(max_states - spent, 1)
        plan = _Search(counts, jokers, ncolors, rules.group_max, exact=True,
                       max_states=left).run()
        sets = None if plan is None else _build(plan, jokers, colors, rules.group_max)
    return sets


# States each top part of the table may take to bound the jokers it needs.
_BOUND_SLICE = 200
# The first slice of search states each direction gets before the other direction's turn.
_FIRST_SLICE = 250
# From which turn (its slice this many times the first) the bounds are computed.
_BOUND_AFTER = 4


def _search_both_ways(counts, jokers, ncolors, group_max, max_states):
    """Search upwards from 1 and, in turns, downwards from 13 (the tiles mirrored: n -> 14-n),
    each turn with twice the states of the one before; the first to settle answers.

    Runs and groups look the same mirrored, so both searches answer the same question. But
    a table whose trouble lies in its high numbers is proved impossible only after the
    upward search has tried every way to lay the low ones, while the downward search meets
    it first (and the other way round). A search that stops at its slice keeps every failed
    state it remembered, so a later turn repeats no work; at worst the two cost about three
    times the faster one. Returns (plan, mirrored, states spent)."""
    mirrored_counts = [[0] * ncolors] + [counts[_TOP + 1 - n] for n in range(1, _TOP + 1)] + [
        [0] * ncolors]
    searches = [_Search(counts, jokers, ncolors, group_max),
                _Search(mirrored_counts, jokers, ncolors, group_max)]
    budget = _FIRST_SLICE
    while True:
        for index, search in enumerate(searches):
            spent = sum(s.states for s in searches)
            limit = budget if max_states is None else min(budget, max_states - spent)
            if limit <= 0:
                raise SearchBudgetExceeded(max_states)
            search.slice = limit
            search.hard_limit = None if max_states is None else search.states + (
                max_states - spent)
            # Past the first turn the table is a hard one: bound the jokers the top needs.
            search.use_bound = budget >= _FIRST_SLICE * _BOUND_AFTER
            try:
                plan = search.run()
            except SearchBudgetExceeded:
                continue
            return plan, index == 1, sum(s.states for s in searches)
        budget *= 2


def _unbounded_finds_plan(tiles: list[Tile], rules: Rules) -> bool:
    """The relaxed search alone, upwards and with no cut-off: the reference the tests hold
    the bounded search to."""
    slot = {color: index for index, color in enumerate(rules.colors)}
    counts = [[0] * len(slot) for _ in range(_TOP + 2)]
    jokers = 0
    for tile in tiles:
        if tile.color is None:
            jokers += 1
        else:
            counts[tile.number][slot[tile.color]] += 1
    return _Search(counts, jokers, len(slot), rules.group_max, bounds=False).run() is not None


def _mirror(tiles: list[Tile]) -> list[Tile]:
    """A set found on the mirrored table, back on the real one (runs read upwards again)."""
    return [t if t.color is None else _tile(t.color, _TOP + 1 - t.number) for t in reversed(tiles)]


class _Search:
    """Depth-first over (number, colour) with every failed state remembered.

    Relaxed (the default): jokers may be left over; fewer jokers spent is never worse, so
    a state that failed with u jokers spent also fails with more, and one memo entry covers
    them all. Exact: every joker is placed by the search itself; only needed in the rare
    case where the relaxed answer leaves jokers that no set has room for.
    """

    def __init__(self, counts, jokers, ncolors, group_max, exact=False, max_states=None,
                 bounds=True):
        self.max_states = max_states
        # False: none of the cut-offs (joker bounds, dominated states), for tests to check
        # that they never cut off a table that can be arranged.
        self.bounds = bounds
        self.states = 0
        self.counts = counts
        self.jokers = jokers
        self.ncolors = ncolors
        self.group_max = group_max
        self.exact = exact
        self.failed: dict = {}
        # This table's options per (number, colour, its runs, spare jokers, groups so far).
        self.options: dict = {}
        # Lower bounds on the jokers the numbers from m up need (see _bound_jokers_needed).
        self.need = [0] * (_TOP + 2)
        # Set by the caller: a search that settles within its first slice skips the bound.
        self.use_bound = False
        self.bounded = False
        # States for this turn and the caller's limit over all turns (_search_both_ways).
        self.slice: int | None = None
        self.hard_limit: int | None = None
        # After the last number holding tiles only open runs matter.
        last = 0
        for number in range(1, _TOP + 1):
            if any(counts[number]):
                last = number
        self.last = last
        # Per number and colour: the sorted counts of the colours from there on.
        self.still_to_come = [[tuple(sorted(counts[n][c:])) for c in range(ncolors + 1)]
                              for n in range(_TOP + 2)]

    def run(self):
        start = (0,) * (3 * self.ncolors)
        if self.use_bound and self.bounds and not self.exact and not self.bounded:
            self._bound_jokers_needed()
        if max(self.need) > self.jokers:
            return None  # the numbers from some m up need more jokers than there are
        if self.slice is not None:
            # This turn's states, after the bound's (see _search_both_ways).
            self.max_states = self.states + self.slice
            if self.hard_limit is not None:
                self.max_states = min(self.max_states, self.hard_limit)
        return self._step(1, 0, start, (), 0)

    def _bound_jokers_needed(self):
        """`need[m]`: the fewest jokers the tiles from number m up need, however the runs
        below reach into m; a state at m with fewer spare jokers is cut off at once.

        Found by searching each such top part of the table from a start that lets every
        colour bring runs of 3+ into m (as many as it can have: tiles at m-1 plus jokers),
        which asks less than any real state does: the answer is a lower bound. Top parts
        go from 13 down, each cut off by the bounds above it, and each is given a small
        slice of states; one that needs more leaves its bound where it stands. Failed
        states found on the way are facts about the rest of the table, so the main search
        keeps them."""
        self.bounded = True
        caller_limit = self.hard_limit
        saved = self.max_states
        for number in range(self.last, 1, -1):
            entering = tuple(x for c in range(self.ncolors)
                             for x in (0, 0, self.counts[number - 1][c] + self.jokers))
            need = self.jokers + 1
            for spare in range(self.jokers + 1):
                self.max_states = self.states + _BOUND_SLICE
                if caller_limit is not None:
                    self.max_states = min(self.max_states, caller_limit)
                try:
                    found = self._step(number, 0, entering, (), self.jokers - spare)
                except SearchBudgetExceeded:
                    need = spare
                    break
                if found is not None:
                    need = spare
                    break
            self.need[number] = need
            if need > self.jokers:
                break  # no state reaches past here: the whole table fails
        self.max_states = saved
        if caller_limit is not None and self.states >= caller_limit:
            raise SearchBudgetExceeded(caller_limit)

    def _step(self, number, color, runs, groups, used):
        """A list of choices from here to the end, or None. `runs` holds 3 counts per colour:
        open runs of length 1, 2 and 3+; `groups` the tiles per colour going to groups at
        `number`; `used` the jokers spent so far."""
        if color == self.ncolors:
            return self._close_number(number, runs, groups, used)
        self.states += 1
        if self.max_states is not None and self.states > self.max_states:
            raise SearchBudgetExceeded(self.max_states)
        # `groups` is kept sorted: which colour sent how many does not matter to groups.
        if self.exact:
            key = (number, color, runs, groups, used)
            if key in self.failed:
                return None
        else:
            key = (number, color, runs, groups)
            if self.failed.get(key, 99) <= used:
                return None
            if color == 0 and self.bounds and self._dominated(number, runs, used):
                return None
        base = 3 * color
        spare = self.jokers - used
        options_key = (number, color, runs[base], runs[base + 1], runs[base + 2], spare, groups)
        options = self.options.get(options_key)
        if options is None:
            options = self.options[options_key] = self._options(number, color, runs, groups,
                                                                spare)
        for b, new_groups, cost, choice, to_group in options:
            new_runs = runs[:base] + b + runs[base + 3:]
            rest = self._step(number, color + 1, new_runs, new_groups, used + cost)
            if rest is not None:
                rest.append((number, color, choice, to_group))
                return rest
        if self.exact:
            self.failed[key] = used
        else:
            self.failed[key] = min(used, self.failed.get(key, 99))
        return None

    def _options(self, number, color, runs, groups, spare):
        """This colour's options at this number (see _colour_options)."""
        counts = self.counts
        base = 3 * color
        ahead = (counts[number + 1][color] if number < _TOP else -1,
                 counts[number + 2][color] if number < _TOP - 1 else -1)
        if self.exact:
            prefix_max = min(number - 1, spare)
        else:
            # A joker in front of a run is only needed when it cannot grow above 13.
            prefix_max = min(number - 1, spare, 2) if number >= _TOP - 2 else 0
        return _options_with_groups(
            runs[base], runs[base + 1], runs[base + 2], counts[number][color], spare,
            prefix_max, ahead, not self.exact, groups,
            self.still_to_come[number][color + 1] if self.bounds else None, self.group_max)

    def _dominated(self, number, runs, used):
        """Did a state one step freer than this one already fail at the start of `number`?

        A 3+ run may close at once, so an extra one never hurts; and a longer run can do
        all a shorter one can (both go on with the same tile). A state that failed fails
        for every state it is freer than."""
        failed = self.failed
        for base in range(0, len(runs), 3):
            a1, a2, a3 = runs[base:base + 3]
            for freer in ((a1, a2, a3 + 1), (a1, a2 - 1, a3 + 1) if a2 else None,
                          (a1 - 1, a2 + 1, a3) if a1 else None):
                if freer is None:
                    continue
                other = runs[:base] + freer + runs[base + 3:]
                if failed.get((number, 0, other, ()), 99) <= used:
                    return True
        return False

    def _close_number(self, number, runs, groups, used):
        """All colours at `number` are decided: form its groups, then go on to number+1."""
        spare = self.jokers - used
        sizes = tuple(sorted(groups))
        for group_jokers in range(spare + 1):
            count = _groups_fit(sizes, group_jokers, self.group_max)
            if count is None:
                continue
            if number == _TOP or number >= self.last and not any(runs):
                rest = self._finish(runs, used + group_jokers)
            elif self.jokers - used - group_jokers < self.need[number + 1]:
                rest = None  # the numbers above need more jokers than are left
            else:
                rest = self._step(number + 1, 0, runs, (), used + group_jokers)
            if rest is not None:
                rest.append((number, "groups", count, group_jokers))
                return rest
            if not self.exact or not any(sizes):
                # Relaxed: the fewest jokers that make the groups is always best.
                break
        return None

    def _finish(self, runs, used):
        """After the last number every open run must be 3+ long to close."""
        for color in range(self.ncolors):
            if runs[3 * color] or runs[3 * color + 1]:
                return None
        if self.exact and used != self.jokers:
            return None
        return []


@cache
def _tile(color, number) -> Tile:
    """Tiles are values: one object per colour and number serves every set (building
    and checking a new one for each tile placed was a sixth of a suggestion's time)."""
    return Tile(color, number)


def _build(plan, jokers, colors, group_max):
    """Replay the search's choices with real tiles."""
    plan.reverse()
    ncolors = len(colors)
    open_runs: list[list[list[Tile]]] = [[] for _ in range(ncolors)]
    finished: list[list[Tile]] = []
    to_groups = [0] * ncolors
    joker_pool = jokers

    def length_class(run):
        return min(len(run), 3)

    for step in plan:
        number = step[0]
        if step[1] == "groups":
            _, _, count, group_jokers = step
            dealt = [_tile(colors[c], number) for c in range(ncolors) for _ in range(to_groups[c])]
            groups: list[list[Tile]] = [[] for _ in range(count)]
            for index, tile in enumerate(dealt):
                groups[index % count].append(tile)
            for group in groups:
                while len(group) < 3 and group_jokers:
                    group.append(JOKER)
                    group_jokers -= 1
            for group in groups:
                while len(group) < group_max and group_jokers:
                    group.append(JOKER)
                    group_jokers -= 1
            joker_pool -= step[3]
            finished.extend(("group", group) for group in groups)
            to_groups = [0] * ncolors
            continue
        _, color, (x1, x2, x3, y3, prefixes), to_group = step
        tile = _tile(colors[color], number)
        by_class: dict[int, list[list[Tile]]] = {1: [], 2: [], 3: []}
        for run in open_runs[color]:
            by_class[length_class(run)].append(run)
        still_open = []
        for cls, real in ((1, x1), (2, x2)):
            for i, run in enumerate(by_class[cls]):
                run.append(tile if i < real else JOKER)
                joker_pool -= i >= real
                still_open.append(run)
        for i, run in enumerate(by_class[3]):
            if i < x3:
                run.append(tile)
                still_open.append(run)
            elif i < x3 + y3:
                run.append(JOKER)
                joker_pool -= 1
                still_open.append(run)
            else:
                finished.append(("run", run))
        for p in prefixes:
            still_open.append([JOKER] * p + [tile])
            joker_pool -= p
        open_runs[color] = still_open
        to_groups[color] = to_group
    for runs in open_runs:
        finished.extend(("run", run) for run in runs)
    if not _place_spare_jokers(finished, joker_pool, group_max):
        return None
    sets = [tiles for _, tiles in finished]
    sets.sort(key=_set_order)
    return sets


def _place_spare_jokers(sets, spare, group_max):
    """Jokers the search left over go where there is room: a group under its colour count,
    or a run that can grow above its top (or below its bottom when it ends at 13)."""
    for kind, tiles in sets:
        while spare:
            if kind == "group":
                if len(tiles) >= group_max:
                    break
                tiles.append(JOKER)
            else:
                first = next(i for i, t in enumerate(tiles) if t.number is not None)
                bottom = tiles[first].number - first
                top = bottom + len(tiles) - 1
                if top < _TOP:
                    tiles.append(JOKER)
                elif bottom > 1:
                    tiles.insert(0, JOKER)
                else:
                    break
            spare -= 1
    return spare == 0


def _set_order(tiles):
    first = next(t for t in tiles if t.color is not None)
    numbers = {t.number for t in tiles if t.color is not None}
    return (len(numbers) > 1, first.sort_key())

"""Turns: the initial meld (RULES.md section 4) and every later turn (sections 5 and 6).

A turn is judged from two pictures of the table, before and after, and the player's rack
before it. Tiles are values, so "which R5 moved" cannot be told apart and need not be:
what counts is how many of each tile are where.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from referee.editions import DEFAULT_RULES, Rules, copy_problems
from referee.reasons import Reason
from referee.sets import SetVerdict, check_set
from referee.tiles import Tile, format_tiles

__all__ = ["MeldVerdict", "check_initial_meld", "TurnVerdict", "check_turn"]

Table = Sequence[Sequence[Tile]]


@dataclass(frozen=True)
class MeldVerdict:
    """Is this a legal initial meld; `total` counts the valid sets, jokers as what they are."""

    legal: bool
    total: int
    problems: list[str] = field(default_factory=list)
    set_verdicts: list[SetVerdict] = field(default_factory=list)


def check_initial_meld(sets: Table, rules: Rules | None = None) -> MeldVerdict:
    """The sets a player lays from their own rack as their first play (section 4)."""
    rules = rules or DEFAULT_RULES
    verdicts = [check_set(s, rules) for s in sets]
    problems = []
    # An initial meld is one or more complete sets.
    if not verdicts:
        problems.append(Reason("no sets: an initial meld is one or more complete sets",
                               "turn.no_sets"))
    for number, verdict in enumerate(verdicts, 1):
        # Every set in it must be valid on its own.
        if not verdict.valid:
            problems.append(_set_invalid(number, verdict))
    total = sum(v.value for v in verdicts if v.valid)
    # Worth at least the minimum (30), jokers counting as the tile they stand for.
    if verdicts and total < rules.initial_meld_minimum:
        problems.append(Reason(f"initial meld worth {total} points; it must be worth at least "
                               f"{rules.initial_meld_minimum}", "turn.meld_low", points=total,
                               need=rules.initial_meld_minimum))
    return MeldVerdict(not problems, total, problems, verdicts)


@dataclass(frozen=True)
class TurnVerdict:
    """What the referee says about one turn.

    `played` are the tiles that came onto the table; `left_table` those that went missing
    from it. When the turn is not legal the table is restored and the player draws `draw`
    tiles (section 5 and the settings of section 10); a legal turn draws nothing.

    `invalid_before` names the sets (and lone tiles) that were already invalid at the start
    of the turn and that the player left exactly as they were: the player is judged on what
    they changed, so these are said, but are not among `problems`. `inherited_sets` are
    those sets' places in `table_after` (indexes, like `set_verdicts`).
    """

    legal: bool
    problems: list[str]
    played: list[Tile]
    left_table: list[Tile]
    initial_meld_total: int | None
    set_verdicts: list[SetVerdict]
    draw: int = 0
    invalid_before: list[str] = field(default_factory=list)
    inherited_sets: list[int] = field(default_factory=list)


def check_turn(
    table_before: Table,
    table_after: Table,
    rack_before: Sequence[Tile],
    has_melded: bool,
    rules: Rules | None = None,
) -> TurnVerdict:
    """Judge a whole turn and list everything wrong with it."""
    rules = rules or DEFAULT_RULES
    before = Counter(t for s in table_before for t in s)
    after = Counter(t for s in table_after for t in s)
    rack = Counter(rack_before)
    played_count = after - before
    left_count = before - after
    played = sorted(played_count.elements())
    left_table = sorted(left_count.elements())
    verdicts = [check_set(s, rules) for s in table_after]
    problems: list[str] = []

    # A tile on the table never goes back to a rack (section 5); a joker least of all (6, 9).
    jokers_gone = left_count[Tile.joker()]
    if jokers_gone:
        problems.append(Reason(f"a joker went from the table to the rack ({jokers_gone}): a "
                               f"freed joker must be played again in the same turn",
                               "turn.joker_to_rack", count=jokers_gone))
    numbered_gone = [t for t in left_table if not t.is_joker]
    if numbered_gone:
        problems.append(Reason(f"tiles left the table: {_codes(numbered_gone)}; a tile on the "
                               f"table never goes back to a rack", "turn.tiles_left",
                               tiles=_codes(numbered_gone)))
    # Everything new on the table must come from this player's rack.
    not_from_rack = sorted((played_count - rack).elements())
    if not_from_rack:
        problems.append(Reason(f"tiles not from the rack: {_codes(not_from_rack)}",
                               "turn.not_from_rack", tiles=_codes(not_from_rack)))
    # Laying nothing is a pass: the player draws instead (section 5); `draw` says how many.
    if not played:
        problems.append(Reason("laid nothing from the rack: a pass", "turn.pass"))
    # Every set at the end of the turn is valid and at least 3 tiles long (sections 2, 5),
    # as far as this player made it: a set that was already invalid before the turn and
    # that they left as it was is the previous player's mistake, named apart.
    inherited = Counter(_as_key(s) for s in table_before if not check_set(s, rules).valid)
    invalid_before, inherited_sets = [], []
    for number, verdict in enumerate(verdicts, 1):
        key = _as_key(verdict.tiles)
        if not verdict.valid and inherited[key]:
            inherited[key] -= 1
            inherited_sets.append(number - 1)
            if len(verdict.tiles) == 1:
                invalid_before.append(Reason(f"{_codes(verdict.tiles)} already lay alone on the "
                                             f"table before this turn, and still does",
                                             "turn.alone_before", tiles=_codes(verdict.tiles)))
            else:
                invalid_before.append(Reason(
                    f"set {number} ({_codes(verdict.tiles) or 'empty'}) was already invalid "
                    f"before this turn and was left as it was: {'; '.join(verdict.reasons)}",
                    "turn.invalid_before", number=number, tiles=_codes(verdict.tiles),
                    reasons=list(verdict.reasons)))
            continue
        if len(verdict.tiles) == 1:
            problems.append(Reason(f"{_codes(verdict.tiles)} lies alone on the table: every "
                                   f"tile there must be part of a set of 3 or more",
                                   "turn.alone", tiles=_codes(verdict.tiles)))
        elif not verdict.valid:
            problems.append(_set_invalid(number, verdict))
    # More copies than the box holds means a misread somewhere.
    for problem in dict.fromkeys(copy_problems(list(before.elements()) + list(rack.elements()),
                                               rules) + copy_problems(after.elements(), rules)):
        problems.append(Reason(f"impossible count: {problem}", "turn.impossible_count",
                               text=problem))

    # "Rummy": a set holding a joker stays together (section 6).
    if not rules.joker_sets_splittable:
        for tiles in table_before:
            if any(t.is_joker for t in tiles) and not _kept_together(tiles, table_after):
                problems.append(Reason(f"the set {_codes(tiles)} holds a joker and may not be "
                                       f"split in the {rules.name} edition",
                                       "turn.joker_set_split", tiles=_codes(tiles),
                                       edition=rules.name))

    meld_total = None
    if not has_melded:
        meld_total = _initial_meld(table_before, table_after, played_count, verdicts, rules,
                                   problems)

    legal = not problems
    if legal:
        draw = 0
    elif not played:
        draw = rules.empty_turn_draw
    else:
        draw = rules.invalid_table_draw
    return TurnVerdict(legal, problems, played, left_table, meld_total, verdicts, draw,
                       invalid_before, inherited_sets)


def _initial_meld(table_before, table_after, played_count, verdicts, rules, problems) -> int:
    """Section 4: only sets made wholly of rack tiles count, and they must reach 30."""
    untouched = Counter(_as_key(s) for s in table_before)
    new_sets = []
    for index, tiles in enumerate(table_after):
        key = _as_key(tiles)
        if untouched[key]:
            untouched[key] -= 1
        else:
            new_sets.append(index)
    changed_table_sets = sorted(untouched.elements())
    rack_left = Counter(played_count)
    meld_total = 0
    mixed = []
    for index in new_sets:
        need = Counter(table_after[index])
        if need - rack_left:
            mixed.append(index)
            continue
        rack_left -= need
        if verdicts[index].valid:
            meld_total += verdicts[index].value
    if not rules.table_play_in_initial_meld:
        # Dutch how-to and tournaments: the initial-meld turn leaves table sets alone.
        if changed_table_sets:
            changed = "; ".join(_codes(s) for s in changed_table_sets)
            problems.append(Reason(f"the initial meld may not add to, split or rearrange table "
                                   f"sets in the {rules.name} edition (changed: {changed})",
                                   "turn.meld_changed_table", edition=rules.name,
                                   tiles=changed))
        for index in mixed:
            problems.append(Reason(f"the initial meld uses table tiles: set {index + 1} "
                                   f"({_codes(table_after[index])}) mixes table and rack tiles",
                                   "turn.meld_table_tiles", number=index + 1,
                                   tiles=_codes(table_after[index])))
    if meld_total < rules.initial_meld_minimum:
        message = (f"initial meld worth {meld_total} points; it must be worth at least "
                   f"{rules.initial_meld_minimum} from the rack alone")
        if mixed and rules.table_play_in_initial_meld:
            # Section 9: table tiles never count towards the 30.
            message += (f" (table tiles never count: set"
                        f"{'s' if len(mixed) > 1 else ''} "
                        f"{', '.join(str(i + 1) for i in mixed)} use table tiles)")
        problems.append(Reason(message, "turn.meld_low_rack", points=meld_total,
                               need=rules.initial_meld_minimum))
    return meld_total


def _as_key(tiles) -> tuple[Tile, ...]:
    return tuple(sorted(tiles))


def _kept_together(tiles, table_after) -> bool:
    """The numbered tiles of a joker set all still lie in one set (a joker may be freed)."""
    needed = Counter(t for t in tiles if not t.is_joker)
    return any(not needed - Counter(s) for s in table_after)


def _set_invalid(number: int, verdict: SetVerdict) -> Reason:
    return Reason(f"set {number} ({_codes(verdict.tiles) or 'empty'}) is invalid: "
                  f"{'; '.join(verdict.reasons)}", "turn.set_invalid", number=number,
                  tiles=_codes(verdict.tiles), reasons=list(verdict.reasons))


def _codes(tiles) -> str:
    return format_tiles(tiles)

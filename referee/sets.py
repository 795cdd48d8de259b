"""Sets (melds): is a row of tiles a run, a group, or invalid, and why (RULES.md section 2).

A verdict lists every problem found, not just the first, because a player fixing a set (or
a camera re-reading one) wants the whole picture at once. Whether a set is valid depends
only on which tiles it holds; the order only decides what a joker is read as.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from referee.editions import DEFAULT_RULES, Rules
from referee.reasons import Reason
from referee.tiles import Color, Tile, format_tiles, parse_tiles

__all__ = ["SetVerdict", "check_set", "check_table", "table_is_valid"]

RUN = "run"
GROUP = "group"
_MIN = 3
_TOP = 13


@dataclass(frozen=True)
class SetVerdict:
    """What the referee says about one set.

    `jokers` holds the tile each joker stands for, in the order the jokers lie in the set.
    `value` is the set's worth with jokers counted as the tiles they stand for; for an
    invalid set, whose jokers stand for nothing, it is the face value of its numbered tiles.
    """

    tiles: tuple[Tile, ...]
    valid: bool
    kind: str | None
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    jokers: list[Tile] = field(default_factory=list)
    value: int = 0

    def summary(self) -> str:
        """One line for people: `R12 R13 J: valid run, J is R11, 36 points`."""
        codes = format_tiles(self.tiles) or "(empty)"
        if not self.valid:
            return f"{codes}: invalid: {'; '.join(self.reasons)}"
        parts = [f"{codes}: valid {self.kind}"]
        if self.jokers:
            parts.append(", ".join(f"J is {t.code()}" for t in self.jokers))
        parts.append(f"{self.value} points")
        parts.extend(self.notes)
        return ", ".join(parts)

    def to_dict(self) -> dict:
        """The JSON shape of DESIGN.md: tiles as codes, jokers as the codes they stand for."""
        return {
            "tiles": [t.code() for t in self.tiles],
            "valid": self.valid,
            "kind": self.kind,
            "reasons": list(self.reasons),
            "notes": list(self.notes),
            "jokers": [t.code() for t in self.jokers],
            "value": self.value,
        }


def check_set(tiles: Iterable[Tile] | str, rules: Rules | None = None) -> SetVerdict:
    """Judge one set as laid, left to right. Accepts tiles or a code string like "R1 R2 J"."""
    rules = rules or DEFAULT_RULES
    tiles = tuple(parse_tiles(tiles) if isinstance(tiles, str) else tiles)
    size = len(tiles)
    reals = [t for t in tiles if t.color is not None]
    joker_count = size - len(reals)
    colors = {t.color for t in reals}
    numbers = {t.number for t in reals}
    face_value = sum(t.number for t in reals)

    reasons: list[str] = []
    # Every set on the table has at least three tiles (section 2).
    if size < _MIN:
        reasons.append(Reason(f"too short: {size} tile{'s' if size != 1 else ''}; a set needs "
                              f"at least 3", "set.too_short", count=size))
    # Jokers alone stand for nothing, so such a set is no run and no group.
    if size and not reals:
        reasons.append(Reason("only jokers: a set of jokers alone stands for nothing",
                              "set.only_jokers"))
    # More jokers in one set than the box holds means a misread or a foreign tile.
    if joker_count > rules.jokers:
        reasons.append(Reason(f"too many jokers: {joker_count} jokers, but the {rules.name} "
                              f"edition has {rules.jokers}", "set.too_many_jokers",
                              count=joker_count, edition=rules.name, allowed=rules.jokers))
    # A colour slot the edition does not print cannot be part of any set.
    for color in sorted(colors - set(rules.colors), key=list(Color).index):
        reasons.append(Reason(f"unknown colour: the {rules.name} edition has no "
                              f"{color.name_word} tiles", "set.unknown_colour",
                              edition=rules.name, colors=color.value))

    run = _run_reading(tiles, reals, numbers, size) if len(colors) <= 1 and reals else None
    group = (_group_reading(reals, colors, joker_count, size, rules)
             if len(numbers) <= 1 and reals else None)

    if not reasons and (run or group):
        return _valid_verdict(tiles, reals, run, group, rules)

    if not run and not group:
        reasons.extend(_shape_problems(tiles, reals, colors, numbers, joker_count, size, rules))
    if not reasons:
        reasons.append(Reason("not a run or a group", "set.not_run_or_group"))
    return SetVerdict(tiles, False, None, reasons, [], [], face_value)


def _run_reading(tiles, reals, numbers, size):
    """(start, positional) for the best valid run reading, or None."""
    if len(numbers) != len(reals) or size > _TOP:
        return None
    low, high = min(numbers), max(numbers)
    if high - low + 1 > size:
        return None
    # Position first: the joker is the tile at its place in the row (R6 R7 J is R8).
    first = tiles.index(reals[0])
    start = reals[0].number - first
    if 1 <= start and start + size - 1 <= _TOP:
        for index, tile in enumerate(tiles):
            if tile.color is not None and tile.number != start + index:
                break
        else:
            return start, True
    # Otherwise the highest-valued stretch that holds every tile (J R1 R2 is R1 R2 R3).
    return min(low, _TOP + 1 - size), False


def _group_reading(reals, colors, joker_count, size, rules):
    if len(colors) != len(reals) or size > rules.group_max:
        return None
    return reals[0].number


def _valid_verdict(tiles, reals, run, group, rules) -> SetVerdict:
    size = len(tiles)
    notes: list[str] = []
    if run is not None:
        start, positional = run
        run_value = size * start + size * (size - 1) // 2
    if group is not None:
        group_value = group * size
    # A positional run reading wins; otherwise the highest value (R13 J J is three 13s).
    if run is not None and (run[1] or group is None or run_value >= group_value):
        color = reals[0].color
        if positional:
            jokers = [Tile(color, start + i) for i, t in enumerate(tiles) if t.color is None]
        else:
            present = {t.number for t in reals}
            missing = [n for n in range(start, start + size) if n not in present]
            jokers = [Tile(color, n) for n in missing]
            in_order = all(a.number < b.number for a, b in zip(reals, reals[1:], strict=False))
            reading = format_tiles(Tile(color, n) for n in range(start, start + size))
            if in_order and jokers:
                notes.append(f"a joker lies out of place: read as {reading}")
            else:
                notes.append(f"out of order: read as {reading}")
        return SetVerdict(tiles, True, RUN, [], notes, jokers, run_value)
    present = {t.color for t in reals}
    missing = [c for c in rules.colors if c not in present]
    jokers = [Tile(c, group) for c in missing[: size - len(reals)]]
    if jokers and len(missing) > len(jokers):
        # In a group of three the joker may be either missing colour (section 6).
        options = " or ".join(Tile(c, group).code() for c in missing)
        notes.append(f"the joker could stand for {options}")
    return SetVerdict(tiles, True, GROUP, [], notes, jokers, group_value)


def _shape_problems(tiles, reals, colors, numbers, joker_count, size, rules) -> list[str]:
    """Why the tiles make neither a run nor a group: every problem with the likelier shape."""
    problems: list[str] = []
    if not reals:
        return problems
    by_color = Counter(t.color for t in reals).most_common(1)[0][1]
    by_number = Counter(t.number for t in reals).most_common(1)[0][1]
    looks_like_run = len(numbers) > 1 and (len(colors) == 1 or by_color > by_number)
    looks_like_group = len(colors) > 1 and (len(numbers) == 1 or by_number > by_color)
    if not looks_like_run and not looks_like_group:
        if len(numbers) > 1:
            # Neither one colour nor one number: say both, since no shape is more likely.
            problems.append(Reason(f"mixed colours and numbers: a run is one colour "
                                   f"({_words(colors)} here), a group one number "
                                   f"({_numbers(numbers)} here)", "set.mixed_both",
                                   colors=_letters(colors), numbers=_numbers(numbers)))
            return problems
        # Same colour and same number, e.g. R5 R5 J: both shapes forbid the repeat.
        problems.append(Reason(f"duplicate tile: {_repeats(reals, lambda t: t)}; a run holds "
                               f"each number once and a group each colour once",
                               "set.duplicate_tile", tiles=_repeats(reals, lambda t: t)))
        return problems
    if looks_like_run:
        if len(colors) > 1:
            # A run is a single colour (section 2).
            problems.append(Reason(f"mixed colours: a run is one colour, this set has "
                                   f"{_words(colors)}", "set.mixed_colours",
                                   colors=_letters(colors)))
        problems.extend(_run_problems(reals, numbers, joker_count, size))
    else:
        if len(numbers) > 1:
            problems.append(Reason(f"mixed numbers: a group is one number, this set has "
                                   f"{_numbers(numbers)}", "set.mixed_numbers",
                                   numbers=_numbers(numbers)))
        if len(colors) < len(reals):
            # Two tiles of one colour in a group (section 9).
            repeats = _repeats(reals, lambda t: t.color)
            problems.append(Reason(f"duplicate colour in a group: {repeats}; a group has each "
                                   f"colour once", "set.duplicate_colour", tiles=repeats))
        if size > rules.group_max:
            problems.append(Reason(f"too long: {size} tiles; a group has at most "
                                   f"{rules.group_max}", "set.too_long_group", count=size,
                                   most=rules.group_max))
    return problems


def _run_problems(reals, numbers, joker_count, size) -> list[str]:
    problems = []
    if len(numbers) < len(reals):
        repeats = _repeats(reals, lambda t: t.number)
        problems.append(Reason(f"duplicate number in a run: {repeats}; a run holds each number "
                               f"once", "set.duplicate_number", tiles=repeats))
    if size > _TOP:
        problems.append(Reason(f"too long: {size} tiles; a run has at most 13",
                               "set.too_long_run", count=size))
    ordered = sorted(numbers)
    missing = [n for n in range(ordered[0], ordered[-1] + 1) if n not in numbers]
    if len(missing) > joker_count:
        # 13 ends a run: if the numbers only fit together around the corner, say so (section 9).
        gaps = [b - a - 1 for a, b in zip(ordered, ordered[1:], strict=False)]
        wrap_gap = ordered[0] + _TOP - ordered[-1] - 1
        if gaps and max(gaps) > wrap_gap and len(missing) - max(gaps) + wrap_gap <= joker_count:
            problems.append(Reason("wraps past 13: 13 ends a run and 1 can only start one "
                                   "(12-13-1 is invalid)", "set.wraps"))
        else:
            shown = ", ".join(str(n) for n in missing[:6]) + ("..." if len(missing) > 6 else "")
            fill = f"{joker_count} joker{'s' if joker_count != 1 else ''}"
            problems.append(Reason(f"gap: {len(missing)} number{'s' if len(missing) != 1 else ''} "
                                   f"missing ({shown}) and {fill} to fill them", "set.gap",
                                   count=len(missing), missing=shown, jokers=joker_count))
    return problems


def _words(colors) -> str:
    return ", ".join(c.name_word for c in sorted(colors, key=list(Color).index))


def _letters(colors) -> str:
    return " ".join(c.value for c in sorted(colors, key=list(Color).index))


def _numbers(numbers) -> str:
    return ", ".join(str(n) for n in sorted(numbers))


def _repeats(reals, key) -> str:
    counts = Counter(key(t) for t in reals)
    repeated = [t for t in sorted(set(reals)) if counts[key(t)] > 1]
    return " ".join(t.code() for t in repeated)


def check_table(sets: Iterable[Sequence[Tile] | str], rules: Rules | None = None) -> list[SetVerdict]:
    """One verdict per set, in order."""
    rules = rules or DEFAULT_RULES
    return [check_set(s, rules) for s in sets]


def table_is_valid(sets: Iterable[Sequence[Tile]], rules: Rules | None = None) -> bool:
    return all(v.valid for v in check_table(sets, rules))

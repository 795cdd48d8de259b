"""Subcommands about the rules themselves, from tile codes: `check`, `score`, `arrange`.

    rummikub check "R12 R13 J" "K5 R5 B5 O5"      one line per set; exit 1 if any is invalid
    rummikub check --meld "R10 R11 R12" "K1 K2 K3"   is this a legal initial meld
    rummikub score "R5 J K13" --edition travel-tin    what a rack costs at the end of a round
    rummikub arrange "R1 R2 R3 B7 K7 O7 J"            split tiles into valid sets, if possible
    rummikub arrange --meld "R10 R11 J K3 K4"          the best initial meld a rack holds

Unreadable input (a bad or empty tile code, an unknown edition or setting, more tiles than
the edition's box holds) exits with status 2 and one line saying what.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from app.cli.common import (
    CommandError,
    add_json_option,
    add_models_option,
    add_rules_options,
    command_parser,
    rules_from_args,
)
from referee import (
    Rules,
    SearchBudgetExceeded,
    TileCodeError,
    TooManyTiles,
    arrange,
    check_box_holds,
    check_initial_meld,
    check_set,
    check_table,
    copy_problems,
    format_tiles,
    parse_tiles,
    rack_penalty,
)
from referee.meld import best_initial_meld

# `arrange` gives up after this many search states (a few seconds and ~100 MB at worst):
# a whole box needs ~100, but many copies of a few tiles can make the exact search long.
ARRANGE_MAX_STATES = 200_000
# The meld search remembers states too; racks of 30 tiles need under 10,000.
MELD_MAX_STATES = 200_000


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `check`, `score` and `arrange`."""
    check = command_parser(
        subparsers, "check", help="judge sets given as tile codes", tile_codes=True,
        description="Judge each set (one quoted argument per set, e.g. \"R12 R13 J\"): valid "
                    "or not and why, what each joker stands for, and its value. Exit status 1 "
                    "when any set is invalid (or the meld is not legal), 2 on unreadable input.")
    check.add_argument("sets", nargs="+", metavar="SET", help="tile codes of one set, e.g. \"R1 R2 J\"")
    check.add_argument("--meld", action="store_true",
                       help="judge the sets together as a player's initial meld")
    add_json_option(check, "print JSON instead of text")
    add_rules_options(check)
    check.set_defaults(func=_check)

    score = command_parser(
        subparsers, "score", help="the penalty for the tiles left on a rack", tile_codes=True,
        photos=True,
        description="Sum what the tiles left on a rack cost at the end of a round (a joker 25 "
                    "or 30, by edition), from tile codes or from a photo of the rack (read "
                    "row by row). An empty rack is written -.")
    score.add_argument("rack", nargs="+", metavar="TILES|PHOTO",
                       help="tile codes, e.g. \"R5 J K13\", or a photo of the rack, or - for "
                            "an empty rack")
    add_json_option(score, "print JSON instead of text (the rack's penalty is `total`)")
    add_models_option(score)
    score.add_argument("--profile", default=None, metavar="PROFILE",
                       help="calibration profile of your tiles, for a rack photo")
    add_rules_options(score)
    score.set_defaults(func=_score)

    arrange_parser = command_parser(
        subparsers, "arrange", help="split tiles into valid sets, if that is possible",
        tile_codes=True,
        description="Find one way to lay all the given tiles as valid sets, or say there is "
                    "none (exit status 1).")
    arrange_parser.add_argument("tiles", nargs="+", metavar="TILES",
                                help="tile codes, e.g. \"R1 R2 R3 B7 K7 O7 J\"")
    arrange_parser.add_argument(
        "--meld", action="store_true",
        help="the tiles are a rack: show the best initial meld it holds (most points, "
             "jokers used), or that none reaches the minimum; exit status 1 when none does")
    add_json_option(arrange_parser, "print JSON instead of text")
    add_rules_options(arrange_parser)
    arrange_parser.set_defaults(func=_arrange)


def _tiles(text: str, rules: Rules) -> list:
    """The tiles of one argument; "" is a mistake, and so is more than a box holds."""
    try:
        tiles = parse_tiles(text, allow_empty=False)
        check_box_holds(tiles, rules)
    except (TileCodeError, TooManyTiles) as error:
        raise CommandError(str(error)) from None
    return tiles


def _check(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    sets = [_tiles(text, rules) for text in args.sets]
    try:
        check_box_holds([t for s in sets for t in s], rules)
    except TooManyTiles as error:
        raise CommandError(str(error)) from None
    if args.meld:
        verdict = check_initial_meld(sets, rules)
        if args.json:
            print(json.dumps({"legal": verdict.legal, "total": verdict.total,
                              "problems": verdict.problems,
                              "sets": [v.to_dict() for v in verdict.set_verdicts]}))
        else:
            for set_verdict in verdict.set_verdicts:
                print(set_verdict.summary())
            state = "legal" if verdict.legal else "not legal"
            print(f"initial meld: {state}, {verdict.total} points "
                  f"(at least {rules.initial_meld_minimum} needed)")
            for problem in verdict.problems:
                print(f"  - {problem}")
        return 0 if verdict.legal else 1
    verdicts = check_table(sets, rules)
    if args.json:
        print(json.dumps([v.to_dict() for v in verdicts]))
    else:
        for verdict in verdicts:
            print(verdict.summary())
    return 0 if all(v.valid for v in verdicts) else 1


def _score(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)  # a bad --edition or --set fails before any model loads
    if args.rack == ["-"]:
        tiles = []
    elif len(args.rack) == 1 and _is_photo(args.rack[0]):
        from app.cli.game import score_photo

        args.photo = args.rack[0]
        return score_photo(args)
    else:
        tiles = _tiles(" ".join(args.rack), rules)
    penalty = rack_penalty(tiles, rules)
    if args.json:
        print(json.dumps({"tiles": [t.code() for t in tiles], "total": penalty,
                          "edition": rules.name, "warnings": copy_problems(tiles, rules)}))
        return 0
    parts = ", ".join(
        f"J {rules.rack_joker_penalty}" if t.is_joker else f"{t.code()} {t.number}"
        for t in tiles)
    print(f"{format_tiles(tiles) or '(empty rack)'}: penalty {penalty}"
          + (f" ({parts})" if tiles else ""))
    for problem in copy_problems(tiles, rules):
        print(f"warning: {problem}")
    return 0


def _is_photo(text: str) -> bool:
    """One argument is a photo unless it reads as tile codes, or was meant as them: blank,
    several words, or one colour letter and no other letter (R14, R²). A name that is
    neither a file nor tile codes is a missing photo: say so, not "no colour 'M'"."""
    try:
        parse_tiles(text, allow_empty=False)
        return False
    except TileCodeError:
        pass
    word = text.strip()
    if not word or any(c.isspace() for c in word):
        return False
    try:
        exists = Path(text).exists()
    except (OSError, ValueError):
        exists = False
    meant_as_code = word[0].upper() in "KRBOGYJ" and not any(c.isalpha() for c in word[1:])
    if meant_as_code and not exists:
        return False
    if not exists:
        raise CommandError(f"{text}: no such photo file (and not tile codes, like \"R5 J K13\")")
    return True


def _arrange(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    tiles = _tiles(" ".join(args.tiles), rules)
    if args.meld:
        return _best_meld(tiles, rules, args.json)
    try:
        sets = arrange(tiles, rules, max_states=ARRANGE_MAX_STATES)
    except SearchBudgetExceeded as error:
        raise CommandError(f"gave up: {error} ({len(tiles)} tiles; many copies of a few "
                           f"tiles make the search long)") from None
    problems = copy_problems(tiles, rules)
    if args.json:
        print(json.dumps({"tiles": [t.code() for t in tiles],
                          "sets": None if sets is None else [[t.code() for t in s] for s in sets],
                          "warnings": problems}))
        return 0 if sets is not None else 1
    if sets is None:
        why = _why_unarrangeable(tiles, rules)
        print(f"no arrangement: {why}")
    else:
        for tiles_of_set in sets:
            print(format_tiles(tiles_of_set))
    for problem in problems:
        print(f"warning: {problem}")
    return 0 if sets is not None else 1


def _best_meld(tiles: list, rules: Rules, as_json: bool) -> int:
    try:
        meld = best_initial_meld(tiles, rules, max_states=MELD_MAX_STATES)
    except SearchBudgetExceeded as error:
        raise CommandError(f"gave up: {error} ({len(tiles)} tiles on one rack)") from None
    problems = copy_problems(tiles, rules)
    if as_json:
        print(json.dumps(meld.to_dict() | {"warnings": problems}))
        return 0 if meld.reaches else 1
    for tiles_of_set in meld.sets:
        print(check_set(tiles_of_set, rules).summary())
    print(f"initial meld: {meld.summary()}")
    for problem in problems:
        print(f"warning: {problem}")
    return 0 if meld.reaches else 1


def _why_unarrangeable(tiles: list, rules: Rules) -> str:
    jokers = sum(t.is_joker for t in tiles)
    if jokers == len(tiles):
        return "jokers alone make no set"
    if jokers > rules.jokers:
        return f"{jokers} jokers, but the {rules.name} edition has {rules.jokers}"
    foreign = sorted({t.color.name_word for t in tiles if t.color and t.color not in rules.colors})
    if foreign:
        return f"the {rules.name} edition has no {', '.join(foreign)} tiles"
    if len(tiles) < 3:
        return f"{'one tile makes' if len(tiles) == 1 else 'two tiles make'} no set: a set has 3 or more"
    return f"these {len(tiles)} tiles cannot all be laid as valid runs and groups"

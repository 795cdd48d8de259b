"""Subcommands about the rules themselves, from tile codes: `check`, `score`, `arrange`.

    rummikub check "R12 R13 J" "K5 R5 B5 O5"      one line per set; exit 1 if any is invalid
    rummikub check --meld "R10 R11 R12" "K1 K2 K3"   is this a legal initial meld
    rummikub score "R5 J K13" --edition travel-tin    what a rack costs at the end of a round
    rummikub arrange "R1 R2 R3 B7 K7 O7 J"            split tiles into valid sets, if possible

Unreadable input (a bad tile code, an unknown edition or setting) exits with status 2.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from referee import (
    EDITIONS,
    Rules,
    TileCodeError,
    arrange,
    check_initial_meld,
    check_table,
    copy_problems,
    edition,
    format_tiles,
    parse_tiles,
    rack_penalty,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `check`, `score` and `arrange`."""
    check = subparsers.add_parser(
        "check", help="judge sets given as tile codes",
        description="Judge each set (one quoted argument per set, e.g. \"R12 R13 J\"): valid "
                    "or not and why, what each joker stands for, and its value. Exit status 1 "
                    "when any set is invalid (or the meld is not legal), 2 on unreadable input.")
    check.add_argument("sets", nargs="+", metavar="SET", help="tile codes of one set, e.g. \"R1 R2 J\"")
    check.add_argument("--meld", action="store_true",
                       help="judge the sets together as a player's initial meld")
    check.add_argument("--json", action="store_true", help="print JSON instead of text")
    _add_rule_options(check)
    check.set_defaults(func=_check)

    score = subparsers.add_parser(
        "score", help="the penalty for the tiles left on a rack",
        description="Sum what the tiles left on a rack cost at the end of a round (a joker 25 "
                    "or 30, by edition).")
    score.add_argument("rack", nargs="+", metavar="TILES|PHOTO",
                       help="tile codes, e.g. \"R5 J K13\", or a photo of the rack")
    score.add_argument("--json", action="store_true", help="print JSON instead of text")
    score.add_argument("--models", default=None, metavar="DIR",
                       help="where the ONNX models are, for a rack photo (default models/)")
    _add_rule_options(score)
    score.set_defaults(func=_score)

    arrange_parser = subparsers.add_parser(
        "arrange", help="split tiles into valid sets, if that is possible",
        description="Find one way to lay all the given tiles as valid sets, or say there is "
                    "none (exit status 1).")
    arrange_parser.add_argument("tiles", nargs="+", metavar="TILES",
                                help="tile codes, e.g. \"R1 R2 R3 B7 K7 O7 J\"")
    arrange_parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    _add_rule_options(arrange_parser)
    arrange_parser.set_defaults(func=_arrange)


def _add_rule_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--edition", default="original", choices=sorted(EDITIONS),
                        metavar="NAME", help=f"rule preset: {', '.join(EDITIONS)} (default original)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="NAME=VALUE",
                        help="override one rule setting, e.g. --set rack_joker_penalty=50")


def _rules(args: argparse.Namespace) -> Rules:
    from app.cli import CommandError

    try:
        rules = edition(args.edition)
        for override in args.overrides:
            name, sep, value = override.partition("=")
            if not sep:
                raise ValueError(f"--set takes NAME=VALUE, not {override!r}")
            rules = rules.with_setting(name, value)
    except ValueError as error:
        raise CommandError(str(error)) from None
    return rules


def _tiles(text: str) -> list:
    from app.cli import CommandError

    try:
        return parse_tiles(text)
    except TileCodeError as error:
        raise CommandError(str(error)) from None


def _check(args: argparse.Namespace) -> int:
    rules = _rules(args)
    sets = [_tiles(text) for text in args.sets]
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
    first = args.rack[0]
    if len(args.rack) == 1 and _looks_like_photo(first):
        from app.cli.game import score_photo

        _rules(args)  # a bad --edition or --set fails before any model loads
        args.photo = first
        return score_photo(args)
    rules = _rules(args)
    tiles = _tiles(" ".join(args.rack))
    penalty = rack_penalty(tiles, rules)
    if args.json:
        print(json.dumps({"tiles": [t.code() for t in tiles], "penalty": penalty,
                          "edition": rules.name}))
    else:
        parts = ", ".join(
            f"J {rules.rack_joker_penalty}" if t.is_joker else f"{t.code()} {t.number}"
            for t in tiles)
        print(f"{format_tiles(tiles) or '(empty rack)'}: penalty {penalty}"
              + (f" ({parts})" if tiles else ""))
    return 0


def _looks_like_photo(text: str) -> bool:
    """Tile codes never hold a dot or a slash; a photo path nearly always does."""
    try:
        return Path(text).is_file() or any(c in text for c in "./\\")
    except OSError:
        return False


def _arrange(args: argparse.Namespace) -> int:
    rules = _rules(args)
    tiles = _tiles(" ".join(args.tiles))
    sets = arrange(tiles, rules)
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


def _why_unarrangeable(tiles: list, rules: Rules) -> str:
    jokers = sum(t.is_joker for t in tiles)
    if jokers == len(tiles):
        return "jokers alone make no set"
    if jokers > rules.jokers:
        return f"{jokers} jokers, but the {rules.name} edition has {rules.jokers}"
    foreign = sorted({t.color.name_word for t in tiles if t.color and t.color not in rules.colors})
    if foreign:
        return f"the {rules.name} edition has no {', '.join(foreign)} tiles"
    return f"these {len(tiles)} tiles cannot all be laid as valid runs and groups"

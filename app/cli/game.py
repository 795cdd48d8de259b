"""Subcommands that judge a game from photos: `turn`, `round`, `start` (and `score PHOTO`).

`score_photo(args)` is what `rummikub score` calls for a photo path: the tiles on a rack
photo and the rack's penalty. Every photo goes through the same `vision.pipeline`
objects as `scan`, with the models loaded once per command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this module's subcommands."""
    turn = subparsers.add_parser(
        "turn",
        help="judge a turn from photos of the table before and after it",
        description="Match the tiles of the BEFORE and AFTER photos (by reading and by place, "
        "so two identical tiles do not confuse it) and run the referee's turn check: tiles "
        "played, tiles that left the table, a missing joker, the sets and their verdicts.",
    )
    turn.add_argument("before", metavar="BEFORE", help="photo of the table before the turn")
    turn.add_argument("after", metavar="AFTER", help="photo of the table after the turn")
    turn.add_argument("--first-meld", action="store_true",
                      help="this turn is the player's initial meld (30 points from the rack alone)")
    turn.add_argument("--rack", metavar="RACK_PHOTO",
                      help="photo of the player's rack before the turn (checks where tiles came from)")
    _common(turn)
    turn.set_defaults(func=run_turn)

    round_ = subparsers.add_parser(
        "round",
        help="score the end of a round from rack photos",
        description="Read each player's rack photo and score the round (RULES.md section 8). "
        "Photos go to the players in order; the winner's rack may be left out (or given as "
        "'-'), being empty. Without --winner the pool ran out and the lowest rack wins.",
    )
    round_.add_argument("racks", nargs="+", metavar="RACK_PHOTO", help="rack photos, or - for empty")
    round_.add_argument("--players", required=True, help='player names, e.g. "Ann,Ben,Cas,Dee"')
    round_.add_argument("--winner", help="the player who laid their last tile")
    round_.add_argument("--sheet", type=Path, metavar="FILE",
                        help="append the scores to this score sheet (CSV) and print the totals")
    _common(round_)
    round_.set_defaults(func=run_round)

    start = subparsers.add_parser(
        "start",
        help="who starts, from a photo of the tiles drawn at the start",
        description="Each player draws one tile, laid left to right in player order; the "
        "highest number starts, ties draw again (RULES.md section 3).",
    )
    start.add_argument("photo", metavar="PHOTO")
    start.add_argument("--players", required=True, help='player names, left to right')
    _common(start)
    start.set_defaults(func=run_start)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--edition", metavar="NAME", default=None,
                        help="rule preset (default: the standard rules)")
    parser.add_argument("--json", action="store_true", help="print JSON to stdout")
    parser.add_argument("--models", metavar="DIR", type=Path, default=None,
                        help="folder with detector.onnx and classifier.onnx (default: models/)")


# ----------------------------------------------------------------------------- helpers
def _error(message: str):
    from app.cli import CommandError

    return CommandError(message)


def _rules(name: str | None):
    from app.cli import rules_for_edition

    return rules_for_edition(name)


def _players(text: str) -> list[str]:
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise _error("--players: give names separated by commas, e.g. \"Ann,Ben\"")
    if len(set(names)) != len(names):
        raise _error("--players: every player needs a different name")
    return names


class _Reader:
    """Loads the models once (on first use) and reads photos into TileDetections."""

    def __init__(self, models_dir: Path | None):
        self.models_dir = models_dir
        self._reader = None

    def read(self, path: str):
        from vision.decode import PhotoError, read_photo
        from vision.pipeline import ModelsMissing, TileReader

        if self._reader is None:
            try:
                self._reader = TileReader.load(self.models_dir)
            except ModelsMissing as error:
                raise _error(str(error)) from None
        try:
            image = read_photo(path)
        except PhotoError as error:
            raise _error(str(error)) from None  # the message already names the photo
        return self._reader.read(image)


def _set_lines(reading, indent: str = "  ") -> list[str]:
    codes = reading.detections.codes
    lines = []
    for number, (ids, verdict) in enumerate(zip(reading.sets, reading.verdicts, strict=True), 1):
        text = " ".join(codes[i] for i in ids)
        if verdict.valid:
            extra = ", ".join(f"J is {t.code()}" for t in verdict.jokers)
            status = f"ok ({verdict.kind}, {verdict.value} points{', ' + extra if extra else ''})"
        else:
            status = "INVALID: " + "; ".join(verdict.reasons)
        lines.append(f"{indent}set {number}: {text}  {status}")
    if reading.loose:
        lines.append(f"{indent}loose: " + " ".join(codes[i] for i in reading.loose))
    return lines


def _print_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=2)
    sys.stdout.write("\n")


# ----------------------------------------------------------------------------- turn
def run_turn(args: argparse.Namespace) -> int:
    from vision.turn import judge_turn

    rules = _rules(args.edition)
    reader = _Reader(args.models)
    before = reader.read(args.before)
    after = reader.read(args.after)
    rack = None
    if args.rack:
        from vision.rack import read_rack

        rack = read_rack(reader.read(args.rack), rules).detections
    turn = judge_turn(before, after, rules=rules, rack=rack, first_meld=args.first_meld)
    if args.json:
        _print_json({"before_photo": args.before, "after_photo": args.after, **turn.to_json()})
        return 0 if turn.verdict.legal else 1
    v = turn.verdict
    codes_a, codes_b = turn.after.detections.codes, turn.before.detections.codes
    print(f"turn {args.before} -> {args.after}: {'LEGAL' if v.legal else 'NOT LEGAL'}")
    print("  played: " + (" ".join(codes_a[i] for i in turn.played) or "nothing"))
    print("  left the table: " + (" ".join(codes_b[i] for i in turn.left) or "nothing"))
    if turn.joker_missing:
        print("  a joker went missing from the table")
    if args.first_meld:
        print(f"  initial meld total: {v.initial_meld_total} "
              f"(minimum {rules.initial_meld_minimum})")
        touched = [" ".join(codes_b[i] for i in turn.before.sets[k]) for k in turn.touched_sets]
        print("  table sets touched: " + ("; ".join(touched) if touched else "none"))
    print("  table after:")
    for line in _set_lines(turn.after, "    "):
        print(line)
    for problem in v.problems:
        print(f"  problem: {problem}")
    if not v.legal and v.draw:
        print(f"  the table is restored and the player draws {v.draw}")
    for warning in turn.warnings + turn.after.warnings:
        print(f"  warning: {warning}")
    return 0 if v.legal else 1


# ----------------------------------------------------------------------------- score
def score_photo(args: argparse.Namespace) -> int:
    """`rummikub score PHOTO [--edition NAME] [--json] [--models DIR]`: a rack's penalty.

    Reads `args.photo` (or the first of `args.photos` / `args.tiles`), `args.edition`,
    `args.json` and `args.models` when present.
    """
    from vision.rack import read_rack

    photo = getattr(args, "photo", None)
    for name in ("photos", "tiles"):
        value = getattr(args, name, None)
        if photo is None and value:
            photo = value[0] if isinstance(value, list | tuple) else value
    if photo is None:
        raise _error("score: give a rack photo")
    rules = _rules(getattr(args, "edition", None))
    reader = _Reader(getattr(args, "models", None))
    rack = read_rack(reader.read(str(photo)), rules)
    if getattr(args, "json", False):
        _print_json(rack.to_json(str(photo)))
        return 0
    codes = rack.detections.codes
    print(f"{photo}: {len(codes)} tiles, penalty {rack.total}")
    for number, row in enumerate(rack.rows, 1):
        print(f"  row {number}: " + " ".join(codes[i] + ("?" if rack.detections.uncertain[i] else "")
                                           for i in row))
    for warning in rack.warnings:
        print(f"  warning: {warning}")
    return 0


# ----------------------------------------------------------------------------- round
def _write_atomically(path, text: str) -> None:
    """Replace `path` with `text` so a crash or full disk never leaves half a score sheet."""
    import os
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def run_round(args: argparse.Namespace) -> int:
    from referee import ScoreSheet, score_round
    from vision.rack import read_rack

    rules = _rules(args.edition)
    players = _players(args.players)
    if args.winner is not None and args.winner not in players:
        raise _error(f"--winner {args.winner!r} is not one of the players: {', '.join(players)}")
    photos = list(args.racks)
    if len(photos) == len(players) - 1 and args.winner is not None:
        photos.insert(players.index(args.winner), "-")
    if len(photos) != len(players):
        raise _error(f"{len(photos)} rack photo(s) for {len(players)} players; give one per "
                     f"player in order (the winner's may be left out or given as -)")
    reader = _Reader(args.models)
    racks, readings = {}, {}
    for name, photo in zip(players, photos, strict=True):
        if photo == "-":
            racks[name], readings[name] = [], None
            continue
        reading = read_rack(reader.read(photo), rules)
        readings[name] = reading
        from referee import Tile

        racks[name] = [Tile.from_code(c) for c in reading.detections.codes]
    try:
        result = score_round(racks, args.winner, rules)
    except ValueError as error:
        raise _error(str(error)) from None
    sheet = None
    if args.sheet is not None:
        try:
            sheet = (ScoreSheet.from_csv(args.sheet.read_text()) if args.sheet.exists()
                     and args.sheet.read_text().strip() else ScoreSheet(players))
            sheet.add_round(result)
        except (ValueError, OSError) as error:
            raise _error(f"--sheet {args.sheet}: {error}") from None
        try:
            _write_atomically(args.sheet, sheet.to_csv())
        except OSError as error:
            raise _error(f"--sheet {args.sheet}: cannot write the score sheet "
                         f"({error.strerror or error}); it is unchanged") from None
    if args.json:
        out = {
            "players": [
                {"name": name, "photo": photo if photo != "-" else None,
                 "tiles": readings[name].detections.to_json() if readings[name] else [],
                 "rack_total": result.rack_totals.get(name, 0), "score": result.scores[name],
                 "warnings": readings[name].warnings if readings[name] else []}
                for name, photo in zip(players, photos, strict=True)
            ],
            "winner": result.winner,
            "pool_empty": result.pool_empty,
        }
        if sheet is not None:
            out["sheet"] = str(args.sheet)
            out["totals"] = sheet.totals
            out["leader"] = sheet.leader
        _print_json(out)
        return 0
    print("round scores" + (f" (winner {result.winner})" if result.winner else " (no winner)"))
    for name in players:
        reading = readings[name]
        tiles = " ".join(reading.detections.codes) if reading else "(empty rack)"
        print(f"  {name:<10} {result.scores[name]:>+5}   rack {result.rack_totals.get(name, 0):>3}: "
              f"{tiles}")
        for warning in reading.warnings if reading else []:
            print(f"             warning: {warning}")
    if sheet is not None:
        print(f"score sheet {args.sheet}: totals after {len(sheet.rounds)} round(s)")
        for name, total in sheet.totals.items():
            print(f"  {name:<10} {total:>+5}")
        if sheet.leader:
            print(f"  leader: {sheet.leader}")
    return 0


# ----------------------------------------------------------------------------- start
def run_start(args: argparse.Namespace) -> int:
    from vision.rack import start_order

    players = _players(args.players)
    reader = _Reader(args.models)
    try:
        draw = start_order(reader.read(args.photo), players)
    except ValueError as error:
        raise _error(f"{args.photo}: {error}") from None
    if args.json:
        _print_json({"photo": args.photo, **draw.to_json()})
        return 0
    for name, code in zip(draw.players, draw.codes, strict=True):
        print(f"  {name:<10} drew {code}")
    if draw.starter:
        print(f"{draw.starter} starts")
    else:
        print(f"no one starts yet: {', '.join(draw.tied)} draw again")
    for warning in draw.warnings:
        print(f"  warning: {warning}")
    return 0

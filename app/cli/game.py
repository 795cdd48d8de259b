"""Subcommands that judge a game from photos: `turn`, `round`, `start` (and `score PHOTO`).

`score_photo(args)` is what `rummikub score` calls for a photo path: the tiles on a rack
photo and the rack's penalty. Every photo goes through the same `vision.recognition.pipeline`
objects as `scan`, with the models loaded once per command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.cli.common import (
    CommandError,
    add_json_option,
    add_models_option,
    add_rules_options,
    command_parser,
    rules_from_args,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this module's subcommands."""
    turn = command_parser(
        subparsers, "turn", photos=True,
        help="judge a turn from photos of the table before and after it",
        description="Match the tiles of the BEFORE and AFTER photos (by reading and by place, "
        "so two identical tiles do not confuse it) and run the referee's turn check: tiles "
        "played, tiles that left the table, a missing joker, the sets and their verdicts. "
        "Sets that were already invalid in BEFORE and that the player left as they were are "
        "named, not held against the player. Exit status 1 when the turn is not legal.",
    )
    turn.add_argument("before", metavar="BEFORE", help="photo of the table before the turn")
    turn.add_argument("after", metavar="AFTER", help="photo of the table after the turn")
    turn.add_argument("--first-meld", action="store_true",
                      help="this turn is the player's initial meld (30 points from the rack alone)")
    turn.add_argument("--rack", metavar="RACK_PHOTO",
                      help="photo of the player's rack before the turn (checks where tiles came from)")
    _common(turn)
    turn.set_defaults(func=run_turn)

    round_ = command_parser(
        subparsers, "round", photos=True,
        help="score the end of a round from rack photos",
        description="Read each player's rack photo and score the round (RULES.md section 8). "
        "Photos go to the players in order; the winner's rack may be left out (or given as "
        "'-'), being empty. Without --winner the pool ran out and the lowest rack wins. "
        "With --sheet the round is added to a score sheet file, locked while it is "
        "changed, so rounds recorded at the same moment all land.",
    )
    round_.add_argument("racks", nargs="+", metavar="RACK_PHOTO", help="rack photos, or - for empty")
    round_.add_argument("--players", required=True, help='player names, e.g. "Ann,Ben,Cas,Dee"')
    round_.add_argument("--winner", help="the player who laid their last tile")
    round_.add_argument("--sheet", type=Path, metavar="FILE",
                        help="append the scores to this score sheet (CSV) and print the totals")
    _common(round_)
    round_.set_defaults(func=run_round)

    start = command_parser(
        subparsers, "start", photos=True,
        help="who starts, from a photo of the tiles drawn at the start",
        description="Each player draws one tile, laid left to right in player order; the "
        "highest number starts, ties draw again (RULES.md section 3).",
    )
    start.add_argument("photo", metavar="PHOTO",
                       help="photo of the drawn tiles, one per player, laid left to right")
    start.add_argument("--players", required=True,
                       help='player names in the order of their tiles, left to right, e.g. '
                            '"Ann,Ben,Cas"')
    _common(start)
    start.set_defaults(func=run_start)


def _common(parser: argparse.ArgumentParser) -> None:
    add_rules_options(parser)
    add_json_option(parser)
    add_models_option(parser)
    parser.add_argument("--profile", metavar="PROFILE", type=Path, default=None,
                        help="calibration profile of your tiles (from `rummikub calibrate`)")


# ----------------------------------------------------------------------------- helpers
def _error(message: str):
    return CommandError(message)


def _rules(args: argparse.Namespace):
    return rules_from_args(args)


def _players(text: str) -> list[str]:
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise _error("--players: give names separated by commas, e.g. \"Ann,Ben\"")
    if len(set(names)) != len(names):
        raise _error("--players: every player needs a different name")
    return names


class _Reader:
    """Loads the models once (on first use) and reads photos into TileDetections."""

    def __init__(self, models_dir: Path | None, profile: Path | None = None):
        self.models_dir = models_dir
        self.profile = profile
        self._reader = None
        self.frame: tuple[int, int] | None = None  # the last photo's (width, height)
        self.picture = None  # the last photo small (160 px wide, BGR): what its places show
        self.photo = None  # the last photo (a `Photo`): a rack's tiles are cropped again
        self.cover = None  # the last photo's `vision.game.cover.Cover`
        self.stand = None  # the last rack photo's stand tiles, as its gates judged them

    def read(self, path: str, rack: bool = False):
        """A lone photo's tiles (`vision.game.cover.read_checked`): refused (too blurred,
        dark or overexposed, or a hand over its tiles) with its words, never judged; a
        `rack` photo is judged by the gate as a rack, its doubts kept in `self.cover`."""
        from vision.game.cover import read_gated
        from vision.recognition.decode import PhotoError, open_photo
        from vision.recognition.pipeline import ModelsMissing, TileReader

        if self._reader is None:
            try:
                self._reader = TileReader.load(self.models_dir)
            except ModelsMissing as error:
                raise _error(str(error)) from None
            from app.cli.calibrate import load_profile

            self._reader = load_profile(self._reader, self.profile)
        try:
            # checked now; decoded (only as far as the reading needs) by the reader
            photo = open_photo(path)
            self.frame = (photo.width, photo.height)
            detections, self.cover, self.stand = read_gated(self._reader, photo, rack)
            self.picture, self.photo = _small_picture(photo), photo
            return detections
        except PhotoError as error:
            message = str(error)
            raise _error(message if str(path) in message else f"{path}: {message}") from None

    def read_rack(self, path: str, rules):
        """A rack photo's reading (`vision.game.rack.read_rack` on the stand its gates
        judged, as `vision.game.cover.read_rack_photo`), its stand's tiles read again from
        the photo in boxes moved down to the face (`vision.game.back_tier`), the
        gate's doubt said among its warnings (`vision.game.cover.say_doubts`)."""
        from vision.game.cover import say_doubts
        from vision.game.rack import read_rack

        self.cover = self.stand = None
        detections = self.read(path, rack=True)
        # the stand its gates judged: the box rules are not run again
        return say_doubts(read_rack(detections, rules, frame=self.frame, photo=self.photo,
                                    reader=self._reader, stand=self.stand), self.cover)


def _small_picture(photo, width: int = 160):
    """The photo ~`width` px wide (decoded at a reduced size first): what `judge_turn`
    compares the tiles' places on."""
    import cv2

    from vision.recognition.decode import REDUCTIONS

    factor = max([f for f in REDUCTIONS if photo.width / f >= width] or [1])
    image = photo.reduced(factor)
    h, w = image.shape[:2]
    return cv2.resize(image, (width, max(1, round(h * width / w))), interpolation=cv2.INTER_AREA)


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
    """The layout of `scan --json`: one tile (or set) per line."""
    from app.cli.photos import to_json_text

    sys.stdout.write(to_json_text(obj) + "\n")


def _rack_lines(rack, indent: str = "  ") -> list[str]:
    """A rack's tiles row by row, as the player sees them; `?` marks a doubtful reading."""
    codes = rack.detections.codes
    return [f"{indent}row {number}: " + " ".join(codes[i] + ("?" if rack.detections.uncertain[i]
                                                              else "") for i in row)
            for number, row in enumerate(rack.rows, 1)]


# ----------------------------------------------------------------------------- turn
def run_turn(args: argparse.Namespace) -> int:
    from vision.game.turn import judge_turn

    rules = _rules(args)
    reader = _Reader(args.models, args.profile)
    before = reader.read(args.before)
    before_frame, before_picture = reader.frame, reader.picture
    after = reader.read(args.after)
    frames = (before_frame, reader.frame)
    pictures = (before_picture, reader.picture)
    rack = None
    if args.rack:
        on_rack = reader.read_rack(args.rack, rules)
        # the tiles standing on the rack only: those lying beside it are no one's
        rack = on_rack.detections[[i for row in on_rack.rows for i in row]]
    turn = judge_turn(before, after, rules=rules, rack=rack, first_meld=args.first_meld,
                      frames=frames, pictures=pictures)
    if args.json:
        _print_json({"before_photo": args.before, "after_photo": args.after, **turn.to_json()})
        return 0 if turn.verdict.legal else 1
    v = turn.verdict
    codes_a, codes_b = turn.after.detections.codes, turn.before.detections.codes
    print(f"turn {args.before} -> {args.after}: {'LEGAL' if v.legal else 'NOT LEGAL'}")
    for check in turn.check:
        print(f"  CHECK: {check}")
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
    for earlier in v.invalid_before:
        print(f"  not this player's: {earlier}")
    if not v.legal and v.draw:
        if v.played:
            print(f"  the table is restored and the player draws {v.draw}")
        else:
            print(f"  the player draws {v.draw}")
    for warning in turn.warnings + turn.after.warnings:
        print(f"  warning: {warning}")
    return 0 if v.legal else 1


# ----------------------------------------------------------------------------- score
def score_photo(args: argparse.Namespace) -> int:
    """`rummikub score PHOTO [--edition NAME] [--json] [--models DIR]`: a rack's penalty.

    Reads `args.photo` (or the first of `args.photos` / `args.tiles`), `args.edition`,
    `args.json` and `args.models` when present.
    """

    photo = getattr(args, "photo", None)
    for name in ("photos", "tiles"):
        value = getattr(args, name, None)
        if photo is None and value:
            photo = value[0] if isinstance(value, list | tuple) else value
    if photo is None:
        raise _error("score: give a rack photo")
    rules = _rules(args)
    reader = _Reader(getattr(args, "models", None), getattr(args, "profile", None))
    rack = reader.read_rack(str(photo), rules)
    if getattr(args, "json", False):
        _print_json({**rack.to_json(str(photo)), "edition": rules.name})
        return 0
    print(f"{photo}: {len(rack.codes)} tiles, penalty {rack.total}")
    for line in _rack_lines(rack):
        print(line)
    for warning in rack.warnings:
        print(f"  warning: {warning}")
    return 0


# ----------------------------------------------------------------------------- round
def run_round(args: argparse.Namespace) -> int:
    from referee import ScoreSheet, Tile, score_round

    rules = _rules(args)
    players = _players(args.players)
    if args.winner is not None and args.winner not in players:
        raise _error(f"--winner {args.winner!r} is not one of the players: {', '.join(players)}")
    photos = list(args.racks)
    if len(photos) == len(players) - 1 and args.winner is not None:
        photos.insert(players.index(args.winner), "-")
    if len(photos) != len(players):
        raise _error(f"{len(photos)} rack photo(s) for {len(players)} players; give one per "
                     f"player in order (the winner's may be left out or given as -)")
    reader = _Reader(args.models, args.profile)
    racks, readings = {}, {}
    for name, photo in zip(players, photos, strict=True):
        if photo == "-":
            racks[name], readings[name] = [], None
            continue
        reading = reader.read_rack(photo, rules)
        readings[name] = reading
        racks[name] = [Tile.from_code(c) for c in reading.codes]  # standing on the rack
    try:
        result = score_round(racks, args.winner, rules)
    except ValueError as error:
        raise _error(str(error)) from None
    sheet = None
    if args.sheet is not None:
        from app.cli.sheetfile import update_sheet

        def add_round(old: ScoreSheet | None) -> ScoreSheet:
            new = old or ScoreSheet(players)
            new.add_round(result)
            return new

        try:
            sheet = update_sheet(args.sheet, add_round)
        except ValueError as error:
            raise _error(f"--sheet {args.sheet}: {error}") from None
        except OSError as error:
            raise _error(f"--sheet {args.sheet}: cannot write the score sheet "
                         f"({error.strerror or error}); it is unchanged") from None
    if args.json:
        out = {
            "players": [
                {"name": name, "photo": photo if photo != "-" else None,
                 "tiles": readings[name].detections.to_json() if readings[name] else [],
                 "rows": readings[name].to_json()["rows"] if readings[name] else [],
                 "off_rack": list(readings[name].off_rack) if readings[name] else [],
                 "total": result.rack_totals.get(name, 0), "score": result.scores[name],
                 "warnings": readings[name].warnings if readings[name] else []}
                for name, photo in zip(players, photos, strict=True)
            ],
            "winner": result.winner,
            "pool_empty": result.pool_empty,
            "edition": rules.name,
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
        rack = f"rack {result.rack_totals.get(name, 0):>3}"
        print(f"  {name:<10} {result.scores[name]:>+5}   "
              + (f"{rack}:" if reading and reading.rows else f"{rack}: (empty rack)"))
        for line in _rack_lines(reading, " " * 15) if reading else []:
            print(line)
        for warning in reading.warnings if reading else []:
            print(f"{' ' * 15}warning: {warning}")
    if sheet is not None:
        print(f"score sheet {args.sheet}: totals after {len(sheet.rounds)} round(s)")
        for name, total in sheet.totals.items():
            print(f"  {name:<10} {total:>+5}")
        if sheet.leader:
            print(f"  leader: {sheet.leader}")
    return 0


# ----------------------------------------------------------------------------- start
def run_start(args: argparse.Namespace) -> int:
    from vision.game.rack import start_order

    _rules(args)  # the draw needs no rules, but a bad --edition or --set is still said
    players = _players(args.players)
    reader = _Reader(args.models, args.profile)
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

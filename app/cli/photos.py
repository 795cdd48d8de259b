"""Subcommands that read photos: `rummikub scan PHOTO [PHOTO ...]`.

The models are loaded once and every photo goes through the same `vision.recognition.pipeline`
objects the app uses. With `--json` stdout holds exactly one JSON array, one object per
photo in the order given; a photo that cannot be read gets a one-line error on stderr
(and an object with an `error` field in the array), the other photos are still read, and
the exit status is 2. Otherwise it is 1 when any photo's table is not valid, else 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this module's subcommands."""
    from app.cli.common import (
        add_json_option,
        add_models_option,
        add_rules_options,
        command_parser,
    )

    parser = command_parser(
        subparsers, "scan", photos=True,
        help="read every tile in photos (and judge the sets on the table)",
        description="Read every tile in each photo: colour, number or joker, and its corners; "
        "group the tiles into sets and judge them with the edition's rules. Exit status 1 "
        "when a photo's table is not valid.",
    )
    parser.add_argument("photos", nargs="+", metavar="PHOTO", help="photo files (JPEG, PNG, ...)")
    add_json_option(parser, "print one JSON array to stdout, one object per photo")
    parser.add_argument("--annotate", metavar="OUT_DIR", type=Path,
                        help="write an annotated copy of each photo into OUT_DIR")
    add_rules_options(parser)
    add_models_option(parser)
    parser.add_argument("--profile", metavar="PROFILE", type=Path, default=None,
                        help="calibration profile of your tiles (from `rummikub calibrate`)")
    parser.set_defaults(func=run_scan)


def _unique_path(out_dir: Path, stem: str, used: set[str]) -> Path:
    name, n = f"{stem}.jpg", 1
    while name in used:
        n += 1
        name = f"{stem}-{n}.jpg"
    used.add(name)
    return out_dir / name


def scan_photo(reader, path: str, *, rules, annotator=None,
               annotate_to: Path | None = None) -> dict:
    """Read one photo -> the scan JSON object. Raises vision.recognition.decode.PhotoError
    (a photo too blurred, dark or overexposed to read is one: PhotoUnfit; one with a
    hand over its tiles another: PhotoCovered)."""
    from vision.game.cover import read_lone_photo
    from vision.game.table import judge_table
    from vision.recognition.decode import open_photo

    photo = open_photo(path)  # checked now; decoded only as far as the reading needs
    detections = read_lone_photo(reader, photo)  # PhotoUnfit, PhotoCovered: never judged
    table = judge_table(detections, rules, frame=(photo.width, photo.height))
    detections = table.detections  # the rules may have re-read a tile
    result: dict = {
        "photo": str(path),
        "width": int(photo.width),
        "height": int(photo.height),
        "tiles": detections.to_json(),
    }
    result.update(table.to_json())
    # The table logic reports uncertain tiles itself, after its re-reading.
    result["warnings"] = ([] if len(detections) else ["no tiles found"]) + list(table.warnings)
    if annotator is not None and annotate_to is not None:
        import cv2

        picture = annotator.annotate(photo.image(), detections, table)
        if not cv2.imwrite(str(annotate_to), picture, [cv2.IMWRITE_JPEG_QUALITY, 90]):
            raise OSError(f"cannot write {annotate_to}")
        result["annotated"] = str(annotate_to)
    return result


_SCALARS = frozenset((str, int, float, bool, type(None)))
# One encoder for every line: json.dumps(..., ensure_ascii=False) builds a new one per call.
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode


def _flat(value) -> bool:
    """Scalars, and lists/dicts holding only flat things without dicts inside lists of
    dicts: written on one line. (Scalars are passed over without a call: a scan's tiles
    hold ~50 numbers each.)"""
    if isinstance(value, list):
        for v in value:
            if type(v) in _SCALARS:
                continue
            if isinstance(v, dict) or not _flat(v):
                return False
        return True
    if isinstance(value, dict):
        return all(type(v) in _SCALARS or _flat(v) for v in value.values())
    return True


def to_json_text(value, indent: int = 0) -> str:
    """JSON with one tile (or one set) per line: readable and still short."""
    pad, inner = " " * indent, " " * (indent + 1)
    # the cheap test first: _flat walks the whole value, and a photo's object is never flat
    if not (isinstance(value, dict) and indent == 1) and _flat(value):
        return _ENCODE(value)
    if isinstance(value, list):
        items = [inner + to_json_text(v, indent + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]" if items else "[]"
    items = [f"{inner}{json.dumps(k)}: {to_json_text(v, indent + 1)}" for k, v in value.items()]
    return "{\n" + ",\n".join(items) + "\n" + pad + "}" if items else "{}"


def _summary(result: dict) -> str:
    """A readable block for one photo."""
    from vision.recognition.labels import code_from_json

    if "error" in result:
        return f"{result['photo']}: ERROR {result['error']}"
    tiles = result["tiles"]
    codes = {t["id"]: code_from_json(t) for t in tiles}
    lines = [f"{result['photo']} ({result['width']}x{result['height']}): {len(tiles)} tiles"]
    for number, item in enumerate(result["sets"], 1):
        text = " ".join(codes[i] for i in item["tiles"])
        if item["valid"]:
            status = f"ok ({item['kind']} {item['value']})"
        else:
            status = "INVALID: " + "; ".join(item["reasons"])
        lines.append(f"  set {number}: {text}  {status}")
    if result["loose"]:
        lines.append("  loose: " + " ".join(codes[i] for i in result["loose"]))
    lines.append(f"  table valid: {'yes' if result['table_valid'] else 'no'}")
    if result.get("suggestion"):
        lines.append("  suggestion: " + " | ".join(" ".join(s) for s in result["suggestion"]))
    for warning in result.get("warnings", []):
        lines.append(f"  warning: {warning}")
    if result.get("annotated"):
        lines.append(f"  annotated: {result['annotated']}")
    return "\n".join(lines)


def run_scan(args: argparse.Namespace) -> int:
    from app.cli.common import CommandError, rules_from_args
    from vision.recognition.decode import PhotoError
    from vision.recognition.pipeline import ModelsMissing, TileReader

    rules = rules_from_args(args)
    try:
        reader = TileReader.load(args.models)
    except ModelsMissing as error:
        raise CommandError(str(error)) from None
    from app.cli.calibrate import load_profile

    reader = load_profile(reader, args.profile)
    annotator = None
    if args.annotate is not None:
        from vision.recognition.annotate import TableAnnotator

        try:
            args.annotate.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CommandError(f"cannot create {args.annotate}: {error.strerror}") from None
        annotator = TableAnnotator()
    used: set[str] = set()
    results, status = [], 0
    for photo in args.photos:
        target = _unique_path(args.annotate, Path(photo).stem, used) if annotator else None
        try:
            result = scan_photo(reader, photo, rules=rules, annotator=annotator,
                                annotate_to=target)
        except PhotoError as error:
            message = str(error)
            if photo not in message:
                message = f"{photo}: {message}"
            print(f"rummikub scan: {message}", file=sys.stderr)
            result = {"photo": photo, "error": str(error), "tiles": [], "warnings": []}
            status = 2
        except OSError as error:
            print(f"rummikub scan: {photo}: {error}", file=sys.stderr)
            result = {"photo": photo, "error": str(error), "tiles": [], "warnings": []}
            status = 2
        results.append(result)
        if "error" not in result:
            status = max(status, 0 if result["table_valid"] else 1)
            if not args.json:
                print(_summary(result), flush=True)
    if args.json:
        sys.stdout.write(to_json_text(results) + "\n")
    return status

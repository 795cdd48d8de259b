"""`rummikub calibrate PHOTO [--layout NAME|FILE] --out PROFILE`: learn a table's own tiles.

The player lays their tiles as the layout says (built in: `rows`, one colour per row 1 to
13 and a row of jokers; or a text file with the photo's true tiles row by row) and takes
one photo. The profile written holds that edition's colour slots (green too), white
balance and tile prototypes; `scan`, `turn`, `score`, `round` and `serve` read through it
with `--profile PROFILE`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    from app.cli.common import add_json_option, add_models_option, command_parser

    parser = command_parser(
        subparsers, "calibrate",
        help="learn your own tiles' edition from one photo of them laid out",
        description="Lay your tiles as the layout says and photograph them from above: "
        "layout 'rows' is four rows, one colour each in any order, 1 to 13 left to right, "
        "and a fifth row with the jokers. Or give --layout FILE, a text file with the "
        "photo's tiles row by row (e.g. 'K1 K2 K3' per line). Writes a profile that "
        "--profile on scan, turn, score, round, start and serve reads through.",
        photos=True,
    )
    parser.add_argument("photo", metavar="PHOTO", help="photo of the laid-out tiles")
    parser.add_argument("--layout", default="rows", metavar="NAME|FILE",
                        help="built-in layout name (rows) or a layout text file (default: rows)")
    parser.add_argument("--out", required=True, type=Path, metavar="PROFILE",
                        help="where to write the profile (JSON)")
    parser.add_argument("--name", default=None, metavar="EDITION",
                        help="a name for these tiles (default: their colours)")
    add_json_option(parser, "print what was learned as JSON")
    add_models_option(parser)
    parser.set_defaults(func=run_calibrate)


def load_profile(reader, path: Path | None):
    """`reader` reading through the profile at `path` (None: unchanged); a bad profile is a
    CommandError naming --profile."""
    if path is None:
        return reader
    from app.cli import CommandError
    from calibration import Profile, ProfileError

    try:
        return reader.with_profile(Profile.from_file(path), str(path))
    except ProfileError as error:
        raise CommandError(f"--profile: {error}") from None


def _sureness(stats: dict) -> str:
    checked = stats["prototype_numbers_checked"]
    numbers_ok = stats["prototype_numbers_right"] >= checked - 1
    colours_ok = stats["colours_right"] == stats["colour_tiles"]
    apart = (stats.get("closest_colours_ab") or 0) >= 10
    if numbers_ok and colours_ok and apart:
        return "sure"
    if stats["prototype_numbers_right"] >= 0.9 * checked and colours_ok:
        return "fairly sure"
    return "unsure: take the photo again from straight above, in even light"


def run_calibrate(args: argparse.Namespace) -> int:
    from app.cli import CommandError
    from calibration import CalibrationError, Layout, LayoutError, calibrate
    from vision.recognition.decode import PhotoError, open_photo
    from vision.recognition.pipeline import ModelsMissing, TileReader

    try:
        layout = Layout.resolve(args.layout)
    except LayoutError as error:
        raise CommandError(f"--layout: {error}") from None
    if not args.out.parent.is_dir():
        raise CommandError(f"--out {args.out}: no folder {args.out.parent}")
    try:
        reader = TileReader.load(args.models)
    except ModelsMissing as error:
        raise CommandError(str(error)) from None
    try:
        image = open_photo(args.photo)  # checked now, decoded only as far as needed
    except PhotoError as error:
        message = str(error)
        raise CommandError(message if args.photo in message else f"{args.photo}: {message}") from None
    try:
        profile = calibrate(image, layout, reader, edition=args.name)
    except CalibrationError as error:
        raise CommandError(f"{args.photo} does not match layout {layout.name}: {error}") from None
    except PhotoError as error:  # header fine, image data found corrupt when decoded
        raise CommandError(f"{args.photo}: {error}") from None
    try:
        profile.save(args.out)
    except OSError as error:
        raise CommandError(f"--out {args.out}: cannot write ({error.strerror or error})") from None
    stats = profile.stats
    if args.json:
        out = {"photo": args.photo, "profile": str(args.out), "edition": profile.edition,
               "slots": [s.to_json() for s in profile.slots], "stats": stats,
               "sureness": _sureness(stats)}
        from app.cli.photos import to_json_text  # the layout every command's JSON has

        sys.stdout.write(to_json_text(out) + "\n")
        return 0
    rows = stats.get("rows", [])
    words = {s.slot: s.word for s in profile.slots}
    print(f"{args.photo}: {stats['tiles']} tiles in {len(rows)} rows (layout {layout.name}), "
          f"{stats['seconds']:.2f} s")
    print("  rows: " + ", ".join(f"{i + 1} {'jokers' if r == 'J' else words.get(r, r)}"
                                 for i, r in enumerate(rows)))
    print(f"  edition: {profile.edition} (colour slots {' '.join(profile.slot_letters)})")
    for s in profile.slots:
        print(f"    {s.word:<7} ink Lab {s.lab[0]:5.1f} {s.lab[1]:6.1f} {s.lab[2]:6.1f} "
              f"(spread {max(s.spread):.1f}, {s.tiles} tiles)")
    gains = stats.get("white_balance", [])
    print("  white balance gains (B G R): " + " ".join(f"{g:.2f}" for g in gains))
    print(f"  the network alone reads {stats['network_read_right']}/{stats['tiles']} of these "
          f"tiles right ({stats['network_numbers_right']} numbers)")
    margin = stats.get("prototype_margin_median")
    checked = stats["prototype_numbers_checked"]
    print(f"  number shapes: {stats['prototype_numbers_right']}/{checked} tiles nearest "
          f"to their own number in another colour"
          + (f" (median margin {margin})" if margin is not None else ""))
    print(f"  colours: {stats['colours_right']}/{stats['colour_tiles']} inks nearest their own "
          f"colour; closest two colours {stats.get('closest_colours_ab')} apart (Lab a*b*)")
    print(f"  how sure: {_sureness(stats)}")
    print(f"  profile written to {args.out} (for classifier {profile.model_sha256[:12]})")
    return 0

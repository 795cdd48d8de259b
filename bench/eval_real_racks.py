"""Every real photo of tiles standing on a stand, read as `rummikub score` reads it (`make eval`).

    RUMMIKUB_DATA=... python -m bench.eval_real_racks [--as-taken] [--models DIR] [--json OUT]

The dataset's only photos of a stand: a black two-tier rack on a white table, seen from
the front and a little above (`RACK_PHOTOS`: 19 in train/, 5 in valid/). Every tile
labelled there stands on the rack, so a tile the rack reading names off the rack
("... lie off the rack: not counted") is a stand tile lost, and the rack's total is the
penalty of every label. The reading models were trained on the train/ ones, so how they
read numbers there is not held out; which tiles count as the rack (`vision.game.stand`,
`vision.game.footing`) was never tuned on them. Not issue #19's stands (a beam with a
logo, the white edition, tiles lying by): the nearest real thing there is.

Then (unless `--as-taken`) each photo again as a phone might have taken it otherwise
(`VARIANTS`: upright, turned, tilted, brighter and darker, smaller, a harder JPEG, a
little blur; and as an iPhone saves it, HEIC), encoded and read from its bytes: the same
stand, so the same total.
And each with a hand of each of `bench.hands`' six kinds painted over a tile of the rack
(fixed seeds, `HAND_SEEDS`; hands covering under `bench.eval_cover.OVER` of a tile left
out): refused, read with a doubt said beside the total (a hand? no tile found on the
rack?), or read silently, and whether that total is still the rack's.
"""

from __future__ import annotations

import sys

import cv2
import numpy as np

# train/ and valid/ keys of the photos of the black rack (every other photo of the set is
# a table, a scatter or a close-up of tiles lying flat)
RACK_PHOTOS = {
    "train": tuple(f"rummy3-{n}" for n in (2, 3, 4, 5, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 20))
    + ("rummy4-86", "rummy4-88", "rummy4-89", "rummy4-90"),
    "valid": ("rummy3-7", "rummy3-10", "rummy4-87", "rummy4-92", "rummy4-93"),
}


def _jpeg(image: np.ndarray, quality: int = 92) -> bytes:
    return cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])[1].tobytes()


def _tilted(degrees: float):
    def tilt(image: np.ndarray) -> bytes:
        h, w = image.shape[:2]
        m = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
        return _jpeg(cv2.warpAffine(image, m, (w, h), borderMode=cv2.BORDER_REPLICATE))
    return tilt


def _lit(gain: float):
    return lambda image: _jpeg(np.clip(image.astype(np.float32) * gain, 0, 255).astype(np.uint8))


def _sized(share: float):
    return lambda image: _jpeg(cv2.resize(image, None, fx=share, fy=share,
                                          interpolation=cv2.INTER_AREA))


def _heic(image: np.ndarray) -> bytes:
    """The photo as an iPhone saves it by default: HEIC (HEVC at quality 90, pillow-heif's
    encoder), read through `vision.recognition.heif`."""
    import io

    import pillow_heif

    h, w = image.shape[:2]
    out = io.BytesIO()
    pillow_heif.from_bytes(mode="BGR", size=(w, h), data=np.ascontiguousarray(image).tobytes()
                           ).save(out, quality=90, format="HEIF")
    return out.getvalue()


HAND_SEEDS = 77_000

# name -> the photo (BGR) as JPEG bytes taken so
VARIANTS = {
    "upright (turned 90)": lambda image: _jpeg(cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE)),
    "upright (turned 270)": lambda image: _jpeg(cv2.rotate(image, cv2.ROTATE_90_COUNTERCLOCKWISE)),
    "tilted 4 deg": _tilted(4), "tilted 8 deg": _tilted(8), "tilted -8 deg": _tilted(-8),
    "tilted 15 deg": _tilted(15), "tilted -15 deg": _tilted(-15),
    "light x0.5": _lit(0.5), "light x0.7": _lit(0.7), "light x1.15": _lit(1.15),
    "light x1.3": _lit(1.3),
    "0.7 size": _sized(0.7), "half size": _sized(0.5),
    "16 MP": lambda image: _jpeg(cv2.resize(image, (4624, 3468), interpolation=cv2.INTER_CUBIC)),
    "JPEG 60": lambda image: _jpeg(image, 60),
    "blur sigma 1": lambda image: _jpeg(cv2.GaussianBlur(image, (0, 0), 1.0)),
    "HEIC": _heic,
}


def evaluate(models_dir=None, log=print, variants: bool = True) -> dict:
    from referee import DEFAULT_RULES, Tile, rack_penalty
    from training.real_data import load_split
    from vision.recognition.pipeline import TileReader

    reader = TileReader.load(models_dir)
    rows, hands = [], []
    for split, keys in RACK_PHOTOS.items():
        photos = {p.key: p for p in load_split(split)}
        missing = [k for k in keys if k not in photos]
        if missing:
            raise SystemExit(f"eval_real_racks: {split}/ lacks {', '.join(missing)}: "
                             "not the dataset this bench was written for")
        for key in keys:
            photo = photos[key]
            labels = [(t.code, t.polygon) for t in photo.tiles]
            want = rack_penalty([Tile.from_code(c) for c, _q in labels], DEFAULT_RULES)
            # the file's own bytes, as `rummikub score` and the server read them
            taken = [("as taken", photo.path.read_bytes(), labels)]
            if variants:
                image = photo.read()
                taken += [(name, change(image), None) for name, change in VARIANTS.items()]
            for variant, data, variant_labels in taken:
                rows.append(_read(reader, split, key, variant, data, variant_labels, len(labels),
                                  want, log))
            if variants:
                hands += _hands(reader, split, keys.index(key), key, photo.read(), want, log)
    return {"rows": rows, "hands": hands}


def _hands(reader, split, n, key, image, want, log) -> list[dict]:
    """A hand of each kind painted over a tile of the photo, each read as a rack photo."""
    from bench.eval_cover import OVER, covered_share, tile_height
    from bench.hands import KINDS, paint
    from referee import DEFAULT_RULES
    from vision.game.cover import DOUBT_WORDS, read_rack_photo
    from vision.game.rack import EMPTY_WORDS
    from vision.recognition.decode import Photo, PhotoError

    det = reader.read(image)
    rows = []
    for kind in KINDS:
        rng = np.random.default_rng(HAND_SEEDS + 10 * n + KINDS.index(kind)
                                    + (5000 if split == "valid" else 0))
        tile = det.corners[int(rng.integers(len(det)))]
        hand = paint(image, tile, tile_height(det), kind, rng, det.corners)
        if covered_share(image.shape, det.corners, hand.mask) < OVER:
            continue
        row = {"key": key, "split": split, "kind": kind}
        try:
            rack = read_rack_photo(reader, Photo.from_bytes(_jpeg(hand.image)), DEFAULT_RULES)
        except PhotoError:
            rows.append({**row, "read": "refused", "total_right": None})
            continue
        # told to look again: the doubt about a hand, or no tile found on the rack
        said = DOUBT_WORDS in rack.warnings or EMPTY_WORDS in rack.warnings
        rows.append({**row, "read": "doubt" if said else "silent",
                     "total_right": rack.total == want})
        if not said and rack.total != want:
            log(f"  {split}/{key} {kind} hand: read silently, total {rack.total} (labels {want})")
    return rows


def _read(reader, split, key, variant, data, labels, tiles, want, log) -> dict:
    """One photo's row: read from `data` as `rummikub score` reads it; tiles counted, named
    off and (where `labels` are given, the photo as taken) read right."""
    from bench.eval_vision import match_centres
    from referee import DEFAULT_RULES
    from vision.game.cover import read_rack_photo
    from vision.recognition.decode import Photo, PhotoError

    row = {"key": key, "split": split, "variant": variant, "tiles": tiles,
           "total_wanted": want}
    try:
        rack = read_rack_photo(reader, Photo.from_bytes(data), DEFAULT_RULES)
    except PhotoError as error:
        log(f"  {split}/{key} {variant}: refused: {error}")
        return {**row, "refused": str(error), "counted": 0, "right": None, "named_off": None,
                "total": None}
    d = rack.detections
    counted = sorted({i for r in rack.rows for i in r})
    row.update(refused=None, counted=len(counted), total=rack.total, right=None,
               named_off=len(rack.off_rack))
    if labels is not None:  # every labelled tile stands: a tile named off on one is lost
        pairs = match_centres(d.centers[counted], [q for _c, q in labels],
                              np.argsort(-d.detector_scores[counted])) if counted else []
        row["right"] = int(sum(d.codes[counted[a]] == labels[k][0] for a, k in pairs))
        named = list(rack.off_rack)
        row["named_off"] = len(match_centres(d.centers[named], [q for _c, q in labels])
                               if named else [])
    if rack.total != want or row["named_off"] or (row["right"] is not None
                                                  and row["right"] < tiles):
        log(f"  {split}/{key} {variant}: total {rack.total} (labels {want}), "
            f"{row['named_off']} named off; " + "; ".join(rack.warnings))
    return row


def report(results: dict) -> str:
    rows = results["rows"]
    taken = [r for r in rows if r["variant"] == "as taken"]
    lines = ["real photos of a black two-tier rack (train/ and valid/ of the dataset), read "
             "as `rummikub score` reads them:"]
    for split in RACK_PHOTOS:
        part = [r for r in taken if r["split"] == split]
        lines.append(
            f"  {split:5s}  {len(part):2d} photos {sum(r['tiles'] for r in part):4d} tiles: "
            f"counted {sum(r['counted'] for r in part)}, read right "
            f"{sum(r['right'] or 0 for r in part)}, stand tiles named off "
            f"{sum(r['named_off'] or 0 for r in part)}, totals right "
            f"{sum(r['total'] == r['total_wanted'] for r in part)} of {len(part)}, refused "
            f"{sum(bool(r['refused']) for r in part)}")
    others = [r for r in rows if r["variant"] != "as taken"]
    if others:
        lines.append("  the same photos taken otherwise (JPEG 92 unless said): totals right, "
                     "tiles named off (a stand tile or a false find), refused")
        for variant in dict.fromkeys(r["variant"] for r in others):
            part = [r for r in others if r["variant"] == variant]
            lines.append(f"    {variant:22s} {sum(r['total'] == r['total_wanted'] for r in part):2d}"
                         f" of {len(part)}, {sum(r['named_off'] or 0 for r in part)}, "
                         f"{sum(bool(r['refused']) for r in part)}")
        lines.append(f"    {'all':22s} {sum(r['total'] == r['total_wanted'] for r in others)} "
                     f"of {len(others)}, {sum(r['named_off'] or 0 for r in others)}, "
                     f"{sum(bool(r['refused']) for r in others)}")
    hands = results.get("hands") or []
    if hands:
        refused = sum(r["read"] == "refused" for r in hands)
        doubt = [r for r in hands if r["read"] == "doubt"]
        silent = [r for r in hands if r["read"] == "silent"]
        lines.append(f"  a hand painted over the rack ({len(hands)} of {6 * len(taken)} over a "
                     f"tile): refused {refused}, read with a doubt said {len(doubt)} (total "
                     f"right {sum(r['total_right'] for r in doubt)}), read silently "
                     f"{len(silent)} (total right {sum(r['total_right'] for r in silent)}, "
                     f"wrong {sum(not r['total_right'] for r in silent)})")
    results["summary"] = {
        "photos": len(taken), "tiles": sum(r["tiles"] for r in taken),
        "named_off": sum(r["named_off"] or 0 for r in taken),
        "totals_right": sum(r["total"] == r["total_wanted"] for r in taken),
        "refused": sum(bool(r["refused"]) for r in taken),
        "variants_totals_right": sum(r["total"] == r["total_wanted"] for r in others),
        "variants": len(others),
        "hands": len(hands),
        "hands_silent_wrong": sum(r["read"] == "silent" and not r["total_right"] for r in hands)}
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from bench import model_eval_parser, run_models_eval

    parser = model_eval_parser("python -m bench.eval_real_racks", __doc__)
    parser.add_argument("--as-taken", action="store_true",
                        help="the photos as taken only, not the variants (4 s, not 2 min)")
    args = parser.parse_args(argv)

    def evaluate_and_report() -> dict:
        results = evaluate(args.models, variants=not args.as_taken)
        print(report(results))
        return results

    return run_models_eval("eval_real_racks", evaluate_and_report, args.json)


if __name__ == "__main__":
    sys.exit(main())

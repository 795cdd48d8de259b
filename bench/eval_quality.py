"""How blurred, dark or overexposed a photo may be before its reading goes wrong (`make eval`).

    RUMMIKUB_DATA=... python -m bench.eval_quality [--renders 24] [--models DIR] [--json OUT]

Each held-out real `valid/` photo is blurred (Gaussian, several sigmas; motion blur,
several lengths and angles), darkened (with a camera's noise) or overexposed, and read.
A reading "goes wrong" when it reads fewer tiles right, or finds more extra things, than
the same photo as taken. For every strength: the photos (with tiles) whose reading went
wrong, the tiles read right, and the gate's measures (`vision.recognition.quality`: the
tiles' ink edge width in crop pixels, their body grey, their burnt share) with how many
photos the gate refuses. The gate is set just before the first wrong readings
(docs/decisions/quality-gate.md).

The cream photos' faces are far from white; a white edition's are near it, and a phone
metering on a black stand burns them. So overexposure is swept a second time over
`--renders` rendered photos (`training.render3d`, seeds 530,000+, held out from the 520,000+
the gate was tuned on): stands of 1-3 tiers, close-ups and low tables, two in three in the
white "Original" look, the rest in the held-out editions. A rendered tile is read right as
in `bench.eval_depth` (its number shows; its visible quad is its label).
"""

from __future__ import annotations

import sys

import cv2
import numpy as np

from bench import model_eval_parser, run_models_eval
from bench.eval_plane_view import count_tiles


def gaussian(sigma: float):
    def blur(image):
        return cv2.GaussianBlur(image, (0, 0), sigma)

    return blur


def motion(length: int, angle_deg: float):
    """A straight shake of `length` pixels at `angle_deg` (a line kernel)."""

    def blur(image):
        kernel = np.zeros((length, length), np.float32)
        kernel[length // 2, :] = 1.0
        turn = cv2.getRotationMatrix2D(((length - 1) / 2, (length - 1) / 2), angle_deg, 1.0)
        kernel = cv2.warpAffine(kernel, turn, (length, length))
        return cv2.filter2D(image, -1, kernel / kernel.sum())

    return blur


def exposure(gain: float, noise: float = 0.0, seed: int = 0):
    """Light times `gain`, clipped as a sensor clips, with `noise` grey levels of a
    camera's noise (a fixed seed: every run the same)."""

    def expose(image):
        out = image.astype(np.float32) * gain
        if noise:
            rng = np.random.default_rng(seed)
            out += rng.normal(0, noise, out.shape).astype(np.float32)
        return np.clip(out, 0, 255).astype(np.uint8)

    return expose


RENDER_SEEDS = 530_000
RENDER_KINDS = ("rack", "closeup", "rack", "low")
RENDER_GAINS = (1.15, 1.3, 1.6, 1.8, 2.0, 2.5, 3.0)

CONDITIONS = (
    [("gaussian", f"sigma {s}", gaussian(s)) for s in (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0)]
    + [("motion", f"{n} px at {a} deg", motion(n, a))
       for a in (0, 45, 90) for n in (3, 5, 7, 9, 13, 19, 27)]
    + [("dark", f"x{g}", exposure(g, noise=2.0)) for g in (0.6, 0.4, 0.3, 0.2, 0.15, 0.1, 0.06)]
    + [("overexposed", f"x{g}", exposure(g)) for g in (1.15, 1.3, 1.6, 1.8, 2.0, 2.5, 3.0)]
)


def rendered_photos(count: int) -> list:
    """`count` rendered photos as (key, image, labels [(code, visible quad)])."""
    from training.editions import HELD_OUT
    from training.render3d.scene import original_edition, render_depth_scene

    held_out = list(HELD_OUT.values())
    out = []
    for i in range(count):
        rng = np.random.default_rng(RENDER_SEEDS + i)
        edition = original_edition(rng) if i % 3 else held_out[(i // 3) % len(held_out)]
        scene = render_depth_scene(rng, edition, kind=RENDER_KINDS[i % len(RENDER_KINDS)])
        out.append((f"render-{RENDER_SEEDS + i}", scene.image, scene.labels))
    return out


def evaluate(models_dir=None, renders: int = 24, log=print) -> dict:
    from training.real_data import load_split
    from vision.recognition import quality
    from vision.recognition.pipeline import TileReader

    reader = TileReader.load(models_dir)
    photos = [(p, p.read()) for p in load_split("valid")]
    clean = {}
    rows = []
    for photo, image in [(p, i) for p, i in photos]:
        det = reader.read(image)
        labels = [(t.code, t.polygon) for t in photo.tiles]
        clean[photo.key] = count_tiles(det, labels)
        q = quality.measure(image, det.corners)
        rows.append(_row("clean", "as taken", photo, clean[photo.key], clean[photo.key], q))
    log(_summary_line("clean", "as taken", rows))
    for kind, strength, change in CONDITIONS:
        part = []
        for photo, image in photos:
            changed = change(image)
            det = reader.read(changed)
            counts = count_tiles(det, [(t.code, t.polygon) for t in photo.tiles])
            q = quality.measure(changed, det.corners)
            part.append(_row(kind, strength, photo, clean[photo.key], counts, q))
        rows += part
        log(_summary_line(kind, strength, part))
    summary = first_wrong(rows)
    for line in _first_wrong_lines(summary):
        log(line)
    rendered = _rendered_sweep(reader, renders, log) if renders else []
    return {"rows": rows, "rendered": rendered, "thresholds": {
        "max_edge_width": quality.MAX_EDGE_WIDTH,
        "max_spread_width": quality.MAX_SPREAD_WIDTH, "min_body_grey": quality.MIN_BODY_GREY,
        "max_burnt_share": quality.MAX_BURNT_SHARE, "min_ink_contrast": quality.MIN_INK_CONTRAST,
        "max_ring_burnt": quality.MAX_RING_BURNT, "min_photo_grey": quality.MIN_PHOTO_GREY,
        "max_photo_burnt": quality.MAX_PHOTO_BURNT}, "first_wrong": summary}


def _rendered_sweep(reader, count: int, log) -> list[dict]:
    """The overexposure sweep over `count` rendered photos (rows as `_row`'s)."""
    from vision.recognition import quality

    log(f"  rendered stands and low tables ({count}, seeds {RENDER_SEEDS:,}+), "
        "two in three in the white Original look, brightened:")
    photos = rendered_photos(count)
    steps = [("clean", "as rendered", None)] + [
        ("overexposed", f"x{g}", exposure(g)) for g in RENDER_GAINS]
    clean, rows = {}, []
    for kind, strength, change in steps:
        part = []
        for key, image, labels in photos:
            changed = image if change is None else change(image)
            det = reader.read(changed)
            counts = count_tiles(det, labels)
            clean.setdefault(key, counts)
            part.append(_row(kind, strength, key, clean[key], counts,
                             quality.measure(changed, det.corners)))
        rows += part
        log(_summary_line(kind, strength, part))
    return rows


def _row(kind, strength, photo, clean_counts, counts, q) -> dict:
    tiles, found, right, extra = counts
    wrong = right < clean_counts[2] or extra > clean_counts[3]
    measures = q.to_json()
    measures["finds"] = measures.pop("tiles")  # the gate's count: tiles it measured on
    key = photo if isinstance(photo, str) else photo.key
    return {"kind": kind, "strength": strength, "photo": key, "tiles": tiles,
            "found": found, "right": right, "extra": extra, "wrong": bool(wrong),
            "lost": max(int(clean_counts[2] - right), 0),
            **measures}


def first_wrong(rows: list[dict]) -> dict:
    """Per measure, over the changes it judges (blur, darkness, overexposure) and the
    photos with tiles: each photo's least severe value at which its reading went wrong
    (sorted), and the most severe value of a reading still right."""
    out = {}
    for name, kinds, worse in (("edge_width", ("gaussian", "motion"), max),
                               ("spread_width", ("gaussian", "motion"), max),
                               ("body_grey", ("dark",), min),
                               ("burnt_share", ("overexposed",), max),
                               ("ink_contrast", ("overexposed",), min),
                               ("ring_burnt", ("overexposed",), max)):
        judged = [r for r in rows if r["kind"] in kinds and r["tiles"] and r[name] is not None]
        best = min if worse is max else max
        per_photo = {}
        for r in judged:
            if r["wrong"]:
                per_photo[r["photo"]] = best(per_photo.get(r["photo"], r[name]), r[name])
        fine = [r[name] for r in judged if not r["wrong"]]
        clean = [r[name] for r in rows if r["kind"] == "clean" and r[name] is not None]
        out[name] = {"first_wrong_per_photo": sorted(per_photo.values(),
                                                     reverse=worse is min),
                     "worst_still_right": worse(fine) if fine else None,
                     "clean": [min(clean), max(clean)] if clean else None}
    return out


def _summary_line(kind: str, strength: str, rows: list[dict]) -> str:
    with_tiles = [r for r in rows if r["tiles"]]
    wrong = sum(r["wrong"] for r in with_tiles)
    right = sum(r["right"] for r in with_tiles)
    tiles = sum(r["tiles"] for r in with_tiles)
    refused = sum(bool(r["problems"]) for r in rows)
    refused_right = sum(bool(r["problems"]) and not r["wrong"] for r in with_tiles)
    kept_wrong = sum(not r["problems"] and r["wrong"] for r in with_tiles)
    kept_lost = sum(r["lost"] for r in with_tiles if not r["problems"])

    def spread(name):
        values = [r[name] for r in with_tiles if r[name] is not None]
        if not values:
            return "      -        "
        return f"{min(values):6.2f} {np.median(values):6.2f} {max(values):6.2f}"

    return (f"  {kind:11s} {strength:14s} {wrong:3d}/{len(with_tiles)} wrong "
            f"{right:4d}/{tiles} right | edge {spread('edge_width')} | body "
            f"{spread('body_grey')} | burnt {spread('burnt_share')} | ink "
            f"{spread('ink_contrast')} | ring {spread('ring_burnt')} | refused "
            f"{refused:2d}/{len(rows)} (of them right {refused_right}; wrong kept {kept_wrong}, "
            f"losing {kept_lost} tiles)")


def _first_wrong_lines(summary: dict) -> list[str]:
    lines = []
    for name, row in summary.items():
        firsts = ", ".join(f"{v:.2f}" for v in row["first_wrong_per_photo"][:8])
        lines.append(f"  {name}: clean photos {row['clean'][0]:.2f}-{row['clean'][1]:.2f}; "
                     f"first wrong, per photo (least severe first): {firsts} ...")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = model_eval_parser("python -m bench.eval_quality", __doc__,
                               ("--renders", 24, "rendered photos in the overexposure sweep"))
    args = parser.parse_args(argv)
    if args.renders < 0:
        parser.error("--renders must be 0 or more")
    print("real valid/ photos blurred, darkened, overexposed: photos whose reading went wrong, "
          "tiles read right, the gate's measures (min median max) and photos refused")
    return run_models_eval("eval_quality", lambda: evaluate(args.models, args.renders),
                           args.json)


if __name__ == "__main__":
    sys.exit(main())

"""Calibration: how long `calibrate` takes, and what a profile costs and gains when reading.

    python -m bench.calibrate_bench [--runs 5] [--sizes-runs 7]

Photos are rendered (needs Pillow, in the dev extra): tiles of an edition the classifier
never saw in training (`EDITIONS`: white bodies with teal, red and orange close in hue,
green "Rummy" tiles) laid as the built-in `rows` layout says, then a second photo of the
same edition with other tiles in other light. Times are medians, reported against a floor
measured in the same run (one detector+classifier read of the same photo), because the
shared CPU's speed moves 2-4x within minutes.

Then photo sizes: a rendered table of a held-out edition (`training/editions.py`,
white_teal) as a 1000x750, a 12 MP and a 50 MP JPEG (the 1000x750 enlarged, as
`bench.vision_bench` does), each read from its bytes (`TileReader.read_bytes`) without
and with a profile from one calibration photo of that edition, in interleaved rounds:
medians, and ratios to the 1000x750 read without a profile measured in the same rounds.

`render_layout_photo` and `render_tiles_photo` are also what the calibration tests use.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from dataclasses import dataclass

import numpy as np

# Editions the renderer's training scenes do not have: body and ink colours (BGR), a font
# index of training.render.font_paths(), ring and logo. "G" inks make green-slot tiles.
EDITIONS: dict[str, dict] = {
    "white-teal": {
        "body": (246, 247, 247), "font": 1, "ring": False, "logo": True,
        "ink": {"K": (35, 32, 30), "R": (40, 30, 205), "B": (150, 135, 10), "O": (20, 150, 250)},
        "joker": (40, 30, 205),
    },
    "white-red-orange": {
        "body": (240, 242, 243), "font": 4, "ring": True, "logo": True,
        "ink": {"K": (25, 25, 25), "R": (50, 45, 215), "O": (35, 95, 240), "B": (185, 90, 30)},
        "joker": (25, 25, 25),
    },
    "rummy-green": {
        "body": (205, 230, 240), "font": 5, "ring": False, "logo": False,
        "ink": {"K": (30, 30, 35), "R": (45, 40, 200), "B": (170, 70, 25), "G": (60, 150, 30)},
        "joker": (45, 40, 200),
    },
}


@dataclass
class RenderedPhoto:
    image: np.ndarray  # BGR uint8
    codes: list[str]
    quads: np.ndarray  # (N, 4, 2) float32, clockwise from the upright top-left
    rows: list[list[int]]  # indices into codes, top row first, left to right


def slots_of(edition: dict) -> str:
    return "".join(edition["ink"])


def edition_face(code: str, edition: dict, variant: int = 0) -> np.ndarray:
    """The upright BGRA face of `code` in `edition`: the training renderer's glyphs and
    outline, recoloured with the edition's body and inks."""
    from training import render as R

    style = (0, 0, edition["font"], 100 + 3 * (variant % 3 - 1), edition["ring"], 42, "black",
             edition["logo"])
    base = R.tile_face("J" if code == "J" else "K" + code[1:], style).astype(np.float32)
    body_old = np.asarray(R.BODIES[0], np.float32)
    ink_old = np.asarray(R.JOKER_INK["black"][0] if code == "J" else R.INK["K"][0], np.float32)
    gray = base[..., :3].mean(axis=2)
    m = np.clip((body_old.mean() - gray) / (body_old.mean() - ink_old.mean()), 0, 1)[..., None]
    body = np.asarray(edition["body"], np.float32)
    ink = np.asarray(edition["joker"] if code == "J" else edition["ink"][code[0]], np.float32)
    out = base.copy()
    shading = base[..., :3] * (body / body_old)
    painted = body * (1 - m) + ink * m
    # The logo at the foot stays an embossed shade of the body, not ink.
    foot = int(base.shape[0] * 0.72)
    out[:foot, :, :3] = painted[:foot]
    out[foot:, :, :3] = shading[foot:]
    return np.clip(out, 0, 255).astype(np.uint8)


def layout_rows(edition: dict, jokers: int = 2) -> list[list[str]]:
    """The built-in `rows` layout in this edition's colours: one colour per row, then jokers."""
    rows = [[f"{slot}{n}" for n in range(1, 14)] for slot in slots_of(edition)]
    return rows + [["J"] * jokers] if jokers else rows


def render_tiles_photo(rng: np.random.Generator, edition: dict, rows: list[list[str]], *,
                       width: int = 1000, height: int = 750, tilt: float = 0.08,
                       angle: float = 0.0, surface: str | None = None) -> RenderedPhoto:
    """`rows` of tiles laid left to right on a table, photographed with perspective `tilt`
    (share of the frame the far edge narrows by), the whole layout turned by `angle` rad."""
    import cv2

    from training import render as R

    # Fit the turned layout (rows of tiles 1.06 widths apart, 1.35 heights apart) in 80 %.
    span_x = max(len(r) for r in rows) * 1.06
    span_y = len(rows) * 1.35 / 0.72
    c, s = abs(math.cos(angle)), abs(math.sin(angle))
    tile_w = 0.8 * min(width / (span_x * c + span_y * s), height / (span_x * s + span_y * c))
    tile_h = tile_w / 0.72
    canvas, _ = R._surface(rng, height, width, surface)
    centre = np.array([width / 2, height / 2]) + rng.normal(0, 6, 2)
    right = np.array([math.cos(angle), math.sin(angle)])
    down = np.array([-math.sin(angle), math.cos(angle)])
    codes, quads, index_rows = [], [], []
    for r, row in enumerate(rows):
        y = (r - (len(rows) - 1) / 2) * tile_h * 1.35
        x0 = -(len(row) - 1) / 2 * tile_w * 1.06
        index_rows.append([])
        for k, code in enumerate(row):
            c = centre + right * (x0 + k * tile_w * 1.06) + down * y + rng.normal(0, 0.04 * tile_w, 2)
            quad = R.tile_quad(c, angle + rng.normal(0, 0.03), tile_w, tile_h)
            index_rows[-1].append(len(codes))
            codes.append(code)
            quads.append(quad)
    thick = np.array([rng.normal(0, 0.05), 1.0], np.float32) * tile_w * 0.16
    for i in sorted(range(len(codes)), key=lambda i: float(quads[i][:, 1].mean())):
        R._draw_tile(canvas, edition_face(codes[i], edition, int(rng.integers(3))),
                     quads[i], thick)
    src = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    k = tilt * width * rng.uniform(0.6, 1.0)
    dst = src + np.float32([[k, 0], [-k, 0], [0, 0], [0, 0]]) + rng.normal(0, 4, (4, 2)).astype(
        np.float32)
    H = cv2.getPerspectiveTransform(src, dst)
    # Replicate, not reflect, the canvas's edge: a reflection would mirror tiles in.
    photo = cv2.warpPerspective(canvas, H, (width, height), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REPLICATE)
    photo = R._photo_effects(rng, photo)
    pts = cv2.perspectiveTransform(np.float32(quads).reshape(-1, 1, 2), H).reshape(-1, 4, 2)
    return RenderedPhoto(np.clip(photo, 0, 255).astype(np.uint8), codes, pts.astype(np.float32),
                         index_rows)


def render_layout_photo(rng: np.random.Generator, edition: dict, jokers: int = 2,
                        **kwargs) -> RenderedPhoto:
    """A calibration photo: the edition's tiles laid as the `rows` layout says."""
    return render_tiles_photo(rng, edition, layout_rows(edition, jokers), **kwargs)


def random_rows(rng: np.random.Generator, edition: dict, n_rows: int = 4,
                per_row: int = 10) -> list[list[str]]:
    """Rows of random tiles of the edition (jokers included), as on a rack or a table."""
    pool = [f"{s}{n}" for s in slots_of(edition) for n in range(1, 14)] * 2 + ["J", "J"]
    picks = rng.permutation(len(pool))[: n_rows * per_row]
    return [[pool[i] for i in picks[r * per_row:(r + 1) * per_row]] for r in range(n_rows)]


# ----------------------------------------------------------------------------- scoring
def read_right(reader, photo: RenderedPhoto) -> tuple[int, int, int]:
    """(tiles found, tiles read right, tiles in the photo): each true tile matched to the
    nearest detection within half a tile."""
    detections = reader.read(photo.image)
    codes = detections.codes
    centres = detections.centers
    truth = photo.quads.mean(axis=1)
    size = np.linalg.norm(photo.quads[:, 1] - photo.quads[:, 0], axis=1)
    found = right = 0
    for i, c in enumerate(truth):
        if len(centres) == 0:
            break
        d = np.linalg.norm(centres - c, axis=1)
        j = int(d.argmin())
        if d[j] < 0.5 * size[i]:
            found += 1
            right += codes[j] == photo.codes[i]
    return found, right, len(photo.codes)


def _paired_medians(runs: int, first, second, *args) -> tuple[float, float]:
    """Medians of `first(*args)` and `second(*args)` timed in turns, so both see the same
    load on a shared machine."""
    a, b = [], []
    for k in range(runs):
        pairs = ((first, a), (second, b))
        for fn, times in pairs if k % 2 == 0 else pairs[::-1]:  # neither always goes first
            start = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - start)
    return statistics.median(a), statistics.median(b)


def bench_edition(reader, name: str, runs: int, n_photos: int) -> dict:
    """Calibrate on one rendered layout photo of `name`; read other photos without and
    with the profile."""
    from calibration import Layout, calibrate

    edition = EDITIONS[name]
    rng = np.random.default_rng(1000 + len(name))
    cal = render_layout_photo(rng, edition)
    layout = Layout.builtin("rows")
    profile = calibrate(cal.image, layout, reader)
    profiled = reader.with_profile(profile)
    tests = [render_tiles_photo(rng, edition, random_rows(rng, edition), tilt=0.15,
                                angle=float(rng.normal(0, 0.1))) for _ in range(n_photos)]
    floor, t_cal = _paired_medians(runs, reader.read, lambda img: calibrate(img, layout, reader),
                                   cal.image)
    t_read, t_prof = _paired_medians(runs, reader.read, profiled.read, tests[0].image)
    return {
        "floor": floor,
        "calibrate": t_cal,
        "read": t_read,
        "read_profile": t_prof,
        "without": np.sum([read_right(reader, p) for p in tests], axis=0),
        "with": np.sum([read_right(profiled, p) for p in tests], axis=0),
    }


def read_labels(reader, photo: np.ndarray, labels, fourth: str = "O") -> tuple[int, int, int]:
    """(found, read right, tiles) against `[(code, quad)]` labels in the classifier's slot
    codes; `fourth` is what the reader calls the 4th slot (G through a green profile)."""
    detections = reader.read(photo)
    centres, codes = detections.centers, detections.codes
    found = right = 0
    for code, quad in labels:
        truth = code if code == "J" or code[0] != "O" else fourth + code[1:]
        if len(centres) == 0:
            break
        d = np.linalg.norm(centres - quad.mean(axis=0), axis=1)
        j = int(d.argmin())
        if d[j] < 0.5 * np.linalg.norm(quad[1] - quad[0]):
            found += 1
            right += codes[j] == truth
    return found, right, len(labels)


HELD_OUT_KINDS = ("table", "rack_front", "scatter", "closeup", "hand")


def bench_held_out(reader, per_kind: int, seed: int = 70) -> None:
    """The three editions `training/editions.py` holds out of training, in its harder scenes
    (racks from the front, hands, flash and backlight): a profile from one calibration
    photo of each, then `per_kind` scenes of each kind read without and with it. The
    head's weights were chosen on seed 70; other seeds are scenes it never saw."""
    from calibration import Layout, calibrate
    from training.editions import (
        HELD_OUT,
        held_out,
        render_calibration_layout,
        render_edition_scene,
    )

    print(f"\nheld-out editions of training/editions.py, {per_kind} scene(s) per kind, seed "
          f"{seed}: tiles read right (of found) without -> with the profile")
    for k, name in enumerate(HELD_OUT):
        rng = np.random.default_rng(seed + k)
        image, _rows = render_calibration_layout(name, rng)
        profile = calibrate(image, Layout.builtin("rows"), reader)
        profiled = reader.with_profile(profile)
        cells = []
        for kind in HELD_OUT_KINDS:
            base, with_p = np.zeros(3, int), np.zeros(3, int)
            for _ in range(per_kind):
                photo, labels, _ignores = render_edition_scene(rng, held_out(name), kind=kind)
                base += read_labels(reader, photo, labels)
                with_p += read_labels(profiled, photo, labels, profile.fourth_slot)
            cells.append(f"{kind} {base[1]}/{base[0]} -> {with_p[1]}/{with_p[0]}")
        print(f"  {name:18s} ({profile.slot_letters}) " + "; ".join(cells))


def bench_real(reader, key: str) -> None:
    """A profile from one real labelled train/ photo (its labels as the corrected reading:
    `calibrate_tiles`), then the held-out valid/ photos read without and with it."""
    from bench.eval_vision import evaluate_photo, summarise
    from calibration.calibrate import calibrate_tiles
    from training.real_data import load_split, oriented_quad
    from vision.recognition.rectify import canonical_quad

    photo = next((p for p in load_split("train") if p.key == key), None)
    if photo is None:
        raise SystemExit(f"no train/ photo {key!r}")
    image = photo.read()
    quads = np.stack([canonical_quad(oriented_quad(t.polygon)) for t in photo.tiles])
    upright, _probs = reader.classifier.classify(image, quads)
    profile = calibrate_tiles(image, upright, [t.code for t in photo.tiles], reader)
    valid = load_split("valid")
    print(f"\nreal cream photos: profile from train/ {key} ({len(photo.tiles)} tiles); valid/:")
    for name, r in (("without", reader), ("with", reader.with_profile(profile))):
        s = summarise([evaluate_photo(r, p) for p in valid])
        print(f"  {name:8s} profile: found {s['matched']}/{s['labelled']}, read right "
              f"{s['correct']}/{s['matched']}, extra finds {s['detected'] - s['matched']}")


def bench_sizes(reader, runs: int) -> list[dict]:
    """Seconds of reading a 1000x750, 12 MP and 50 MP photo without and with a profile."""
    import cv2

    from bench.vision_bench import SIZES, enlarged, per_round_ratio
    from calibration import Layout, calibrate
    from training.editions import HELD_OUT, render_calibration_layout, render_edition_scene

    edition = HELD_OUT["white_teal"]
    rng = np.random.default_rng(90_210)
    image, rows = render_calibration_layout(edition, rng)
    layout = Layout.from_text("\n".join(" ".join(r) for r in rows), name="white_teal")
    profiled = reader.with_profile(calibrate(image, layout, reader))
    photo, _labels, _ignores = render_edition_scene(rng, edition, kind="table",
                                                    width=1000, height=750)
    small = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes()
    payloads = {"1000x750": small} | {name: enlarged(small, size) for name, size in SIZES.items()}
    times = {(label, k): [] for label in payloads for k in ("without", "with")}
    for r in range(runs):
        for label, data in payloads.items():
            pairs = (("without", reader), ("with", profiled))
            for k, rd in pairs if r % 2 == 0 else pairs[::-1]:
                start = time.perf_counter()
                rd.read_bytes(data)
                times[(label, k)].append(time.perf_counter() - start)
    base = times[("1000x750", "without")]
    out = []
    for label in payloads:
        a, b = times[(label, "without")], times[(label, "with")]
        out.append({"photo": label, "tiles": len(reader.read_bytes(payloads[label])),
                    "without_s": statistics.median(a), "with_s": statistics.median(b),
                    "without_ratio": per_round_ratio(a, base),
                    "with_ratio": per_round_ratio(b, base),
                    "profile_cost": per_round_ratio(b, a)})
    return out


def main(argv: list[str] | None = None) -> int:
    from vision.recognition.pipeline import TileReader

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--photos", type=int, default=4, help="test photos per edition")
    parser.add_argument("--seed", type=int, default=70, help="first seed of --held-out")
    parser.add_argument("--real", metavar="KEY", default=None,
                        help="also calibrate on real train/ photo KEY (e.g. rummy-3) and read "
                             "valid/ without and with the profile (needs RUMMIKUB_DATA)")
    parser.add_argument("--sizes-runs", type=int, default=7,
                        help="rounds of the photo-size timings (0: skip them)")
    parser.add_argument("--held-out", type=int, default=0, metavar="N",
                        help="also read N scenes per kind of training/editions.py's held-out "
                             "editions")
    args = parser.parse_args(argv)
    reader = TileReader.load()
    print("calibrate: one `rummikub calibrate` of a rendered 54-tile layout photo (1000x750);"
          " floor: one plain read of that photo.\nread: a 1000x750 photo of 40 tiles without"
          " and with the profile. Seconds are medians of --runs runs.")
    print(f"{'edition':18s} {'calibrate s':>11s} {'floor s':>8s} {'ratio':>6s} "
          f"{'read s':>7s} {'+profile s':>10s} {'ratio':>6s}  read right: without -> with")
    for name in EDITIONS:
        r = bench_edition(reader, name, args.runs, args.photos)
        base, with_p = r["without"], r["with"]
        print(f"{name:18s} {r['calibrate']:11.3f} {r['floor']:8.3f} "
              f"{r['calibrate'] / r['floor']:6.2f} {r['read']:7.3f} {r['read_profile']:10.3f} "
              f"{r['read_profile'] / r['read']:6.2f}  "
              f"{base[1]}/{base[2]} ({base[1] / base[2]:.1%}) -> "
              f"{with_p[1]}/{with_p[2]} ({with_p[1] / with_p[2]:.1%}); "
              f"found {base[0]} -> {with_p[0]}")
    if args.sizes_runs:
        print(f"\nphoto sizes (a rendered white_teal table, read from its JPEG bytes; medians "
              f"of {args.sizes_runs} interleaved rounds; x = over the 1000x750 read without "
              "a profile, same rounds)")
        print(f"  {'photo':9s} {'tiles':>5s} {'without s':>10s} {'x':>6s} {'with s':>8s} "
              f"{'x':>6s}  with / without")
        for r in bench_sizes(reader, args.sizes_runs):
            print(f"  {r['photo']:9s} {r['tiles']:5d} {r['without_s']:10.3f} "
                  f"{r['without_ratio']:6.2f} {r['with_s']:8.3f} {r['with_ratio']:6.2f}  "
                  f"{r['profile_cost']:.2f}")
    if args.held_out:
        bench_held_out(reader, args.held_out, args.seed)
    if args.real:
        bench_real(reader, args.real)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

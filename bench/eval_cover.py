"""A hand over a lone table photo: how often it is seen, and how often a clean photo is
taken for covered (`vision.game.cover`).

    RUMMIKUB_DATA=... python -m bench.eval_cover [--models DIR] [--json OUT]

Every real `valid/` photo is read as taken, and with a hand painted over it three times
(`bench.eval_tracker._hand`: a palm, four fingers and the arm to the photo's bottom edge,
0.9 tile heights across, three skin tones): resting over its middle tile, and over two
tiles drawn at random (a fixed seed: every run the same). For each photo: the largest
foreign piece inside the tiles' area, in tile areas (`Cover.area`), and whether the photo
is refused. Target: no clean photo refused. The detection rate is given over every painted
hand, and over the hands that hid at least one tile the clean reading found (a hand beside
the tiles hides nothing and changes no verdict), and the gate's cost as a share of reading
the photo (medians of interleaved runs: the CPU is shared). The threshold's record:
docs/decisions/covered-photo.md.
"""

from __future__ import annotations

import sys

import numpy as np

from bench import model_eval_arguments, run_models_eval

HANDS = 3  # painted hands per photo: over the middle tile, then over random ones
SEED = 19_000
RUNS = 3  # timed runs per photo of the read and of the gate, interleaved


def hand_centres(corners: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """Where the hands rest: the middle tile found, then two tiles drawn at random."""
    centres = corners.mean(axis=1)
    picks = [len(corners) // 2] + list(rng.choice(len(corners), size=min(HANDS - 1,
                                                                          len(corners)),
                                                  replace=False))
    return [centres[i] for i in picks]


def evaluate(models_dir=None, log=print) -> dict:
    from bench.eval_tracker import _hand
    from training.real_data import load_split
    from vision.game import cover
    from vision.recognition.pipeline import TileReader

    reader = TileReader.load(models_dir)
    rng = np.random.default_rng(SEED)
    rows, ratios = [], []
    for photo in load_split("valid"):
        image = photo.read()
        found = reader.read(image)
        clean = cover.measure(image, found.corners)
        if len(found):
            ratios.append(_cost(reader, cover, image, found.corners))
        rows.append({"photo": photo.key, "hand": None, "tiles": len(found),
                     "area": round(clean.area, 2), "refused": bool(clean.problems())})
        if not len(found):
            continue
        size = float(np.median(np.linalg.norm(found.corners[:, 3] - found.corners[:, 0],
                                              axis=1)))
        for k, centre in enumerate(hand_centres(found.corners, rng)):
            painted = _hand(image.astype(np.float32), (centre[0], centre[1] + 0.3 * size),
                            0.9 * size, k + 1).astype(np.uint8)
            seen = reader.read(painted)
            c = cover.measure(painted, seen.corners)
            rows.append({"photo": photo.key, "hand": k, "tiles": len(seen),
                         "hid": max(0, len(found) - len(seen)),
                         "area": round(c.area, 2), "refused": bool(c.problems())})
    out = summarise(rows, log)
    out["cost_ratio_median"] = round(float(np.median(ratios)), 3)
    log(f"cost: the gate takes {out['cost_ratio_median']:.3f} x the photo's read "
        f"(median over the photos of each photo's median of {RUNS} interleaved runs)")
    return out


def _cost(reader, cover, image, corners) -> float:
    """The gate's time on one photo as a share of reading it, medians of RUNS interleaved."""
    import time

    reads, gates = [], []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        reader.read(image)
        t1 = time.perf_counter()
        cover.measure(image, corners)
        gates.append(time.perf_counter() - t1)
        reads.append(t1 - t0)
    return float(np.median(gates) / np.median(reads))


def summarise(rows: list[dict], log=print) -> dict:
    clean = [r for r in rows if r["hand"] is None]
    with_tiles = [r for r in clean if r["tiles"]]
    hands = [r for r in rows if r["hand"] is not None]
    hiding = [r for r in hands if r["hid"] > 0]
    refused = [r for r in clean if r["refused"]]
    out = {
        "threshold_tile_areas": _threshold(),
        "clean_photos": len(clean),
        "clean_refused": len(refused),
        "clean_area_max": max((r["area"] for r in with_tiles), default=0.0),
        "hands": len(hands),
        "hands_refused": sum(r["refused"] for r in hands),
        "hiding_hands": len(hiding),
        "hiding_hands_refused": sum(r["refused"] for r in hiding),
        "hand_area_quartiles": [round(float(v), 2) for v in
                                np.percentile([r["area"] for r in hands], [25, 50, 75])]
        if hands else [],
        "rows": rows,
    }
    log(f"clean valid/ photos refused: {out['clean_refused']} of {out['clean_photos']} "
        f"(largest foreign piece {out['clean_area_max']:.2f} tile areas; the gate refuses "
        f"from {out['threshold_tile_areas']})")
    log(f"painted hands refused: {out['hands_refused']} of {out['hands']}; of those that "
        f"hid a tile: {out['hiding_hands_refused']} of {out['hiding_hands']} "
        f"(foreign piece, quartiles {out['hand_area_quartiles']} tile areas)")
    for r in refused:
        log(f"  clean photo refused: {r['photo']} ({r['area']:.2f} tile areas)")
    return out


def _threshold() -> float:
    from vision.game.cover import MAX_AREA

    return MAX_AREA


def main(argv: list[str] | None = None) -> int:
    args = model_eval_arguments("python -m bench.eval_cover", __doc__, argv)
    print("real valid/ photos as taken and with a painted hand: photos refused as covered")
    return run_models_eval("eval_cover", lambda: evaluate(args.models), args.json)


if __name__ == "__main__":
    sys.exit(main())

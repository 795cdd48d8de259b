"""A still table costs almost nothing: where the still-frame threshold comes from, and what
a still frame costs against a read one.

    python -m bench.still_bench [--photos 40] [--runs 7] [--json OUT]

1. The threshold (`app.server.still.STILL_MAX_DIFF`). For each real labelled photo
   (`valid/`, then `train/`) two kinds of frame pairs, each frame with its own camera
   noise (Gaussian, sigma 3 and 6 grey levels, a 2 % flicker of brightness, JPEG quality
   80 as a phone streams):
   - same table: the photo and itself (only the noise differs);
   - one tile moved: one labelled tile painted out (inpainted) and pasted again 1.5 tile
     heights away, in a random direction (the smallest tile of the photo, so the hardest).
   The measure is `still.still_difference` of two `still.still_picture`s (libjpeg's 1/8
   decode, 64x48 grey, 3x3 blur): the largest difference of one pixel once the
   brightness is evened out. Reported: the largest over the same-table pairs, the
   smallest over the moved pairs, and how many of each the threshold judges wrongly.
   Also reported, as the measures tried first: the raw largest difference (no brightness
   evened out: flicker alone reaches 9 grey levels) and the mean absolute difference
   (one tile is a few of 3072 pixels: it moves the mean less than flicker does).
2. The cost. The server's frame path (`FrameHub._process_latest`) on a 1000x750 table
   frame, once read by the models and once matched as still on a table still for a while
   (the first `still.still_pushes` still frames after a read still go to the tracker),
   interleaved over `--runs` rounds: the ratio still / read (medians), and each against
   the floor (`bench.floor`).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from bench import bench_parser, save_json

SIGMAS = (3.0, 6.0)


def _frame(image: np.ndarray, rng: np.random.Generator, sigma: float) -> bytes:
    """`image` as a phone camera would stream it: noise, a little flicker, JPEG 80."""
    gain = 1.0 + rng.uniform(-0.02, 0.02)
    noisy = image.astype(np.float32) * gain + rng.normal(0.0, sigma, image.shape)
    out = np.clip(noisy, 0, 255).astype(np.uint8)
    ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, 80])
    assert ok
    return data.tobytes()


def _move_tile(image: np.ndarray, polygon: np.ndarray, rng: np.random.Generator
               ) -> np.ndarray:
    """The photo with the tile at `polygon` moved 1.5 tile heights in a random direction."""
    mask = np.zeros(image.shape[:2], np.uint8)
    cv2.fillPoly(mask, [polygon.astype(np.int32)], 255)
    grown = cv2.dilate(mask, np.ones((7, 7), np.uint8))
    out = cv2.inpaint(image, grown, 5, cv2.INPAINT_TELEA)
    x, y, w, h = cv2.boundingRect(polygon.astype(np.int32))
    angle = rng.uniform(0, 2 * np.pi)
    step = 1.5 * max(w, h)
    dx, dy = int(round(step * np.cos(angle))), int(round(step * np.sin(angle)))
    shift = np.float32([[1, 0, dx], [0, 1, dy]])
    size = (image.shape[1], image.shape[0])
    moved_tile = cv2.warpAffine(image, shift, size)
    moved_mask = cv2.warpAffine(mask, shift, size)
    out[moved_mask > 0] = moved_tile[moved_mask > 0]
    return out


def _smallest_tile(tiles) -> np.ndarray:
    return min(tiles, key=lambda t: cv2.contourArea(t.polygon.astype(np.float32))).polygon


def measure_threshold(count: int, seed: int = 20) -> dict:
    from app.server.still import STILL_MAX_DIFF, still_difference, still_picture
    from training.real_data import load_split
    from vision.recognition.decode import Photo

    photos = [p for split in ("valid", "train") for p in load_split(split) if p.tiles][:count]
    rng = np.random.default_rng(seed)
    rows = {"same": [], "moved": []}
    for labelled in photos:
        image = labelled.read()
        moved = _move_tile(image, _smallest_tile(labelled.tiles), rng)
        for sigma in SIGMAS:
            for kind, other in (("same", image), ("moved", moved)):
                a = still_picture(Photo.from_bytes(_frame(image, rng, sigma)))
                b = still_picture(Photo.from_bytes(_frame(other, rng, sigma)))
                diff = np.abs(a - b)
                rows[kind].append({"photo": labelled.key, "sigma": sigma,
                                   "max": still_difference(b, a), "raw_max": float(diff.max()),
                                   "mean": float(diff.mean())})
    same_max = max(r["max"] for r in rows["same"])
    moved_min = min(r["max"] for r in rows["moved"])
    return {
        "photos": len(photos), "pairs": {k: len(v) for k, v in rows.items()},
        "threshold": STILL_MAX_DIFF,
        "same_table_max_diff": {"largest": same_max,
                                "p50": statistics.median(r["max"] for r in rows["same"])},
        "moved_tile_max_diff": {"smallest": moved_min,
                                "p50": statistics.median(r["max"] for r in rows["moved"])},
        "same_judged_moved": sum(r["max"] >= STILL_MAX_DIFF for r in rows["same"]),
        "moved_judged_same": sum(r["max"] < STILL_MAX_DIFF for r in rows["moved"]),
        "raw_max_diff": {"same_largest": max(r["raw_max"] for r in rows["same"]),
                         "moved_smallest": min(r["raw_max"] for r in rows["moved"])},
        "mean_diff": {"same_largest": max(r["mean"] for r in rows["same"]),
                      "moved_smallest": min(r["mean"] for r in rows["moved"])},
        "closest_moved": min(rows["moved"], key=lambda r: r["max"]),
    }


def measure_cost(runs: int) -> dict:
    """Still frame vs read frame on the server's frame path, and the floor, interleaved."""
    import asyncio
    import tempfile

    from app.server.frames import Frame, FrameHub, GameFrames, make_tracker
    from app.server.games import GameService
    from app.server.storage import Storage
    from bench.floor import Floor, base_photo
    from vision.recognition.pipeline import TileReader

    data, source = base_photo()
    reader = TileReader.load()
    floor = Floor(reader, data)
    with tempfile.TemporaryDirectory() as tmp:
        storage = Storage(Path(tmp) / "bench.sqlite3")
        service = GameService(storage, reader)
        hub = FrameHub(service, reader)
        game = service.create(["Ann", "Ben"])
        gf = GameFrames(game.id, make_tracker(service.rules(game)))
        hub.games[game.id] = gf

        def one(still: bool) -> float:
            if not still:
                gf.still_ref = gf.last_read = None  # as after a change of the table
            else:
                gf.still_run = 99  # a table still for a while (the tracker no longer asked)
            gf.slot = Frame(data, time.perf_counter())
            start = time.perf_counter()
            hub._process_latest(gf, [])
            return time.perf_counter() - start

        one(False)
        one(True)  # warm
        rounds = []
        for _ in range(runs):
            read, still, base = one(False), one(True), floor.time_once()
            rounds.append({"read": read, "still": still, "floor": base})
        asyncio.run(hub.close())
        storage.close()
    med = {k: statistics.median(r[k] for r in rounds) for k in ("read", "still", "floor")}
    return {
        "photo": source, "runs": runs,
        "read_ms": round(med["read"] * 1000, 2), "still_ms": round(med["still"] * 1000, 2),
        "floor_ms": round(med["floor"] * 1000, 2),
        "still_over_read": round(statistics.median(r["still"] / r["read"] for r in rounds), 4),
        "read_over_floor": round(statistics.median(r["read"] / r["floor"] for r in rounds), 3),
        "still_over_floor": round(statistics.median(r["still"] / r["floor"] for r in rounds),
                                  4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("python -m bench.still_bench", __doc__)
    parser.add_argument("--photos", type=int, default=40)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    try:
        threshold = measure_threshold(args.photos)
    except (FileNotFoundError, OSError) as error:
        print(f"still_bench: the real photos are needed for the threshold: {error}",
              file=sys.stderr)
        threshold = None
    cost = measure_cost(args.runs)
    result = {"threshold": threshold, "cost": cost}
    if threshold:
        t = threshold
        print(f"threshold {t['threshold']:g} grey levels over {t['photos']} photos: same table "
              f"max diff up to {t['same_table_max_diff']['largest']:.2f}, one tile moved at "
              f"least {t['moved_tile_max_diff']['smallest']:.2f}; wrong: "
              f"{t['same_judged_moved']}/{t['pairs']['same']} still pairs read, "
              f"{t['moved_judged_same']}/{t['pairs']['moved']} moves missed")
    print(f"still frame {cost['still_ms']:.2f} ms vs read {cost['read_ms']:.1f} ms: "
          f"{cost['still_over_read']:.3f} x a read ({cost['still_over_floor']:.3f} x floor, "
          f"read {cost['read_over_floor']:.2f} x floor), medians of {cost['runs']}")
    save_json(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())

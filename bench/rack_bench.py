"""Speed of reading a rack: the 1000x750 read and a 16 MP rendered stand, over the floor.

    python -m bench.rack_bench [--runs 7] [--models DIR] [--json OUT]

The floor (`bench.floor`: decoding the 1000x750 benchmark JPEG plus one pass of both
models) and the two cases run in interleaved rounds, so a slow minute slows all alike; a
ratio is the median over the rounds of (the case's time / the floor's time in that round).
- 1000x750 read: the benchmark photo's JPEG bytes -> tiles (`TileReader.read_bytes`).
- 16 MP rack read: a 4624x2604 photo of a two-tier stand from `training.render3d`
  (seed 8, the held-out white modern edition, JPEG quality 92), the size of today's phone
  photos -> tiles, decoded only as far as needed. Its tiles found / read right are printed
  too (a labelled tile: its number shows; found: a detection's centre in its visible part).
- 16 MP rack score: the same photo as `rummikub score` reads it: the read, then
  `vision.game.rack.read_rack`, without and with the photo (with it, the stand's tiles are
  read again in boxes moved down to the face, `vision.game.back_tier`).
"""

from __future__ import annotations

import statistics
import sys
import time

import cv2
import numpy as np

from bench import counted_eval_arguments, report_and_finish

RACK_SIZE = (4624, 2604)
RACK_SEED = 8


def rack_photo() -> tuple[bytes, list]:
    from training.editions import HELD_OUT
    from training.render3d.scene import render_depth_scene

    scene = render_depth_scene(np.random.default_rng(RACK_SEED), HELD_OUT["white_modern_logo"],
                               kind="rack", tiers=2, width=RACK_SIZE[0], height=RACK_SIZE[1])
    data = cv2.imencode(".jpg", scene.image, [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes()
    return data, scene.labels


def evaluate(models_dir=None, runs: int = 7, log=print) -> dict:
    from bench.eval_vision import match_centres
    from bench.floor import Floor, base_photo
    from vision.game.rack import read_rack
    from vision.recognition.decode import Photo
    from vision.recognition.pipeline import TileReader

    reader = TileReader.load(models_dir)
    floor = Floor(reader, base_photo()[0])
    small = base_photo()[0]
    big, labels = rack_photo()
    det = reader.read_bytes(big)
    pairs = match_centres(det.centers if len(det) else np.zeros((0, 2)),
                          [q for _c, q in labels],
                          np.argsort(-det.detector_scores) if len(det) else None)
    right = sum(det.codes[d] == labels[k][0] for d, k in pairs)

    def score(recrop: bool):
        photo = Photo.from_bytes(big)
        found = reader.read_photo(photo)
        return read_rack(found, frame=(photo.width, photo.height),
                         photo=photo if recrop else None, reader=reader)

    scored = score(True).detections.codes
    cases = {"floor": lambda: floor.time_once(),
             "1000x750 read": lambda: reader.read_bytes(small),
             "16 MP rack read": lambda: reader.read_bytes(big),
             "16 MP rack score": lambda: score(False),
             "16 MP rack score, re-cropped": lambda: score(True)}
    for run in cases.values():  # warm up
        run()
    seconds: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, run in cases.items():
            start = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - start)
    out = {"runs": runs, "rack_tiles": len(labels), "rack_found": len(pairs),
           "rack_read_right": int(right), "rack_detections": len(det),
           "rack_read_right_recropped": int(sum(scored[d] == labels[k][0] for d, k in pairs))}
    for name, values in seconds.items():
        out[f"{name} ms"] = round(1000 * statistics.median(values), 1)
        if name != "floor":
            out[f"{name} / floor"] = round(statistics.median(
                v / f for v, f in zip(values, seconds["floor"], strict=True)), 2)
    return out


def report(r: dict) -> str:
    return "\n".join([
        f"rack read speed ({r['runs']} interleaved rounds; ratios = median of case / floor in "
        "the same round)",
        f"  floor                {r['floor ms']:8.1f} ms",
        f"  1000x750 read        {r['1000x750 read ms']:8.1f} ms  {r['1000x750 read / floor']:5.2f}x",
        f"  16 MP rack read      {r['16 MP rack read ms']:8.1f} ms  "
        f"{r['16 MP rack read / floor']:5.2f}x",
        f"  16 MP rack score     {r['16 MP rack score ms']:8.1f} ms  "
        f"{r['16 MP rack score / floor']:5.2f}x",
        f"    re-cropped         {r['16 MP rack score, re-cropped ms']:8.1f} ms  "
        f"{r['16 MP rack score, re-cropped / floor']:5.2f}x",
        f"  16 MP rack photo: {r['rack_tiles']} labelled tiles, found {r['rack_found']}, read "
        f"right {r['rack_read_right']} (after read_rack, re-cropped: "
        f"{r['rack_read_right_recropped']}), {r['rack_detections']} detections"])


def main(argv: list[str] | None = None) -> int:
    args = counted_eval_arguments("python -m bench.rack_bench", __doc__, argv,
                                  ("--runs", 7, "interleaved rounds"))
    return report_and_finish(lambda: evaluate(args.models, args.runs), report, args.json)


if __name__ == "__main__":
    sys.exit(main())

"""Do phone-sized photos read as right as the originals? Upscaled real photos, two ways.

    python -m bench.eval_big_photos [--limit N] [--sizes 4032x3024,4624x3468,8160x6120] [--models DIR]

Each held-out real photo (1000x750) is enlarged to phone sizes (12 MP: 4032x3024, 16 MP:
4624x3468, 50 MP: 8160x6120; cubic interpolation) and encoded as a JPEG (quality 92), then
read
- "whole": the JPEG decoded at full size and read from that array (the plain way), and
- "reduced": through `TileReader.read_bytes`, which detects on a 1/2-1/8 scaled decode and
  crops the tiles from the smallest decode that holds them in full detail.
Reported per size: tiles found and read right against the labels (scaled with the photo)
for the original and both ways, how many tiles the two ways read differently, and the
median time of each way. The reduced way must read as many tiles right as the original
photo does (the whole decode is shown beside it: the detector sees its pixels through
another resampling, so it may find a tile more or less).

Then a whole large table in one photo, its tiles a small share of the frame: k x k of the
1000x750 photos side by side (k = 2, 3, 4: 2000x1500 to 4000x3000, the tiles at 1/k of
their share), as JPEG through `read_bytes`, without and with the second pass at a finer
scale (`vision.recognition.fine_scale`): tiles found and read right, and the median time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from bench.eval_vision import match_centres


def _score(detections, photo, scale: np.ndarray) -> tuple[int, int]:
    """(labelled tiles found, found and read right)."""
    if len(detections) == 0:
        return 0, 0
    polygons = [(t.polygon + 0.5) * scale - 0.5 for t in photo.tiles]
    pairs = match_centres(detections.centers, polygons, np.argsort(-detections.detector_scores))
    codes = detections.codes
    return len(pairs), sum(codes[d] == photo.tiles[lab].code for d, lab in pairs)


def _differences(a, b) -> int:
    """Tiles of `a` that `b` lacks (centre not inside any of b's tiles) or reads otherwise."""
    if len(a) == 0 or len(b) == 0:
        return max(len(a), len(b))
    pairs = match_centres(a.centers, list(b.corners))
    return len(a) - len(pairs) + sum(a.codes[i] != b.codes[j] for i, j in pairs)


def mosaics(models_dir, photos, sizes=(2, 3, 4)) -> None:
    """A whole large table: k x k photos side by side, read without / with the finer pass."""
    from vision.recognition.pipeline import TileReader

    readers = {"without": TileReader.load(models_dir, fine_scale=False),
               "with": TileReader.load(models_dir)}
    photos = [(p, p.read()) for p in photos if p.tiles]
    photos = [(p, image) for p, image in photos if image.shape[:2] == (750, 1000)]
    print(f"a whole large table: k x k of the {len(photos)} 1000x750 photos with tiles side "
          "by side; tiles found / read right, median ms, without -> with the finer pass")
    for k in sizes:
        cells = {}
        for way, reader in readers.items():
            tiles = found = right = 0
            times = []
            for start in range(0, len(photos) - k * k + 1, k * k):
                canvas = np.zeros((750 * k, 1000 * k, 3), np.uint8)
                labels = []
                for j, (photo, image) in enumerate(photos[start:start + k * k]):
                    oy, ox = (j // k) * 750, (j % k) * 1000
                    canvas[oy:oy + 750, ox:ox + 1000] = image
                    labels += [(t.code, t.polygon + np.float32([ox, oy])) for t in photo.tiles]
                data = cv2.imencode(".jpg", canvas, [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes()
                begin = time.perf_counter()
                det = reader.read_bytes(data)
                times.append(time.perf_counter() - begin)
                tiles += len(labels)
                if len(det):
                    pairs = match_centres(det.centers, [q for _c, q in labels],
                                          np.argsort(-det.detector_scores))
                    found += len(pairs)
                    right += sum(det.codes[d] == labels[i][0] for d, i in pairs)
            cells[way] = (f"{100 * found / tiles:6.2f} % {100 * right / tiles:6.2f} % "
                          f"{1000 * statistics.median(times):5.0f} ms")
        print(f"  {k}x{k} ({1000 * k}x{750 * k}), {tiles} tiles:  {cells['without']}  ->  "
              f"{cells['with']}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.eval_big_photos", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="first N valid photos only")
    parser.add_argument("--sizes", default="4032x3024,4624x3468,8160x6120")
    parser.add_argument("--models", type=Path, default=None)
    args = parser.parse_args(argv)

    from training.real_data import load_split
    from vision.recognition.decode import Photo
    from vision.recognition.pipeline import ModelsMissing, TileReader

    try:
        reader = TileReader.load(args.models)
        photos = load_split("valid")[: args.limit]
    except (ModelsMissing, FileNotFoundError) as error:
        print(f"eval_big_photos: {error}", file=sys.stderr)
        return 2
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    labelled = sum(len(p.tiles) for p in photos)
    print(f"{len(photos)} real valid photos, {labelled} labelled tiles, enlarged and read two ways")
    print(f"{'size':<11}{'way':<9}{'found':>7}{'right':>7}{'differ':>8}{'median ms':>11}")
    base_found = base_right = 0
    for photo in photos:
        found, right = _score(reader.read(photo.read()), photo, np.float32([1, 1]))
        base_found, base_right = base_found + found, base_right + right
    print(f"{'original':<11}{'whole':<9}{base_found:>7}{base_right:>7}{'':>8}{'':>11}")
    status = 0
    for width, height in sizes:
        totals = {"whole": [0, 0, []], "reduced": [0, 0, []]}
        differ = 0
        for photo in photos:
            image = photo.read()
            portrait = image.shape[0] > image.shape[1]
            w, h = (height, width) if portrait else (width, height)
            big = cv2.resize(image, (w, h), interpolation=cv2.INTER_CUBIC)
            data = cv2.imencode(".jpg", big, [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes()
            del big
            scale = np.float32([w / image.shape[1], h / image.shape[0]])
            start = time.perf_counter()
            whole = reader.read(Photo.from_bytes(data).image())
            totals["whole"][2].append(time.perf_counter() - start)
            start = time.perf_counter()
            reduced = reader.read_bytes(data)
            totals["reduced"][2].append(time.perf_counter() - start)
            for way, det in (("whole", whole), ("reduced", reduced)):
                found, right = _score(det, photo, scale)
                totals[way][0] += found
                totals[way][1] += right
            differ += _differences(whole, reduced)
        for way, (found, right, times) in totals.items():
            print(f"{width}x{height:<6}{way:<9}{found:>7}{right:>7}"
                  f"{(differ if way == 'reduced' else ''):>8}"
                  f"{1000 * statistics.median(times):>11.0f}", flush=True)
        lost = base_right - totals["reduced"][1]
        status |= lost > 0
        print(f"{'':<11}reduced vs the original photo: {-lost:+d} tiles right "
              f"({'PASS' if lost <= 0 else 'FAIL'}); vs the whole decode: "
              f"{totals['reduced'][1] - totals['whole'][1]:+d}")
    mosaics(args.models, photos)
    return int(status)


if __name__ == "__main__":
    sys.exit(main())

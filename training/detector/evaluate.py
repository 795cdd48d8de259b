"""Detector recall / precision on `valid/` (per name prefix) and latency.

    python -m training.detector.evaluate [--models models/] [--draw out/det_failures]

A detection matches a labelled tile when its centre lies inside the label's polygon;
matching is one-to-one (detections in score order each take the nearest unmatched label
whose polygon holds their centre). Latency: median of `--runs` calls of `.detect()` on a
1000x750 photo and on the same photo scaled to 4032x3024 (models loaded once).
Needs numpy, opencv and onnxruntime only.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

import cv2
import numpy as np

from vision.recognition.detect import TileDetector
from vision.recognition.settings import MODELS_DIR


def match(quads: np.ndarray, scores: np.ndarray, polygons: list[np.ndarray]):
    """-> (matched label index per detection or -1, matched flags per label)."""
    label_used = np.zeros(len(polygons), bool)
    det_match = np.full(len(quads), -1)
    centres = [p.mean(0) for p in polygons]
    for i in np.argsort(-scores, kind="stable"):
        c = quads[i].mean(0)
        best, best_d = -1, np.inf
        for j, poly in enumerate(polygons):
            if label_used[j]:
                continue
            if cv2.pointPolygonTest(poly.astype(np.float32), (float(c[0]), float(c[1])), False) >= 0:
                d = float(np.hypot(*(centres[j] - c)))
                if d < best_d:
                    best, best_d = j, d
        if best >= 0:
            label_used[best] = True
            det_match[i] = best
    return det_match, label_used


def evaluate(detector: TileDetector, photos, long_side=None, threshold=None, draw: Path | None = None):
    per = defaultdict(lambda: [0, 0, 0, 0])  # labels, found, detections, true detections
    perfect = defaultdict(lambda: [0, 0])
    for photo in photos:
        image = photo.read()
        quads, scores = detector.detect(image, long_side=long_side, threshold=threshold)
        polygons = [t.polygon for t in photo.tiles]
        det_match, label_used = match(quads, scores, polygons)
        row = per[photo.prefix]
        row[0] += len(polygons)
        row[1] += int(label_used.sum())
        row[2] += len(quads)
        row[3] += int((det_match >= 0).sum())
        ok = label_used.all() and (det_match >= 0).all()
        perfect[photo.prefix][0] += 1
        perfect[photo.prefix][1] += int(ok)
        if draw is not None and not ok:
            draw.mkdir(parents=True, exist_ok=True)
            vis = image.copy()
            for j, poly in enumerate(polygons):
                colour = (0, 200, 0) if label_used[j] else (0, 0, 255)
                cv2.polylines(vis, [poly.astype(np.int32)], True, colour, 2)
            for i, q in enumerate(quads):
                colour = (255, 160, 0) if det_match[i] >= 0 else (255, 0, 255)
                cv2.polylines(vis, [q.astype(np.int32)], True, colour, 1)
                cv2.circle(vis, tuple(int(v) for v in q[0]), 3, colour, -1)
                cv2.putText(vis, f"{scores[i]:.2f}", tuple(int(v) for v in q.mean(0)),
                            cv2.FONT_HERSHEY_SIMPLEX, 0.4, colour, 1)
            cv2.imwrite(str(draw / f"{photo.key}.png"), vis)
    return dict(per), dict(perfect)


def report(per, perfect):
    lines = [f"{'prefix':<16}{'labels':>7}{'found':>7}{'recall':>9}{'dets':>7}{'precision':>11}{'photos ok':>11}"]
    tot = [0, 0, 0, 0]
    ptot = [0, 0]
    for prefix in sorted(per):
        n, f, d, t = per[prefix]
        tot = [a + b for a, b in zip(tot, per[prefix], strict=True)]
        pn, pk = perfect[prefix]
        ptot = [ptot[0] + pn, ptot[1] + pk]
        lines.append(f"{prefix:<16}{n:>7}{f:>7}{100 * f / max(n, 1):>8.2f}%{d:>7}"
                     f"{100 * t / max(d, 1) if d else 100.0:>10.2f}%{pk:>6}/{pn}")
    n, f, d, t = tot
    lines.append(f"{'all':<16}{n:>7}{f:>7}{100 * f / max(n, 1):>8.2f}%{d:>7}"
                 f"{100 * t / max(d, 1):>10.2f}%{ptot[1]:>6}/{ptot[0]}")
    return "\n".join(lines), (f / max(n, 1), t / max(d, 1))


def latency(detector: TileDetector, image: np.ndarray, runs: int = 15, long_side=None) -> float:
    for _ in range(3):
        detector.detect(image, long_side=long_side)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        detector.detect(image, long_side=long_side)
        times.append(time.perf_counter() - t0)
    return float(np.median(times) * 1000)


def main(argv=None):
    from training.real_data import load_split

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=MODELS_DIR)
    parser.add_argument("--split", default="valid")
    parser.add_argument("--long-side", type=int, nargs="*", default=[None])
    parser.add_argument("--threshold", type=float, nargs="*", default=[None])
    parser.add_argument("--draw", type=Path, default=None)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-latency", action="store_true")
    args = parser.parse_args(argv)
    detector = TileDetector.load(args.models)
    photos = load_split(args.split)
    for long_side in args.long_side:
        for threshold in args.threshold:
            per, perfect = evaluate(detector, photos, long_side, threshold, args.draw)
            text, _ = report(per, perfect)
            print(f"\n{args.split}: long side {long_side or detector.long_side}, "
                  f"threshold {threshold or detector.score_threshold}")
            print(text)
            if not args.no_latency:
                image = next(p for p in photos if (p.width, p.height) == (1000, 750)).read()
                big = cv2.resize(image, (4032, 3024), interpolation=cv2.INTER_LINEAR)
                quads, _ = detector.detect(image, long_side=long_side)
                print(f"latency 1000x750 ({len(quads)} tiles): {latency(detector, image, args.runs, long_side):.1f} ms"
                      f" | 4032x3024: {latency(detector, big, args.runs, long_side):.1f} ms (median of {args.runs})")


if __name__ == "__main__":
    main()

"""How well the shipped models read the held-out real photos (`make eval`).

    python -m bench.eval_vision [--split valid] [--models DIR] [--json OUT] [--confusion PNG]

A detection matches a labelled tile when its centre lies inside the label's polygon; the
matching is one-to-one (maximum matching, nearer centres preferred). Reported overall, per
photo prefix and per class: detection recall and precision, colour+number accuracy of the
matched tiles, and the share of photos read entirely right (every tile found, nothing
extra, every reading right). Targets: recall, precision, accuracy >= 99.5 %, photos
entirely right >= 90 %. Every mistake is listed, so labels can be audited too.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

import cv2
import numpy as np

from training.real_data import oriented_quad
from vision.recognition.rectify import canonical_quad

TARGETS = {"recall": 0.995, "precision": 0.995, "accuracy": 0.995, "photos_right": 0.90}


@dataclass
class PhotoResult:
    key: str
    prefix: str
    labelled: int
    detected: int
    matched: int
    correct: int
    seconds: float
    # (label code, predicted code, probability of the prediction, centre x, y)
    misread: list = field(default_factory=list)
    missed: list = field(default_factory=list)  # (label code, centre x, y)
    extra: list = field(default_factory=list)  # (predicted code, score, centre x, y)
    pairs: list = field(default_factory=list)  # (label code, predicted code)
    # matched quads vs the label's oriented box: (short-side ratio, long-side ratio,
    # long-axis angle error in degrees 0..90, centre offset / short side)
    geometry: list = field(default_factory=list)
    oracle_correct: int = 0  # the classifier alone, on the label boxes of all tiles

    @property
    def right(self) -> bool:
        return self.matched == self.labelled == self.detected == self.correct


def match_centres(centres: np.ndarray, polygons: list[np.ndarray],
                  order: np.ndarray | None = None) -> list[tuple[int, int]]:
    """One-to-one (detection, label) pairs where the detection's centre is inside the label's
    polygon: a maximum matching (augmenting paths), each detection trying nearer labels
    first, detections taken in `order` (e.g. by falling score)."""
    n_det, n_lab = len(centres), len(polygons)
    if n_det == 0 or n_lab == 0:
        return []
    label_centres = np.array([p.mean(axis=0) for p in polygons], np.float32)
    candidates: list[list[int]] = []
    for d in range(n_det):
        point = (float(centres[d][0]), float(centres[d][1]))
        inside = [
            lab for lab in range(n_lab)
            if cv2.pointPolygonTest(polygons[lab].reshape(-1, 1, 2).astype(np.float32), point,
                                    False) >= 0
        ]
        inside.sort(key=lambda lab: float(np.sum((label_centres[lab] - centres[d]) ** 2)))
        candidates.append(inside)
    owner = [-1] * n_lab  # label -> detection

    def augment(d: int, seen: set[int]) -> bool:
        for lab in candidates[d]:
            if lab in seen:
                continue
            seen.add(lab)
            if owner[lab] < 0 or augment(owner[lab], seen):
                owner[lab] = d
                return True
        return False

    for d in (order if order is not None else range(n_det)):
        if candidates[int(d)]:
            augment(int(d), set())
    return [(owner[lab], lab) for lab in range(n_lab) if owner[lab] >= 0]


def _sides(quad: np.ndarray) -> tuple[float, float, float]:
    """(short side, long side, long-axis angle in degrees) of a 4-corner box."""
    e0 = float(np.linalg.norm(quad[1] - quad[0]) + np.linalg.norm(quad[2] - quad[3])) / 2
    e1 = float(np.linalg.norm(quad[2] - quad[1]) + np.linalg.norm(quad[3] - quad[0])) / 2
    axis = (quad[3] + quad[2] - quad[0] - quad[1]) if e1 >= e0 else (
        quad[1] + quad[2] - quad[0] - quad[3])
    return min(e0, e1), max(e0, e1), float(np.degrees(np.arctan2(axis[1], axis[0])))


def quad_geometry(detected: np.ndarray, label_box: np.ndarray) -> tuple[float, float, float, float]:
    ds, dl, da = _sides(detected)
    ls, ll, la = _sides(label_box)
    angle = abs((da - la + 90) % 180 - 90)
    offset = float(np.linalg.norm(detected.mean(axis=0) - label_box.mean(axis=0)))
    return ds / max(ls, 1e-6), dl / max(ll, 1e-6), angle, offset / max(ls, 1e-6)


def evaluate_photo(reader, photo) -> PhotoResult:
    image = photo.read()
    start = time.perf_counter()
    detections = reader.read(image)
    seconds = time.perf_counter() - start
    codes = detections.codes
    centres = detections.centers if len(detections) else np.zeros((0, 2), np.float32)
    order = np.argsort(-detections.detector_scores) if len(detections) else None
    pairs = match_centres(centres, [t.polygon for t in photo.tiles], order)
    result = PhotoResult(photo.key, photo.prefix, len(photo.tiles), len(detections), len(pairs),
                         0, seconds)
    matched_det = set()
    matched_lab = set()
    for d, lab in pairs:
        matched_det.add(d)
        matched_lab.add(lab)
        truth, pred = photo.tiles[lab].code, codes[d]
        result.pairs.append((truth, pred))
        if truth == pred:
            result.correct += 1
        else:
            prob = float(detections.class_probs[d, detections.class_ids[d]])
            cx, cy = (float(v) for v in centres[d])
            result.misread.append((truth, pred, round(prob, 3), round(cx), round(cy)))
    boxes = [oriented_quad(t.polygon) for t in photo.tiles]
    for d, lab in pairs:
        result.geometry.append(tuple(round(v, 4) for v in quad_geometry(detections.corners[d],
                                                                         boxes[lab])))
    classifier = getattr(reader, "classifier", None)
    if classifier is not None and photo.tiles:
        _, probs = classifier.classify(image, np.stack([canonical_quad(b) for b in boxes]))
        labels = getattr(classifier, "labels", reader.labels)
        result.oracle_correct = sum(
            int(labels[i] == t.code) for i, t in zip(probs.argmax(axis=1), photo.tiles,
                                                     strict=True))
    for lab, tile in enumerate(photo.tiles):
        if lab not in matched_lab:
            cx, cy = (float(v) for v in tile.polygon.mean(axis=0))
            result.missed.append((tile.code, round(cx), round(cy)))
    for d in range(len(detections)):
        if d not in matched_det:
            cx, cy = (float(v) for v in centres[d])
            result.extra.append((codes[d], round(float(detections.detector_scores[d]), 3),
                                 round(cx), round(cy)))
    return result


def summarise(results: list[PhotoResult]) -> dict:
    labelled = sum(r.labelled for r in results)
    detected = sum(r.detected for r in results)
    matched = sum(r.matched for r in results)
    correct = sum(r.correct for r in results)
    return {
        "photos": len(results),
        "labelled": labelled,
        "detected": detected,
        "matched": matched,
        "correct": correct,
        "recall": matched / labelled if labelled else None,
        "precision": matched / detected if detected else None,
        "accuracy": correct / matched if matched else None,
        "photos_right": sum(r.right for r in results) / len(results) if results else None,
    }


def meets(summary: dict, name: str) -> bool:
    """Whether an overall number reaches its target (an undefined number does not)."""
    value = summary[name]
    return value is not None and value >= TARGETS[name]


def per_class(results: list[PhotoResult], labels) -> dict[str, dict]:
    table = {code: {"labelled": 0, "found": 0, "correct": 0} for code in labels}

    def row(code):
        return table.setdefault(code, {"labelled": 0, "found": 0, "correct": 0})

    for r in results:
        for truth, pred in r.pairs:
            row(truth)["labelled"] += 1
            row(truth)["found"] += 1
            row(truth)["correct"] += int(truth == pred)
        for truth, *_ in r.missed:
            row(truth)["labelled"] += 1
    for item in table.values():
        item["recall"] = item["found"] / item["labelled"] if item["labelled"] else None
        item["accuracy"] = item["correct"] / item["found"] if item["found"] else None
    return table


def confusion_matrix(results: list[PhotoResult], labels) -> tuple[np.ndarray, list[str]]:
    """Rows: true class (+ 'none' for detections matching no label); columns: reading
    (+ 'missed' for labelled tiles no detection matched)."""
    labels = list(labels)
    index = {code: i for i, code in enumerate(labels)}
    n = len(labels)
    matrix = np.zeros((n + 1, n + 1), np.int64)
    for r in results:
        for truth, pred in r.pairs:
            matrix[index.get(truth, n), index.get(pred, n)] += 1
        for truth, *_ in r.missed:
            matrix[index.get(truth, n), n] += 1
        for pred, *_ in r.extra:
            matrix[n, index.get(pred, n)] += 1
    return matrix, labels


def draw_confusion(matrix: np.ndarray, labels: list[str], title: str) -> np.ndarray:
    """The confusion matrix as a BGR picture: row-normalised shading, counts written in."""
    n = matrix.shape[0]
    names = labels + ["-"]
    cell, margin, top = 18, 46, 60
    size_w = margin + n * cell + 10
    size_h = top + 10 + n * cell + 44
    image = np.full((size_h, size_w, 3), 255, np.uint8)
    font = cv2.FONT_HERSHEY_SIMPLEX
    cv2.putText(image, title, (8, 20), font, 0.5, (0, 0, 0), 1, cv2.LINE_AA)
    cv2.putText(image, "rows: label (- = no label, a false detection)   columns: reading "
                "(- = missed)", (8, 40), font, 0.38, (60, 60, 60), 1, cv2.LINE_AA)
    y0 = top + 10
    x0 = margin
    totals = matrix.sum(axis=1, keepdims=True).astype(np.float64)
    share = np.divide(matrix, np.maximum(totals, 1))
    for i in range(n):
        cv2.putText(image, names[i], (4, y0 + i * cell + 13), font, 0.33, (0, 0, 0), 1,
                    cv2.LINE_AA)
        for j in range(n):
            x, y = x0 + j * cell, y0 + i * cell
            value = matrix[i, j]
            if value:
                if i == j:
                    shade = int(255 - 200 * share[i, j])
                    color = (shade, 255 - (255 - shade) // 3, shade)  # green
                else:
                    shade = int(220 - 180 * min(1.0, share[i, j] * 4))
                    color = (shade, shade, 255)  # red
                cv2.rectangle(image, (x, y), (x + cell - 1, y + cell - 1), color, -1)
                text = str(value) if value < 100 else "99+"
                cv2.putText(image, text, (x + 2, y + 12), font, 0.28, (0, 0, 0), 1, cv2.LINE_AA)
            cv2.rectangle(image, (x, y), (x + cell - 1, y + cell - 1), (225, 225, 225), 1)
    # column names, written vertically
    for j in range(n):
        canvas = np.full((cell, 40, 3), 255, np.uint8)
        cv2.putText(canvas, names[j], (2, 13), font, 0.33, (0, 0, 0), 1, cv2.LINE_AA)
        rotated = cv2.rotate(canvas, cv2.ROTATE_90_COUNTERCLOCKWISE)
        y = y0 + n * cell + 2
        h = min(rotated.shape[0], size_h - y)
        if h > 0:
            image[y : y + h, x0 + j * cell : x0 + (j + 1) * cell] = rotated[:h]
    return image


def geometry_summary(results: list[PhotoResult]) -> dict | None:
    rows = np.array([g for r in results for g in r.geometry], np.float64).reshape(-1, 4)
    if not len(rows):
        return None
    labelled = sum(r.labelled for r in results)
    out = {"tiles": len(rows),
           "oracle_accuracy": sum(r.oracle_correct for r in results) / labelled if labelled else None,
           "angle_over_15deg": float(np.mean(rows[:, 2] > 15))}
    for i, name in enumerate(("short_ratio", "long_ratio", "angle_deg", "centre_offset")):
        out[name] = {q: float(np.percentile(rows[:, i], q)) for q in (10, 50, 90)}
    return out


def stage_report(results: list[PhotoResult]) -> list[str]:
    """Which stage the mistakes come from: the classifier alone on the label boxes, and how
    the detector's quads differ from the label boxes (matched tiles)."""
    g = geometry_summary(results)
    if g is None:
        return []
    lines = ["stages (label boxes = minAreaRect of each label polygon):"]
    if g["oracle_accuracy"] is not None:
        lines.append(f"  classifier alone on label boxes: {_pct(g['oracle_accuracy']).strip()} % "
                     "correct (vs accuracy above on the detector's quads)")

    def q(name, fmt="{:.2f}"):
        v = g[name]
        return f"{fmt.format(v[50])} (p10 {fmt.format(v[10])}, p90 {fmt.format(v[90])})"

    lines.append(f"  detector quads vs label boxes: short side x{q('short_ratio')}, long side "
                 f"x{q('long_ratio')}")
    lines.append(f"    long-axis angle error {q('angle_deg', '{:.1f}')} deg, "
                 f"{100 * g['angle_over_15deg']:.1f} % over 15 deg; centre offset "
                 f"{q('centre_offset')} short sides")
    return lines


def _pct(value) -> str:
    return "   -  " if value is None else f"{100 * value:6.2f}"


def format_report(results: list[PhotoResult], labels, split: str) -> str:
    total = summarise(results)
    lines = [
        f"Tile reading on {split}/ ({total['photos']} photos, {total['labelled']} labelled tiles,"
        f" {total['detected']} detections)",
        "",
        f"{'prefix':<18}{'photos':>7}{'tiles':>7}{'recall%':>9}{'precis%':>9}{'accur%':>9}"
        f"{'right%':>9}",
    ]
    by_prefix = defaultdict(list)
    for r in results:
        by_prefix[r.prefix].append(r)
    rows = [(prefix, summarise(group)) for prefix, group in sorted(by_prefix.items())]
    rows.append(("overall", total))
    for name, s in rows:
        if name == "overall":
            lines.append("-" * 68)
        lines.append(
            f"{name:<18}{s['photos']:>7}{s['labelled']:>7}{_pct(s['recall']):>9}"
            f"{_pct(s['precision']):>9}{_pct(s['accuracy']):>9}{_pct(s['photos_right']):>9}"
        )
    lines.append("")
    lines.append("targets:")
    for name, target in TARGETS.items():
        ok = meets(total, name)
        lines.append(f"  {name:<13} {_pct(total[name])} %  (target >= {100 * target:.1f} %)"
                     f"  {'PASS' if ok else 'FAIL'}")
    lines.append("")
    lines.append("per class (found/labelled, correct/found):")
    table = per_class(results, labels)
    cells = []
    for code in labels:
        row = table[code]
        acc = row["accuracy"]
        cells.append(f"{code:>3} {row['found']:>2}/{row['labelled']:<2} "
                     f"{'  -  ' if acc is None else f'{100 * acc:5.1f}'}%")
    for i in range(0, len(cells), 4):
        lines.append("  " + "   ".join(cells[i : i + 4]))
    lines += [""] + stage_report(results)
    wrong = [r for r in results if not r.right]
    lines.append("")
    lines.append(f"photos not read entirely right: {len(wrong)}")
    for r in wrong:
        parts = [f"{t}->{p} ({q:.2f}) at {x},{y}" for t, p, q, x, y in r.misread]
        parts += [f"missed {t} at {x},{y}" for t, x, y in r.missed]
        parts += [f"extra {p} (score {s:.2f}) at {x},{y}" for p, s, x, y in r.extra]
        lines.append(f"  {r.key}: " + "; ".join(parts))
    seconds = sorted(r.seconds for r in results)
    if seconds:
        lines.append("")
        lines.append(f"read time per photo (decoded image -> tiles): median "
                     f"{1000 * seconds[len(seconds) // 2]:.0f} ms, max {1000 * seconds[-1]:.0f} ms")
    return "\n".join(lines)


def run(models_dir=None, split: str = "valid", limit: int | None = None, progress=True):
    """Evaluate -> (results, labels)."""
    from training.real_data import load_split
    from vision.recognition.pipeline import TileReader

    reader = TileReader.load(models_dir)
    photos = load_split(split)
    if limit:
        photos = photos[:limit]
    results = []
    for i, photo in enumerate(photos, 1):
        results.append(evaluate_photo(reader, photo))
        if progress:
            print(f"\r  evaluating {i}/{len(photos)} {photo.key:<24}", end="", file=sys.stderr,
                  flush=True)
    if progress:
        print(file=sys.stderr)
    return results, reader.labels


def report_dict(results, labels, split) -> dict:
    by_prefix = defaultdict(list)
    for r in results:
        by_prefix[r.prefix].append(r)
    matrix, names = confusion_matrix(results, labels)
    return {
        "split": split,
        "overall": summarise(results),
        "targets": TARGETS,
        "per_prefix": {p: summarise(g) for p, g in sorted(by_prefix.items())},
        "per_class": per_class(results, labels),
        "stages": geometry_summary(results),
        "confusion": {"labels": names + ["-"], "matrix": matrix.tolist()},
        "photos": [{**asdict(r), "right": r.right} for r in results],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.eval_vision", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="valid", choices=("valid", "train"))
    parser.add_argument("--models", type=Path, default=None, help="models folder")
    parser.add_argument("--json", type=Path, metavar="OUT", help="save the numbers as JSON")
    parser.add_argument("--confusion", type=Path, metavar="PNG",
                        help="save the confusion matrix picture")
    parser.add_argument("--limit", type=int, default=None, help="only the first N photos")
    args = parser.parse_args(argv)

    from vision.recognition.pipeline import ModelsMissing

    try:
        results, labels = run(args.models, args.split, args.limit)
    except (ModelsMissing, FileNotFoundError) as error:
        print(f"eval_vision: {error}", file=sys.stderr)
        return 2
    print(format_report(results, labels, args.split))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report_dict(results, labels, args.split), indent=1))
    if args.confusion:
        matrix, names = confusion_matrix(results, labels)
        s = summarise(results)
        title = (f"{args.split}/: {s['labelled']} tiles, recall {_pct(s['recall']).strip()}%, "
                 f"accuracy {_pct(s['accuracy']).strip()}%")
        args.confusion.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(args.confusion), draw_confusion(matrix, names, title))
    return 0


if __name__ == "__main__":
    sys.exit(main())

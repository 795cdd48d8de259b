"""The classifier alone on the real photos: label polygons as quads (no detector).

    python -m training.classifier.evaluate [--models models/] [--split valid]
        [--confusion out/cls_confusion.png] [--mistakes out/cls_mistakes.png]

Prints overall and per-class accuracy, the confused pairs, 6<->9 and colour confusions,
how often the orientation found by the network agrees with the ink rule
(`data.ink_row_centre`), how often a tile fed turned 180 degrees still reads the same,
and the latency of 54 crops. Needs no torch.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from training.real_data import load_split, oriented_quad
from vision.recognition.classify import TileClassifier
from vision.recognition.rectify import canonical_quad, rotate_quad_180
from vision.recognition.settings import MODELS_DIR


def ink_centres(crops):
    from training.classifier.data import ink_row_centre

    return ink_row_centre(crops)


def confusion_png(cm: np.ndarray, labels, path: Path, cell: int = 14) -> None:
    """Row = true, column = predicted; cell shade by row-normalised share, counts off-diagonal."""
    n = len(labels)
    margin = 36
    img = np.full((margin + n * cell + 4, margin + n * cell + 4, 3), 255, np.uint8)
    rows = cm.sum(1, keepdims=True).clip(min=1)
    share = cm / rows
    for i in range(n):
        for j in range(n):
            v = share[i, j]
            if v <= 0:
                continue
            x0, y0 = margin + j * cell, margin + i * cell
            color = (255 - 255 * v, 255 - 160 * v, 255 - 40 * v) if i == j else (
                255 - 200 * min(1, v * 3), 255 - 200 * min(1, v * 3), 255)
            cv2.rectangle(img, (x0, y0), (x0 + cell - 1, y0 + cell - 1), color, -1)
            if i != j:
                cv2.putText(img, str(int(cm[i, j])), (x0 + 2, y0 + cell - 3),
                            cv2.FONT_HERSHEY_PLAIN, 0.7, (0, 0, 0), 1)
    for k, label in enumerate(labels):
        cv2.putText(img, label, (2, margin + k * cell + cell - 3), cv2.FONT_HERSHEY_PLAIN, 0.7,
                    (0, 0, 0), 1)
        tmp = np.full((cell, margin, 3), 255, np.uint8)
        cv2.putText(tmp, label, (2, cell - 3), cv2.FONT_HERSHEY_PLAIN, 0.7, (0, 0, 0), 1)
        img[0:margin, margin + k * cell : margin + (k + 1) * cell] = np.rot90(tmp)[:margin]
    for k in range(0, n + 1, 13):
        p = margin + k * cell
        cv2.line(img, (margin, p), (margin + n * cell, p), (120, 120, 120), 1)
        cv2.line(img, (p, margin), (p, margin + n * cell), (120, 120, 120), 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), img)


def evaluate(models_dir: Path = MODELS_DIR, split: str = "valid", confusion: Path | None = None,
             mistakes: Path | None = None, log=print, jitter: float = 0.0, seed: int = 0) -> dict:
    """`jitter` > 0 moves each label quad like a detector's error would (see
    `training.classifier.data.jitter_quads`; 1.0 = the training strength)."""
    clf = TileClassifier.load(models_dir)
    labels = clf.labels
    index = {c: i for i, c in enumerate(labels)}
    truth, pred, conf, turned, turned_back, cents, where, crops_all = [], [], [], [], [], [], [], []
    pred_turned = []
    rng = np.random.default_rng(seed)
    for photo in load_split(split):
        if not photo.tiles:
            continue
        image = photo.read()
        quads = np.stack([canonical_quad(oriented_quad(t.polygon)) for t in photo.tiles])
        if jitter > 0:
            from training.classifier.data import jitter_quads

            quads = jitter_quads(rng, quads, jitter)
        crops = clf.crops(image, quads)
        probs, p_turn = clf.predict_crops(crops)
        probs_b, p_turn_b = clf.predict_crops(clf.crops(image, rotate_quad_180(quads)))
        for i, t in enumerate(photo.tiles):
            truth.append(index[t.code])
            pred.append(int(probs[i].argmax()))
            conf.append(float(probs[i].max()))
            turned.append(float(p_turn[i]))
            pred_turned.append(int(probs_b[i].argmax()))
            turned_back.append(float(p_turn_b[i]))
            where.append((photo.key, i))
        cents.append(ink_centres(crops))
        crops_all.append(crops)
    truth, pred = np.array(truth), np.array(pred)
    turned, turned_back = np.array(turned), np.array(turned_back)
    cents = np.concatenate(cents)
    crops_all = np.concatenate(crops_all)
    n = len(truth)
    ok = truth == pred
    lines = [f"classifier on {split}/ (label polygons as quads, jitter {jitter}): {n} tiles, "
             f"accuracy {ok.mean() * 100:.2f} % ({(~ok).sum()} wrong)"]
    same_turned = np.array(pred_turned) == pred
    lines.append(f"fed turned 180 degrees: same reading {same_turned.mean() * 100:.2f} %, "
                 f"orientation flips consistently {((turned > 0.5) != (turned_back > 0.5)).mean() * 100:.2f} %")
    rule = cents > 0.5
    lines.append(f"orientation: network vs ink rule agree on {((turned > 0.5) == rule).mean() * 100:.2f} %")
    color_err = sum(1 for t, p in zip(truth, pred, strict=True) if t != p and labels[t] != "J"
                    and labels[p] != "J" and labels[t][1:] == labels[p][1:])
    six_nine = sum(1 for t, p in zip(truth, pred, strict=True)
                   if {labels[t][1:], labels[p][1:]} == {"6", "9"} and labels[t][0] == labels[p][0])
    lines.append(f"colour-only errors {color_err}, 6<->9 errors {six_nine}")
    pairs = Counter((labels[t], labels[p]) for t, p in zip(truth, pred, strict=True) if t != p)
    if pairs:
        lines.append("confused (true -> read: count): " + ", ".join(
            f"{a}->{b}: {c}" for (a, b), c in pairs.most_common(20)))
    per = []
    for k, label in enumerate(labels):
        sel = truth == k
        if sel.any():
            per.append(f"{label} {ok[sel].mean() * 100:.0f}%({sel.sum()})")
    lines.append("per class: " + " ".join(per))
    wrong = np.nonzero(~ok)[0]
    if len(wrong):
        lines.append("wrong tiles: " + ", ".join(
            f"{where[i][0]}#{where[i][1]} {labels[truth[i]]}->{labels[pred[i]]} ({conf[i]:.2f})"
            for i in wrong[:40]))
    # latency: 54 crops, batch, models loaded
    photo = next(p for p in load_split(split) if len(p.tiles) >= 20)
    image = photo.read()
    quads = np.stack([canonical_quad(oriented_quad(t.polygon)) for t in photo.tiles])
    quads = np.concatenate([quads] * (54 // len(quads) + 1))[:54]
    times = []
    for _ in range(15):
        t0 = time.perf_counter()
        clf.classify(image, quads)
        times.append(time.perf_counter() - t0)
    lines.append(f"latency: 54 tiles (rectify + network) median {np.median(times) * 1000:.1f} ms")
    cm = np.zeros((len(labels), len(labels)), np.int64)
    np.add.at(cm, (truth, pred), 1)
    if confusion:
        confusion_png(cm, labels, confusion)
        lines.append(f"confusion matrix: {confusion}")
    if mistakes is not None and len(wrong):
        tiles = []
        for i in wrong[:60]:
            c = cv2.resize(crops_all[i], (64, 88), interpolation=cv2.INTER_NEAREST)
            c = cv2.copyMakeBorder(c, 14, 0, 0, 0, cv2.BORDER_CONSTANT, value=(255, 255, 255))
            cv2.putText(c, f"{labels[truth[i]]}>{labels[pred[i]]}", (1, 11),
                        cv2.FONT_HERSHEY_PLAIN, 0.8, (0, 0, 200), 1)
            tiles.append(c)
        while len(tiles) % 10:
            tiles.append(np.full_like(tiles[0], 255))
        sheet = np.vstack([np.hstack(tiles[r : r + 10]) for r in range(0, len(tiles), 10)])
        mistakes.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(mistakes), sheet)
        lines.append(f"mistakes sheet: {mistakes}")
    text = "\n".join(lines)
    log(text)
    return {"accuracy": float(ok.mean()), "n": int(n), "confusion": cm, "text": text,
            "wrong": [(where[i], labels[truth[i]], labels[pred[i]], conf[i]) for i in wrong]}


def evaluate_synthetic(models_dir: Path = MODELS_DIR, scenes: int = 100, log=print) -> dict:
    """Accuracy on rendered scenes (seeds from 10**6: never used by training)."""
    from training.render import render_scene

    clf = TileClassifier.load(models_dir)
    right = total = orient = 0
    pairs: Counter = Counter()
    for k in range(scenes):
        image, labels = render_scene(np.random.default_rng(10**6 + k))
        if not labels:
            continue
        quads = np.stack([q for _, q in labels])
        upright, probs = clf.classify(image, np.stack([canonical_quad(q) for q in quads]))
        for (code, q), u, i in zip(labels, upright, probs.argmax(1), strict=True):
            total += 1
            right += clf.labels[i] == code
            orient += bool(np.abs(u - q).max() < 1.5)
            if clf.labels[i] != code:
                pairs[(code, clf.labels[i])] += 1
    text = (f"classifier on {scenes} rendered scenes: {total} tiles, accuracy "
            f"{100 * right / max(total, 1):.2f} %, orientation right {100 * orient / max(total, 1):.2f} %"
            + ("\nconfused: " + ", ".join(f"{a}->{b}: {c}" for (a, b), c in pairs.most_common(15))
               if pairs else ""))
    log(text)
    return {"accuracy": right / max(total, 1), "n": total, "text": text}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.classifier.evaluate")
    p.add_argument("--models", type=Path, default=MODELS_DIR)
    p.add_argument("--split", default="valid")
    p.add_argument("--confusion", type=Path, default=None)
    p.add_argument("--mistakes", type=Path, default=None)
    p.add_argument("--jitter", type=float, default=0.0,
                   help="move the label quads like detector error (1.0 = training strength)")
    p.add_argument("--synthetic", type=int, default=0,
                   help="instead: N freshly rendered scenes (seeds unused in training)")
    args = p.parse_args(argv)
    if args.synthetic:
        evaluate_synthetic(args.models, args.synthetic)
        return 0
    evaluate(args.models, args.split, args.confusion, args.mistakes, jitter=args.jitter)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

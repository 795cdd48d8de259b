"""Choose the pipeline's "is this a tile at all?" threshold, on train/ photos only.

The detector alone takes some wood knots and stains for tiles, but the classifier then
reads them as no tile in particular: detector score x best class probability separates
them. The threshold is set below the weakest *true* tile on the training photos (times a
safety margin), so it never drops a tile the models read on train/; valid/ stays unseen.

    python -m training.calibrate [--models models] [--margin 0.75]

writes `pipeline.json` beside the models (read by `vision.recognition.pipeline.TileReader.load`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from vision.recognition.pipeline import PIPELINE_SPEC, TileReader
from vision.recognition.settings import MODELS_DIR


def joint_scores(reader: TileReader, photos) -> tuple[np.ndarray, np.ndarray]:
    """Detector score x best class probability of the true tiles and of the false finds."""
    from bench.eval_vision import match_centres

    true, false = [], []
    for photo in photos:
        detections = reader.read(photo.read())
        if not len(detections):
            continue
        joint = detections.detector_scores * detections.class_probs.max(axis=1)
        order = np.argsort(-detections.detector_scores)
        pairs = match_centres(detections.centers, [t.polygon for t in photo.tiles], order)
        matched = {d for d, _ in pairs}
        for d, value in enumerate(joint):
            (true if d in matched else false).append(float(value))
    return np.asarray(true), np.asarray(false)


def calibrate(models_dir: Path, photos, margin: float = 0.75) -> dict:
    reader = TileReader.load(models_dir, reject_below=0.0)
    true, false = joint_scores(reader, photos)
    threshold = margin * float(true.min()) if len(true) else 0.0
    return {
        "reject_below": round(threshold, 4),
        "rule": "drop a detection when detector score x best class probability < reject_below",
        "chosen_on": f"train/ ({len(photos)} photos): {margin} x the weakest true tile",
        "train_true_tiles": int(len(true)),
        "train_false_finds": int(len(false)),
        "train_false_finds_dropped": int((false < threshold).sum()),
        "train_true_tiles_dropped": int((true < threshold).sum()),
    }


def main(argv: list[str] | None = None) -> int:
    from training.real_data import load_split

    parser = argparse.ArgumentParser(prog="python -m training.calibrate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=Path, default=MODELS_DIR)
    parser.add_argument("--margin", type=float, default=0.75)
    args = parser.parse_args(argv)
    spec = calibrate(args.models, load_split("train"), args.margin)
    (args.models / PIPELINE_SPEC).write_text(json.dumps(spec, indent=1) + "\n")
    print(json.dumps(spec, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

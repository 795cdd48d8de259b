"""Choose the pipeline's "is this a tile at all?" threshold, on training data only.

The detector alone takes some wood knots and stains for tiles, but the classifier then
reads them as no tile in particular: detector score x best class probability separates
them. The threshold is set below the weakest *true* tile on the training photos (times a
safety margin), so it never drops a tile the models read on train/; valid/ stays unseen.

train/ has no tile lying flat seen from low, and those score lowest: a pair surer of the
cream tiles raised the threshold by the rule above and dropped them (run C of
docs/decisions/rack-models.md). With `flat_scenes` the threshold is also kept below the
margin x the 5th percentile of the found flat tiles of rendered scenes in training
editions (`training.render3d`, renderer seeds FLAT_SEEDS+, which no bench draws: eval_depth's
are 190,000+). A percentile, not the weakest: one tile half in a shadow at the frame's edge
should not open the gate to every wood knot.

    python -m training.calibrate [--models models] [--margin 0.75] [--flat-scenes 150]

(`training.compose` and `training.train_all` use the same rule and count.)

writes `pipeline.json` beside the models (read by `vision.recognition.pipeline.TileReader.load`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from vision.recognition.pipeline import PIPELINE_SPEC, TileReader
from vision.recognition.settings import MODELS_DIR

FLAT_SEEDS = 7_100_000  # renderer seeds of the flat-tile scenes (training side, no bench's)
FLAT_SCENES = 150  # ~1 labelled flat tile a scene; training.compose's default
FLAT_QUANTILE = 0.05


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


def flat_scenes(count: int, first_seed: int = FLAT_SEEDS) -> list:
    """`count` rendered scenes (stands, close-ups, low phones) in training editions."""
    from training.render3d.scene import render_depth_scene

    return [render_depth_scene(np.random.default_rng(first_seed + i)) for i in range(count)]


def flat_scores(reader: TileReader, scenes) -> np.ndarray:
    """Detector score x best class probability of the found labelled tiles lying flat."""
    from bench.eval_vision import match_centres
    from training.render3d.scene import _labelled

    found = []
    for scene in scenes:
        tiles = [t for t in scene.tiles if _labelled(t)]
        lying = {k for k, t in enumerate(tiles) if not t.standing}
        if not lying:
            continue
        detections = reader.read(scene.image)
        if not len(detections):
            continue
        joint = detections.detector_scores * detections.class_probs.max(axis=1)
        pairs = match_centres(detections.centers, [t.visible for t in tiles],
                              np.argsort(-detections.detector_scores))
        found += [float(joint[d]) for d, k in pairs if k in lying]
    return np.asarray(found)


def calibrate(models_dir: Path, photos, margin: float = 0.75, flat: int | list = 0) -> dict:
    """The threshold for the models in `models_dir` from `photos` (train/) and, when `flat`
    is a count of scenes (or the scenes themselves), the flat tiles of rendered scenes."""
    reader = TileReader.load(models_dir, reject_below=0.0)
    true, false = joint_scores(reader, photos)
    threshold = margin * float(true.min()) if len(true) else 0.0
    chosen_on = f"train/ ({len(photos)} photos): {margin} x the weakest true tile"
    extra: dict = {}
    scenes = flat_scenes(flat) if isinstance(flat, int) else list(flat)
    if scenes:
        lying = flat_scores(reader, scenes)
        if len(lying):
            from_flat = margin * float(np.quantile(lying, FLAT_QUANTILE))
            extra = {"train_threshold": round(threshold, 4),
                     "flat_threshold": round(from_flat, 4)}
            threshold = min(threshold, from_flat)
        chosen_on = (f"train/ ({len(photos)} photos) and the flat tiles of {len(scenes)} "
                     f"rendered scenes in training editions (seeds {FLAT_SEEDS:,}+): {margin} x "
                     f"the lower of the weakest true train/ tile and the "
                     f"{100 * FLAT_QUANTILE:g}th percentile of the found flat tiles")
        extra.update({"flat_tiles_found": int(len(lying)),
                      "flat_tiles_dropped": int((lying < threshold).sum())})
    return {
        "reject_below": round(threshold, 4),
        "rule": "drop a detection when detector score x best class probability < reject_below",
        "chosen_on": chosen_on,
        "train_true_tiles": int(len(true)),
        "train_false_finds": int(len(false)),
        "train_false_finds_dropped": int((false < threshold).sum()),
        "train_true_tiles_dropped": int((true < threshold).sum()),
        **extra,
    }


def main(argv: list[str] | None = None) -> int:
    from training.real_data import load_split

    parser = argparse.ArgumentParser(prog="python -m training.calibrate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=Path, default=MODELS_DIR)
    parser.add_argument("--margin", type=float, default=0.75)
    parser.add_argument("--flat-scenes", type=int, default=FLAT_SCENES, metavar="N",
                        help="also keep it under the flat tiles of N rendered scenes "
                             "(0: train/ alone)")
    args = parser.parse_args(argv)
    if args.flat_scenes < 0:
        parser.error("--flat-scenes must be 0 or more")
    spec = calibrate(args.models, load_split("train"), args.margin, args.flat_scenes)
    (args.models / PIPELINE_SPEC).write_text(json.dumps(spec, indent=1) + "\n")
    print(json.dumps(spec, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

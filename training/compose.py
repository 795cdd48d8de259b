"""Put together a models folder from the detector of one training and the classifier of another.

    python -m training.compose --detector DIR --classifier DIR --out DIR [--note TEXT ...]

A fine-tune improves the two networks unequally: one run's classifier may read the held-out
editions far better while its detector finds a wood knot the shipped one ignores. Each
network keeps its own sidecar (its training settings and command line), the not-a-tile
threshold is calibrated again for the pair (it depends on both; `training.calibrate`, on
train/ and on rendered flat tiles), and the pair is evaluated on valid/ and gets its card,
as `training.train_all` does for a run of its own.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path


def compose(detector_dir: Path, classifier_dir: Path, out: Path, notes: list[str],
            flat_scenes: int | None = None) -> Path:
    from training import calibrate, model_card
    from training.real_data import load_split

    files = [source / f"{name}{suffix}"
             for name, source in (("detector", detector_dir), ("classifier", classifier_dir))
             for suffix in (".onnx", ".json")]
    missing = [str(path) for path in files if not path.is_file()]
    if missing:  # checked before anything is copied: a half-made folder must not look whole
        raise FileNotFoundError("no " + ", no ".join(missing))
    out.mkdir(parents=True, exist_ok=True)
    for path in files:
        if path.resolve() != (out / path.name).resolve():
            shutil.copyfile(path, out / path.name)
    flat = calibrate.FLAT_SCENES if flat_scenes is None else flat_scenes
    spec = calibrate.calibrate(out, load_split("train"), flat=flat)
    (out / calibrate.PIPELINE_SPEC).write_text(json.dumps(spec, indent=1) + "\n")
    print(f"reject_below {spec['reject_below']} (train/: drops {spec['train_false_finds_dropped']}"
          f" of {spec['train_false_finds']} false finds, {spec['train_true_tiles_dropped']} true"
          " tiles" + (f"; {spec['flat_tiles_dropped']} of {spec['flat_tiles_found']} found flat"
                      " tiles of the renders" if "flat_tiles_found" in spec else "") + ")")
    report = model_card.evaluate(out, out / "confusion.png")
    print(report.pop("text"))
    command = (f"python -m training.compose --detector {detector_dir} --classifier "
               f"{classifier_dir} --out {out}")
    return model_card.write_card(out, report, command=command, wall_minutes=None, notes=notes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.compose", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--detector", type=Path, required=True, help="folder with detector.onnx")
    parser.add_argument("--classifier", type=Path, required=True,
                        help="folder with classifier.onnx")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--note", action="append", default=[],
                        help="a line for the card's notes (where each network came from, why)")
    parser.add_argument("--flat-scenes", type=int, default=None, metavar="N",
                        help="rendered scenes whose flat tiles the threshold also keeps "
                             "(default: training.calibrate.FLAT_SCENES; 0: train/ alone)")
    args = parser.parse_args(argv)
    if args.flat_scenes is not None and args.flat_scenes < 0:
        parser.error("--flat-scenes must be 0 or more")
    try:
        card = compose(args.detector, args.classifier, args.out, args.note, args.flat_scenes)
    except FileNotFoundError as error:
        print(f"compose: {error}", file=sys.stderr)
        return 2
    print(f"card: {card}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

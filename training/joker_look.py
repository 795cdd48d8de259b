"""Rebuild the joker look (`models/joker_look.onnx` + `.json`) from a shipped classifier.

    python -m training.joker_look [--init models/classifier.onnx] [--out models]
                                  [--work out/joker_look_work] [--minutes 60] [--seed 61]

(`make train` runs it after `training.train_all`; `make train-joker-look` alone.) The joker
look is the shipped classifier fine-tuned once more with random joker pictures among the
rendered scenes (`models/joker_look.md`; why, and what else was tried:
docs/decisions/joker-faces.md, "A second opinion"). This runs
`training.classifier.train` with that card's recipe (`RECIPE`) into `--work`, then writes
its network as `--out/joker_look.onnx` and its sidecar as `joker_look.json`: the
trainer's `classifier.json` with the file's own SHA-256 and a `role` line saying what
the second classifier is for. About 20 minutes with one thread on a 2-core machine
(16,000 steps).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

# The options of Run R in docs/decisions/joker-faces.md, as models/joker_look.md gives them
# (the init, out, seed, steps and minutes come from the command line).
RECIPE = ("--editions", "0.7", "--real-share", "0.5", "--synthetic", "40000",
          "--data-share", "0.3", "--lr", "4e-4", "--not-tiles", "0.08", "--depth", "0.3",
          "--jokers", "0.2", "--joker-families", "rosette,mirrored", "--threads", "1")
ROLE = ("joker look: asked only whether a doubtful numbered reading is a joker "
        "(vision.recognition.joker_look)")


def trainer_args(init: Path, work: Path, detector: Path, seed: int, steps: int,
                 minutes: float) -> list[str]:
    """The `training.classifier.train` command line of the recipe."""
    return ["--init-onnx", str(init), *RECIPE, "--detector", str(detector),
            "--steps", str(steps), "--seed", str(seed), "--minutes", f"{minutes:g}",
            "--out", str(work)]


def install(work: Path, out: Path) -> Path:
    """Copy the trainer's `classifier.onnx` from `work` into `out` as `joker_look.onnx`
    and write `joker_look.json` beside it (the trainer's sidecar, its SHA-256 taken
    again, `ROLE` added). Returns the ONNX file's path."""
    onnx, sidecar = work / "classifier.onnx", work / "classifier.json"
    for path in (onnx, sidecar):
        if not path.is_file():
            raise SystemExit(f"training.joker_look: {path} is missing: the training did not "
                             "finish (see its log above)")
    out.mkdir(parents=True, exist_ok=True)
    target = out / "joker_look.onnx"
    shutil.copyfile(onnx, target)
    meta = json.loads(sidecar.read_text())
    meta["sha256"] = hashlib.sha256(target.read_bytes()).hexdigest()
    meta["role"] = ROLE
    (out / "joker_look.json").write_text(json.dumps(meta, indent=1) + "\n")
    return target


def main(argv: list[str] | None = None, train=None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.joker_look", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--init", type=Path, default=Path("models/classifier.onnx"),
                   help="the classifier it is fine-tuned from")
    p.add_argument("--out", type=Path, default=Path("models"))
    p.add_argument("--work", type=Path, default=Path("out/joker_look_work"))
    p.add_argument("--detector", type=Path, default=None,
                   help="the detector whose finds on no tile are the not-a-tile crops "
                        "(default: the folder of --init)")
    p.add_argument("--seed", type=int, default=61)
    p.add_argument("--steps", type=int, default=16000)
    p.add_argument("--minutes", type=float, default=60.0)
    args = p.parse_args(argv)
    if not args.init.is_file():
        p.error(f"--init {args.init} is not a file: train the classifier first (make train)")
    if train is None:
        from training.classifier.train import main as train
    command = trainer_args(args.init, args.work, args.detector or args.init.parent,
                           args.seed, args.steps, args.minutes)
    print("python -m training.classifier.train " + " ".join(command), flush=True)
    code = train(command)
    if code:
        return code
    target = install(args.work, args.out)
    print(f"{target} ({target.stat().st_size} bytes), sha256 "
          f"{hashlib.sha256(target.read_bytes()).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

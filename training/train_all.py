"""Rebuild every model from scratch, evaluate it on `valid/` and write the model card.

    python -m training.train_all [--minutes 55] [--out models] [--seed 0] [--sequential]

(`make train`.) Runs the detector and classifier trainings
(`python -m training.detector.train` and `python -m training.classifier.train`, each with
`--minutes M --out DIR --seed S`) as subprocesses inside one total time budget, shows an
overall progress bar with their progress lines, keeps each trainer's log, then copies the
models into `--out`, evaluates them on `valid/` (`bench.eval_vision`) and writes
`models/README.md` and `models/confusion.png` (`training.model_card`).

`--init-from DIR` fine-tunes instead (`make finetune`): each trainer starts from
`DIR/<model>.onnx` (`training.onnx_init`: the ONNX weights copied into the torch net, batch
norms frozen), usually at a lower `--lr` and with `--editions`, the share of rendered scenes
in other editions and scenes (`training.editions`); the real photos keep their share of
every batch. Write its models somewhere else first (`--out out/finetune`) and copy them into
models/ only when `make eval` on them is no worse.

By default the two trainings run side by side with one thread each (on a 2-core CPU that
uses both cores with no thread contention, and each model gets the whole budget);
`--sequential` runs them one after the other with two threads each, splitting the budget
by `--detector-share`. A few minutes are kept back for export, evaluation and the card.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from vision.recognition.settings import REPO_ROOT

TRAINERS = {
    "detector": "training.detector.train",
    "classifier": "training.classifier.train",
}
MODEL_FILES = ("detector.onnx", "detector.json", "classifier.onnx", "classifier.json")


class Bar:
    """The overall progress line (printed at most every `every` seconds)."""

    def __init__(self, total_s: float, every: float = 30.0):
        self.total_s, self.every = total_s, every
        self.start = time.time()
        self.last = 0.0
        self.lock = threading.Lock()

    def elapsed(self) -> float:
        return time.time() - self.start

    def show(self, stage: str, force: bool = False) -> None:
        now = time.time()
        if not force and now - self.last < self.every:
            return
        self.last = now
        frac = min(1.0, self.elapsed() / self.total_s)
        bar = "#" * int(30 * frac) + "-" * (30 - int(30 * frac))
        self.print(f"train_all [{bar}] {100 * frac:5.1f}% {self.elapsed() / 60:5.1f}/"
                   f"{self.total_s / 60:.0f} min  {stage}")

    def print(self, line: str) -> None:
        with self.lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()


def _accepts(module: str, flag: str) -> bool:
    """Whether a trainer's source defines `flag` (so unknown flags are never passed; read as
    text, since importing a trainer means importing torch)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        return False
    try:
        return f'"{flag}"' in Path(spec.origin).read_text()
    except OSError:
        return False


class Job:
    """One trainer subprocess, its output streamed to a log and (prefixed) to the screen."""

    def __init__(self, name: str, args: list[str], log_path: Path, bar: Bar, limit_s: float):
        self.name, self.bar, self.limit_s = name, bar, limit_s
        self.log_path = log_path
        self.started = time.time()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.log = log_path.open("w")
        self.log.write(" ".join(args) + "\n")
        self.log.flush()
        self.proc = subprocess.Popen(args, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, bufsize=1,
                                     start_new_session=True)
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        for raw in self.proc.stdout:
            for line in raw.replace("\r", "\n").splitlines():
                if not line.strip():
                    continue
                self.log.write(line + "\n")
                self.log.flush()
                self.bar.print(f"  [{self.name}] {line}")

    def poll(self) -> int | None:
        code = self.proc.poll()
        if code is None and time.time() - self.started > self.limit_s:
            self.bar.print(f"  [{self.name}] over its time limit: stopping it")
            self.stop()
            return self.proc.wait()
        return code

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)  # the group this job started
                self.proc.wait(timeout=20)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def finish(self) -> int:
        code = self.proc.wait()
        self.thread.join(timeout=10)
        self.log.close()
        return code


def run_jobs(specs: list[tuple[str, list[str], float]], work: Path, bar: Bar,
             parallel: bool) -> dict[str, int]:
    """Run (name, argv, minutes) jobs; return exit codes. Each may overrun its budget by a
    few minutes (export) before it is stopped."""
    codes: dict[str, int] = {}
    groups = [specs] if parallel else [[s] for s in specs]
    for group in groups:
        jobs = [Job(name, argv, work / f"{name}.log", bar, minutes * 60 + 300)
                for name, argv, minutes in group]
        try:
            while True:
                states = [job.poll() for job in jobs]
                running = [job.name for job, s in zip(jobs, states, strict=True) if s is None]
                bar.show("training " + " + ".join(running) if running else "exported")
                if not running:
                    break
                time.sleep(2)
        except KeyboardInterrupt:
            for job in jobs:
                job.stop()
            raise
        for job in jobs:
            codes[job.name] = job.finish()
    return codes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.train_all", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=55.0, help="total budget (default 55)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "models")
    parser.add_argument("--work", type=Path, default=REPO_ROOT / "out" / "train_all",
                        help="scratch folder for the trainings and their logs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sequential", action="store_true",
                        help="train one model after the other (two threads each)")
    parser.add_argument("--detector-share", type=float, default=0.55,
                        help="with --sequential: the detector's share of the training time")
    parser.add_argument("--detector-minutes", type=float, default=None,
                        help="override the detector's training minutes")
    parser.add_argument("--classifier-minutes", type=float, default=None,
                        help="override the classifier's training minutes")
    parser.add_argument("--reserve", type=float, default=4.0,
                        help="minutes kept back for export, evaluation and the card")
    parser.add_argument("--only", choices=tuple(TRAINERS), default=None,
                        help="retrain one model only (the other is kept from --out)")
    parser.add_argument("--no-eval", action="store_true", help="skip evaluation and card")
    parser.add_argument("--init-from", type=Path, default=None,
                        help="fine-tune: start each model from DIR/<model>.onnx")
    parser.add_argument("--editions", type=float, default=None,
                        help="share of rendered scenes in other editions (training.editions)")
    parser.add_argument("--depth", type=float, default=None,
                        help="share of rendered scenes that are stands with depth (training.render3d)")
    parser.add_argument("--lr", type=float, default=None, help="peak learning rate, both")
    parser.add_argument("--detector-synth", type=float, default=None,
                        help="the detector's share of rendered scenes (default its own 0.35)")
    args = parser.parse_args(argv)

    wall_start = time.time()
    bar = Bar(args.minutes * 60)
    train_minutes = max(1.0, args.minutes - args.reserve)
    work = args.work
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    names = [args.only] if args.only else list(TRAINERS)
    parallel = not args.sequential and len(names) > 1
    specs = []
    for name in names:
        module = TRAINERS[name]
        if parallel:
            minutes = train_minutes
        elif len(names) == 1:
            minutes = train_minutes
        else:
            share = args.detector_share if name == "detector" else 1 - args.detector_share
            minutes = train_minutes * share
        override = getattr(args, f"{name}_minutes")
        if override is not None:
            minutes = min(override, train_minutes)
        argv_ = [sys.executable, "-m", module, "--minutes", f"{minutes:.2f}", "--out", str(work),
                 "--seed", str(args.seed)]
        if _accepts(module, "--threads"):
            argv_ += ["--threads", "1" if parallel else "2"]
        if args.init_from is not None:
            argv_ += ["--init-onnx", str(args.init_from / f"{name}.onnx")]
        if args.editions is not None:
            argv_ += ["--editions", str(args.editions)]
        if args.depth is not None:
            argv_ += ["--depth", str(args.depth)]
        if args.lr is not None:
            argv_ += ["--lr", str(args.lr)]
        if args.detector_synth is not None and name == "detector":
            argv_ += ["--synth", str(args.detector_synth)]
        specs.append((name, argv_, minutes))
        bar.print(f"train_all: {name}: {' '.join(argv_[1:])}")
    bar.print(f"train_all: {'side by side' if parallel else 'one after the other'}, "
              f"{args.minutes:.0f} min in all, logs in {work}")
    codes = run_jobs(specs, work, bar, parallel)
    failed = [name for name, code in codes.items() if code != 0]
    if failed:
        for name in failed:
            bar.print(f"train_all: {name} training failed (exit {codes[name]}); see "
                      f"{work / (name + '.log')}")
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for name in names:
        for suffix in (".onnx", ".json"):
            source = work / f"{name}{suffix}"
            if not source.exists():
                bar.print(f"train_all: {name} training wrote no {source.name}")
                return 1
            tmp = args.out / f".{source.name}.tmp"
            shutil.copyfile(source, tmp)
            tmp.replace(args.out / source.name)
    bar.show("models written to " + str(args.out), force=True)
    from training import calibrate
    from training.real_data import load_split

    bar.print("train_all: calibrating the not-a-tile threshold on train/ and rendered flat "
              "tiles ...")
    spec = calibrate.calibrate(args.out, load_split("train"), flat=calibrate.FLAT_SCENES)
    (args.out / calibrate.PIPELINE_SPEC).write_text(json.dumps(spec, indent=1) + "\n")
    bar.print(f"train_all: reject_below {spec['reject_below']} (train/: drops "
              f"{spec['train_false_finds_dropped']} of {spec['train_false_finds']} false finds, "
              f"{spec['train_true_tiles_dropped']} true tiles)")
    if args.no_eval:
        return 0

    from training import model_card

    bar.print("train_all: evaluating on valid/ ...")
    try:
        report = model_card.evaluate(args.out, args.out / "confusion.png")
    except FileNotFoundError as error:
        bar.print(f"train_all: no evaluation ({error}); card not written")
        return 1
    text = report.pop("text")
    bar.print(text)
    (work / "eval.txt").write_text(text + "\n")
    command = ("make finetune" if args.init_from else "make train") + "  (python -m training.train_all"
    if argv:
        command += " " + " ".join(argv)
    elif len(sys.argv) > 1:
        command += " " + " ".join(sys.argv[1:])
    command += ")"
    wall = (time.time() - wall_start) / 60
    notes = [f"trainings ran {'side by side, one thread each' if parallel else 'one after the other'};"
             f" logs in `{work.relative_to(REPO_ROOT) if work.is_relative_to(REPO_ROOT) else work}`"
             f" (not shipped)", f"seed {args.seed}"]
    card = model_card.write_card(args.out, report, command=command, wall_minutes=wall,
                                 notes=notes)
    bar.show(f"done: {card}", force=True)
    bar.print(f"train_all: wall time {wall:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())

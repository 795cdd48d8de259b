"""`make eval` and `make bench`: accuracy and speed tables of the shipped code and models."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def model_eval_arguments(prog: str, doc: str, argv: list[str] | None) -> argparse.Namespace:
    """The options of an evaluation of the models: `--models DIR`, `--json OUT`."""
    parser = argparse.ArgumentParser(prog=prog, description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=Path, default=None, help="models folder")
    parser.add_argument("--json", type=Path, metavar="OUT", help="save the numbers as JSON")
    return parser.parse_args(argv)


def finish(results: dict, start: float, json_out: Path | None) -> int:
    """The end of an evaluation's run: its time, and its numbers saved as JSON if asked."""
    print(f"  ({time.perf_counter() - start:.0f} s)")
    if json_out:
        json_out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


def run_models_eval(name: str, evaluate, json_out: Path | None) -> int:
    """`evaluate()`'s numbers finished as `finish` does; 2 with a one-line message when the
    models or the photos are missing."""
    from vision.recognition.pipeline import ModelsMissing

    start = time.perf_counter()
    try:
        results = evaluate()
    except (FileNotFoundError, ModelsMissing) as error:
        print(f"{name}: {error}", file=sys.stderr)
        return 2
    return finish(results, start, json_out)

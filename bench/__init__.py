"""`make eval` and `make bench`: accuracy and speed tables of the shipped code and models."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def bench_parser(prog: str, doc: str) -> argparse.ArgumentParser:
    """A bench's command line: its module docstring as the help, laid out as written."""
    return argparse.ArgumentParser(prog=prog, description=doc,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def save_json(results: dict, json_out: Path | None, indent: int = 2) -> None:
    """A bench's numbers written as JSON where `--json OUT` asked for them."""
    if json_out:
        json_out.write_text(json.dumps(results, indent=indent) + "\n")


def model_eval_parser(prog: str, doc: str, count: tuple[str, int, str] | None = None
                      ) -> argparse.ArgumentParser:
    """The options of an evaluation of the models: `--models DIR`, `--json OUT`, and first
    the count it repeats, `count` = (option, default, help), when it has one."""
    parser = bench_parser(prog, doc)
    if count is not None:
        option, default, words = count
        parser.add_argument(option, type=int, default=default, help=words)
    parser.add_argument("--models", type=Path, default=None, help="models folder")
    parser.add_argument("--json", type=Path, metavar="OUT", help="save the numbers as JSON")
    return parser


def model_eval_arguments(prog: str, doc: str, argv: list[str] | None) -> argparse.Namespace:
    """The options of an evaluation of the models: `--models DIR`, `--json OUT`."""
    return model_eval_parser(prog, doc).parse_args(argv)


def counted_eval_arguments(prog: str, doc: str, argv: list[str] | None,
                           count: tuple[str, int, str]) -> argparse.Namespace:
    """`model_eval_parser`'s options parsed; a count under 1 is a usage error (exit 2)."""
    parser = model_eval_parser(prog, doc, count)
    args = parser.parse_args(argv)
    option = count[0]
    if getattr(args, option.lstrip("-").replace("-", "_")) < 1:
        parser.error(f"{option} must be at least 1")
    return args


def has_pillow(name: str, renders: str) -> bool:
    """Whether Pillow is installed; without it, a one-line message that `name` needs it to
    render `renders` (the rendered evaluations draw their photos with it)."""
    try:
        import PIL  # noqa: F401
    except ImportError:
        print(f"{name}: Pillow is needed to render {renders} (pip install -e '.[dev]')",
              file=sys.stderr)
        return False
    return True


def rendered_eval_main(name: str, doc: str, argv: list[str] | None, photos: tuple[int, str],
                       renders: str, evaluate, report) -> int:
    """The main of an evaluation on rendered photos: `--photos N` (`photos` = default, help),
    `--models DIR`, `--json OUT`; 2 with a message where Pillow, which renders them, is
    missing. `evaluate(models, photos)` counts, `report(results, photos)` words it."""
    args = counted_eval_arguments(f"python -m bench.{name}", doc, argv, ("--photos", *photos))
    if not has_pillow(name, renders):
        return 2
    return report_and_finish(lambda: evaluate(args.models, args.photos),
                             lambda results: report(results, args.photos), args.json)


def report_and_finish(evaluate, report, json_out: Path | None) -> int:
    """`evaluate()` timed, its `report(results)` printed, then `finish`ed."""
    start = time.perf_counter()
    results = evaluate()
    print(report(results))
    return finish(results, start, json_out)


def finish(results: dict, start: float, json_out: Path | None) -> int:
    """The end of an evaluation's run: its time, and its numbers saved as JSON if asked."""
    print(f"  ({time.perf_counter() - start:.0f} s)")
    save_json(results, json_out, indent=1)
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

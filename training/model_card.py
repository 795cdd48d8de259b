"""Write `models/README.md`, the model card, from the model files and a `valid/` evaluation.

    python -m training.model_card [--models models/] [--command "make train"]

Evaluates the models in `--models` on `valid/` (via `bench.eval_vision`), draws the
confusion matrix `confusion.png` beside them and writes the card: data (with the CC BY 4.0
credit), synthetic data, architecture, sizes, metrics, the command, wall time, SHA-256 of
every model file. `training.train_all` calls `write_card` at the end of `make train`.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import hashlib
import json
import platform
import sys
from pathlib import Path

import cv2

from vision.recognition.settings import REPO_ROOT

CREDIT = "Rummikub dataset by jonasbuehler / rummikue, Roboflow Universe, CC BY 4.0"
SIZE_LIMIT_MB = 20.0


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def module_doc(relative: str) -> str:
    """The docstring of a repo source file, read without importing it (no torch needed)."""
    path = REPO_ROOT / relative
    if not path.is_file():
        return ""
    try:
        return ast.get_docstring(ast.parse(path.read_text())) or ""
    except SyntaxError:
        return ""


def _first_paragraphs(text: str, n: int = 2) -> str:
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip() and not p.startswith("    ")]
    return "\n\n".join(paragraphs[:n])


def _sidecar(models_dir: Path, stem: str) -> dict:
    path = models_dir / f"{stem}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.2f} %"


def data_summary() -> dict:
    """Counts of the real photos used (train) and held out (valid)."""
    try:
        from training.real_data import load_overrides, load_split

        train, valid = load_split("train"), load_split("valid")
        overrides = load_overrides()
    except (FileNotFoundError, OSError):
        return {}
    return {
        "train_photos": len(train),
        "train_tiles": sum(len(p.tiles) for p in train),
        "valid_photos": len(valid),
        "valid_tiles": sum(len(p.tiles) for p in valid),
        "overrides": len(overrides),
    }


def evaluate(models_dir: Path, confusion_png: Path) -> dict:
    """Run the valid/ evaluation; save the confusion matrix picture; return the report dict."""
    from bench import eval_vision

    results, labels = eval_vision.run(models_dir, "valid")
    report = eval_vision.report_dict(results, labels, "valid")
    report["text"] = eval_vision.format_report(results, labels, "valid")
    matrix, names = eval_vision.confusion_matrix(results, labels)
    s = report["overall"]
    title = (f"valid/: {s['labelled']} tiles, recall {_pct(s['recall'])}, precision "
             f"{_pct(s['precision'])}, accuracy {_pct(s['accuracy'])}")
    cv2.imwrite(str(confusion_png), eval_vision.draw_confusion(matrix, names, title))
    return report


def _model_section(models_dir: Path, stem: str, title: str, net_module: str) -> list[str]:
    onnx = models_dir / f"{stem}.onnx"
    side = _sidecar(models_dir, stem)
    lines = [f"### {title}: `{stem}.onnx`", ""]
    if not onnx.exists():
        return lines + ["(missing)", ""]
    size_mb = onnx.stat().st_size / 1e6
    lines.append(f"- size: {size_mb:.2f} MB; sidecar `{stem}.json` (labels, input spec, "
                 "thresholds, read at load time)")
    training = side.get("training") or {}
    params = training.get("parameters") or side.get("parameters")
    if params:
        lines.append(f"- parameters: {int(params):,}")
    spec = side.get("input")
    if spec:
        lines.append(f"- input: `{json.dumps(spec, separators=(', ', ': '))}`")
    if side.get("thresholds"):
        lines.append(f"- thresholds: `{json.dumps(side['thresholds'])}`")
    if training:
        shown = {k: v for k, v in training.items() if k not in ("parameters",)}
        lines.append(f"- training: `{json.dumps(shown, separators=(', ', ': '))}`")
    doc = _first_paragraphs(module_doc(net_module), 2)
    if doc:
        lines += ["", doc]
    lines.append("")
    return lines


def write_card(models_dir: Path, report: dict, *, command: str, wall_minutes: float | None,
               notes: list[str] | None = None, bench: dict | None = None) -> Path:
    models_dir = Path(models_dir)
    data = data_summary()
    s = report["overall"]
    targets = report.get("targets", {})
    files = sorted(p for p in models_dir.iterdir()
                   if p.is_file() and p.suffix in (".onnx", ".json", ".png")
                   and p.name != "eval.json")
    total_mb = sum(p.stat().st_size for p in models_dir.glob("*.onnx")) / 1e6
    lines = [
        "# Model card: tile detector and tile classifier",
        "",
        "Written by `training/model_card.py` at the end of the command below; do not edit by "
        "hand, rerun it.",
        "",
        f"- produced by: `{command}`"
        + (f" — wall time {wall_minutes:.1f} min" if wall_minutes is not None else ""),
        f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}; machine: "
        f"{platform.machine()}, Python {platform.python_version()}",
        f"- models together: {total_mb:.2f} MB (limit {SIZE_LIMIT_MB:.0f} MB)",
        "",
        "## Data",
        "",
        f"- Real photos: **{CREDIT}** (Roboflow Universe `rummikue/rummikub-nvypk-8cwem` v1, a "
        "copy of `jonasbuehler/rummikub-nvypk`), read in place from `RUMMIKUB_DATA`, never "
        "copied into the repository. One edition: cream tiles, black/red/blue/orange "
        "numbers, red and black smiley jokers.",
    ]
    if data:
        lines.append(
            f"  - trained on `train/`: {data['train_photos']} photos, {data['train_tiles']} "
            f"labelled tiles ({data['overrides']} label corrections from "
            "`training/label_overrides.csv`)")
        lines.append(
            f"  - evaluated on `valid/`: {data['valid_photos']} photos, {data['valid_tiles']} "
            "tiles, never trained on")
    render_doc = _first_paragraphs(module_doc("training/render.py"), 3)
    lines += ["- Synthetic photos from our own renderer `training/render.py`, generated on the "
              "fly during training:", ""]
    if render_doc:
        lines += ["  " + line if line else "" for line in render_doc.splitlines()]
    det_meta = _sidecar(models_dir, "detector").get("training", {})
    cls_meta = _sidecar(models_dir, "classifier").get("trained", {})
    if det_meta.get("editions_share") or cls_meta.get("editions_share"):
        editions_doc = _first_paragraphs(module_doc("training/editions.py"), 4)
        lines += ["", "- Rendered editions and scenes from `training/editions.py` (share of the "
                  f"rendered scenes: detector {det_meta.get('editions_share', 0)}, classifier "
                  f"{cls_meta.get('editions_share', 0)}):", ""]
        lines += ["  " + line if line else "" for line in editions_doc.splitlines()]
    if det_meta.get("depth_share") or cls_meta.get("depth_share"):
        depth_doc = _first_paragraphs(module_doc("training/render3d/scene.py"), 3)
        lines += ["", "- Rendered stands with depth from `training/render3d/` (share of the "
                  f"rendered scenes: detector {det_meta.get('depth_share', 0)}, classifier "
                  f"{cls_meta.get('depth_share', 0)}; of the rest, the editions' share above):",
                  ""]
        lines += ["  " + line if line else "" for line in depth_doc.splitlines()]
    if cls_meta.get("jokers_share"):
        families = ", ".join(cls_meta.get("joker_families") or ()) or \
            "filled blobs, rosettes, mirrored polygons and the word JOKER"
        lines += ["", "- Random joker pictures from `training/joker_faces.py` (a share "
                  f"{cls_meta['jokers_share']} of the classifier's rendered scenes are sets "
                  f"holding such jokers; {families}, in one or two inks; never the three faces "
                  "`bench.eval_jokers` draws):", ""]
        lines += ["  " + line if line else ""
                  for line in _first_paragraphs(module_doc("training/joker_faces.py"), 1)
                  .splitlines()]
    if cls_meta.get("not_tiles_share"):
        lines += ["", f"- Crops of no tile ({cls_meta.get('not_tile_crops', '?')}, a share "
                  f"{cls_meta['not_tiles_share']} of each batch, a flat target) from "
                  "`training/classifier/not_tiles.py`:", ""]
        lines += ["  " + line if line else ""
                  for line in _first_paragraphs(module_doc("training/classifier/not_tiles.py"),
                                                2).splitlines()]
    if cls_meta.get("squash_share"):
        lines += ["", f"- A share {cls_meta['squash_share']} of the classifier's crops shrunk "
                  "along one axis to 0.3-0.75 and stretched back, as a tile lying flat before a "
                  "low phone."]
    for name, meta in (("detector", det_meta), ("classifier", cls_meta)):
        if meta.get("init"):
            lines += ["", f"- The {name} was fine-tuned from `{meta['init']}` (the models this "
                      "card's previous version describes), batch norms frozen, learning rate "
                      f"{meta.get('lr', 'see sidecar')}."]
    lines += ["", "## Architecture", ""]
    lines += _model_section(models_dir, "detector", "Detector", "training/detector/net.py")
    lines += _model_section(models_dir, "classifier", "Classifier", "training/classifier/net.py")
    lines += [
        "At inference (`vision.recognition.pipeline.TileReader`): decode (EXIF rotation) -> "
        "detector -> each quad warped to an upright crop (`vision.recognition.rectify`, the same "
        "code training uses) -> classifier (colour slot + number or joker, and the 180° turn) -> "
        "`TileDetections`. numpy, OpenCV and onnxruntime only.",
        "",
    ]
    pipeline_spec = _sidecar(models_dir, "pipeline")
    if pipeline_spec:
        lines += [
            f"A detection is dropped as not a tile when detector score x best class probability "
            f"< {pipeline_spec['reject_below']} (`pipeline.json`, chosen by "
            f"`training/calibrate.py` on {pipeline_spec['chosen_on']}; on train/ it drops "
            f"{pipeline_spec['train_false_finds_dropped']} of "
            f"{pipeline_spec['train_false_finds']} false finds and "
            f"{pipeline_spec['train_true_tiles_dropped']} true tiles"
            + (f"; of the renders' {pipeline_spec['flat_tiles_found']} found flat tiles it "
               f"drops {pipeline_spec['flat_tiles_dropped']}"
               if "flat_tiles_found" in pipeline_spec else "") + ").",
            "",
        ]
    lines += [
        "## Metrics on `valid/`",
        "",
        "A detection matches a labelled tile when its centre lies inside the label's polygon "
        "(one-to-one). Accuracy is colour+number (or joker) of the matched tiles. "
        "`python -m bench.eval_vision` (`make eval`) reproduces these numbers.",
        "",
        "| | recall | precision | accuracy | photos entirely right |",
        "|---|---|---|---|---|",
        f"| **overall** ({s['photos']} photos, {s['labelled']} tiles) | {_pct(s['recall'])} | "
        f"{_pct(s['precision'])} | {_pct(s['accuracy'])} | {_pct(s['photos_right'])} |",
    ]
    for prefix, p in report.get("per_prefix", {}).items():
        lines.append(f"| {prefix} ({p['photos']} photos, {p['labelled']} tiles) | "
                     f"{_pct(p['recall'])} | {_pct(p['precision'])} | {_pct(p['accuracy'])} | "
                     f"{_pct(p['photos_right'])} |")
    if targets:
        lines.append(
            f"| target | >= {_pct(targets['recall'])} | >= {_pct(targets['precision'])} | "
            f">= {_pct(targets['accuracy'])} | >= {_pct(targets['photos_right'])} |")
    keys = ("recall", "precision", "accuracy", "photos_right")
    met = [k for k in keys if targets and s[k] is not None and s[k] >= targets[k]]
    missed = [k for k in keys if targets and k not in met]
    lines += ["", f"Targets met: {', '.join(met) or 'none'}; not met: {', '.join(missed) or 'none'}.",
              "", "Confusion matrix (rows: label, columns: reading; `-` = missed / no label):",
              "", "![confusion matrix](confusion.png)", ""]
    per_class = report.get("per_class", {})
    if per_class:
        lines += ["<details><summary>Per class</summary>", "",
                  "| class | labelled | found | correct | accuracy |", "|---|---|---|---|---|"]
        for code, row in per_class.items():
            lines.append(f"| {code} | {row['labelled']} | {row['found']} | {row['correct']} | "
                         f"{_pct(row['accuracy'])} |")
        lines += ["", "</details>", ""]
    wrong = [p for p in report.get("photos", []) if not p.get("right")]
    if wrong:
        lines += ["Photos not read entirely right:", ""]
        for p in wrong:
            parts = [f"{t}→{r}" for t, r, *_ in p["misread"]]
            parts += [f"missed {t}" for t, *_ in p["missed"]]
            parts += [f"extra {r}" for r, *_ in p["extra"]]
            lines.append(f"- {p['key']}: " + ", ".join(parts))
        lines.append("")
    if bench:
        lines += ["## Speed", ""]
        for name, case in bench.get("cases", {}).items():
            st = case["stages_median_ms"]
            lines.append(f"- {name}: median {case['median_ms']:.1f} ms, p90 {case['p90_ms']:.1f} "
                         f"ms (decode {st['decode']:.1f}, detect {st['detect']:.1f}, classify "
                         f"{st['classify']:.1f}) over {case['runs']} runs")
        lines.append("")
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    lines += ["## Files (SHA-256)", "", "| file | bytes | sha256 |", "|---|---|---|"]
    for path in files:
        lines.append(f"| `{path.name}` | {path.stat().st_size} | `{sha256(path)}` |")
    lines.append("")
    card = models_dir / "README.md"
    card.write_text("\n".join(lines))
    return card


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.model_card",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=REPO_ROOT / "models")
    parser.add_argument("--command", default="python -m training.model_card",
                        help="the command that produced the models, written into the card")
    parser.add_argument("--wall-minutes", type=float, default=None)
    args = parser.parse_args(argv)
    report = evaluate(args.models, args.models / "confusion.png")
    print(report.pop("text"))
    card = write_card(args.models, report, command=args.command, wall_minutes=args.wall_minutes)
    print(f"wrote {card}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

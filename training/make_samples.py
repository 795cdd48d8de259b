"""Write the rendered example photos in `sample_images/` with their labels.

    python -m training.make_samples [--out sample_images]

Each `<name>.jpg` (1000x750 or 750x1000, rendered by `training.render`, not a real photo)
comes with `<name>.json`: {"photo", "width", "height", "rendered": true, "scene", "surface",
"tiles": [{"code", "corners"}]}, corners clockwise from the tile's upright top-left (photo
pixels). Deterministic: the same seeds give the same files. Each photo holds no more
copies of a tile than one box has, so scanning it raises no impossible-count warnings.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from training.render import render_scene
from vision.recognition.settings import REPO_ROOT

# name, kind, surface, size, condition on the codes
SAMPLES = (
    ("table_runs_groups", "table", "dark_wood", (1000, 750),
     lambda codes: "J" in codes and len(codes) >= 24),
    ("scatter_light_wood", "scatter", "light_wood", (1000, 750), lambda codes: len(codes) >= 25),
    ("rack_marble", "rack", "marble", (1000, 750), lambda codes: len(codes) >= 14),
    ("white_table", "table", "white", (1000, 750), lambda codes: len(codes) >= 12),
    ("closeup_cloth", "closeup", "cloth", (750, 1000), lambda codes: len(codes) >= 5),
)

README = """# Sample photos (rendered)

These pictures are **synthetic**: `training/render.py` drew them (`python -m
training.make_samples`), they are not photographs. Each `<name>.json` holds the true tiles:
`code` (K black, R red, B blue, O orange, J joker + number) and `corners`, clockwise from the
tile's top-left as its number reads upright, in photo pixels. They serve the README, the
tests and quick `rummikub scan sample_images/*.jpg` runs. Real photos live outside the
repository (`../shared/data`, CC BY 4.0).
"""


def _one_box(codes: list[str]) -> bool:
    """No more copies of a tile than one box holds: two of each, two jokers."""
    from collections import Counter

    return max(Counter(codes).values(), default=0) <= 2


def make(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for k, (name, kind, surface, (w, h), ok) in enumerate(SAMPLES):
        for seed in range(1000 * k, 1000 * k + 200):
            image, labels = render_scene(np.random.default_rng(seed), width=w, height=h,
                                         kind=kind, surface=surface)
            codes = [c for c, _ in labels]
            if ok(codes) and _one_box(codes):
                break
        path = out / f"{name}.jpg"
        cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 85])
        meta = {"photo": path.name, "width": w, "height": h, "rendered": True, "scene": kind,
                "surface": surface, "seed": seed,
                "tiles": [{"code": c, "corners": np.round(q, 1).tolist()} for c, q in labels]}
        (out / f"{name}.json").write_text(json.dumps(meta) + "\n")
        written.append(path)
        print(f"{path}: {len(labels)} tiles (seed {seed}, {path.stat().st_size // 1024} KB)")
    (out / "README.md").write_text(README)
    return written


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.make_samples")
    p.add_argument("--out", type=Path, default=REPO_ROOT / "sample_images")
    make(p.parse_args(argv).out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

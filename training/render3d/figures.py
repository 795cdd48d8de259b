"""The pictures of docs/renders.md: renders with depth beside real photos of valid/.

    python -m training.render3d.figures [out_dir]   # default docs/renders

Writes renders.png (three depth renders in the white Original look: a two-tier stand, a
close-up, a low phone), labels.png (one render with its labels drawn) and, when the real
photos are there (RUMMIKUB_DATA), real.png: downscaled crops of three valid/ photos of
the Roboflow "Rummikub" data set (CC BY 4.0; credit in docs/renders.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np

from training.render3d.scene import draw_depth_labels, original_edition, render_depth_scene

PANEL = (320, 180)
REAL = ("rummy-11", "rummy-18", "rummy-36")


def _row(images) -> np.ndarray:
    return _small(np.hstack([cv2.resize(i, PANEL, interpolation=cv2.INTER_AREA) for i in images]))


def _small(image: np.ndarray) -> np.ndarray:
    """Six bits a channel: the PNG stays well under 300 KB and looks the same."""
    return image & np.uint8(0xFC)


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "docs/renders")
    out.mkdir(parents=True, exist_ok=True)
    scenes = []
    for seed, kind, tiers in ((2, "rack", 2), (5, "closeup", 3), (9, "low", 3)):
        rng = np.random.default_rng(seed)
        scenes.append(render_depth_scene(rng, original_edition(rng), kind=kind, tiers=tiers))
    cv2.imwrite(str(out / "renders.png"), _row([s.image for s in scenes]))
    cv2.imwrite(str(out / "labels.png"), _small(cv2.resize(
        draw_depth_labels(scenes[0]), (640, 360), interpolation=cv2.INTER_AREA)))
    try:
        from training.real_data import load_split

        photos = {p.key: p for p in load_split("valid")}
    except (FileNotFoundError, OSError) as error:
        print(f"no real photos ({error}): real.png not written")
        return 0
    crops = []
    for key in REAL:
        image = photos[key].read()
        h, w = image.shape[:2]
        ch = int(w * PANEL[1] / PANEL[0])
        y0 = max(0, (h - ch) // 2)
        crops.append(image[y0:y0 + ch])
    cv2.imwrite(str(out / "real.png"), _row(crops))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The real photos seen by a low phone: how much the squashed view
(`vision.recognition.squashed_view`) reads back (`make eval`).

    RUMMIKUB_DATA=... python -m bench.eval_low_phone [--models DIR] [--json OUT]

The held-out real `valid/` photos are mostly taken from above. Each is squashed as a phone
lower over the table sees its tiles lying flat: its height shrunk to a share of itself
(were the photo taken straight down, 0.5 is what a phone 30 degrees above the table sees,
0.4 24 degrees, 0.3 17: the sine of the angle), the far edge also narrowed to 0.8 of the near one's width (the perspective of a phone at 40-60 cm).
The labels are squashed with the photo. Each is read with the squashed view and without
it: tiles found, read right, extra finds, and in how many photos the stretched passes
ran. The row "from above (as taken)" says how often they run where they are not needed.
The squashed view's settings were chosen on the real train/ photos squashed to 0.4 and
rendered scenes (`docs/decisions/low-tables.md`), never on these.
"""

from __future__ import annotations

import sys

import cv2
import numpy as np

from bench import model_eval_arguments, run_models_eval
from bench.eval_plane_view import FILL, _pct, _warped_labels, count_tiles

# (name, height share, far edge / near edge width)
SQUASHES = (
    ("from above (as taken)", 1.0, 1.0),
    ("squashed to 0.5", 0.5, 0.8),
    ("squashed to 0.4", 0.4, 0.8),
    ("squashed to 0.3", 0.3, 0.8),
)


def squash(image: np.ndarray, share: float, far: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(the photo squashed into the lower `share` of its own height, its far edge `far` of
    the near one's width, the same size, the rest plain; its 3x3 map from the original)."""
    h, w = image.shape[:2]
    inset, top = (1 - far) / 2 * w, h * (1 - share)
    m = cv2.getPerspectiveTransform(np.float32([[0, 0], [w, 0], [w, h], [0, h]]),
                                    np.float32([[inset, top], [w - inset, top], [w, h], [0, h]]))
    out = cv2.warpPerspective(image, m, (w, h), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_CONSTANT, borderValue=FILL)
    return out, m


def evaluate(models_dir=None, log=print) -> dict:
    from training.real_data import load_split
    from vision.recognition.pipeline import TileReader

    readers = {"without": TileReader.load(models_dir, squashed_view=False),
               "with": TileReader.load(models_dir)}
    photos = [(p, p.read()) for p in load_split("valid")]
    results = {}
    for name, share, far in SQUASHES:
        row = {}
        for mode, reader in readers.items():
            counts = np.zeros(4, int)
            stretched = 0
            for photo, image in photos:
                m = np.eye(3)
                if share < 1.0 or far < 1.0:
                    image, m = squash(image, share, far)
                counts += count_tiles(reader.read(image), _warped_labels(photo, m, image.shape))
                stretched += reader.last_stretched
            tiles, found, right, extra = (int(v) for v in counts)
            row[mode] = {"tiles": tiles, "found": found, "read_right": right, "extra": extra,
                         "stretched": stretched, "photos": len(photos)}
        results[name] = row
        log(format_row(name, row))
    return results


def format_row(name: str, row: dict) -> str:
    cells = [f"{_pct(r['found'], r['tiles'])} {_pct(r['read_right'], r['tiles'])} {r['extra']:3d}"
             for r in row.values()]
    shipped = row["with"]
    return (f"  {name:24s} {shipped['tiles']:5d}  " + "  ".join(cells)
            + f"   {shipped['stretched']:2d}/{shipped['photos']}")


def main(argv: list[str] | None = None) -> int:
    args = model_eval_arguments("python -m bench.eval_low_phone", __doc__, argv)
    print("real valid/ photos squashed as a low phone sees tiles lying flat: tiles found / "
          "read right / extra finds; without and with the squashed view "
          "(`vision.recognition.squashed_view`), and in how many photos it ran")
    print(f"  {'warp':24s} {'tiles':>5s}  {'without':^23s}  {'with squashed view':^23s}"
          "   stretched")
    return run_models_eval("eval_low_phone", lambda: evaluate(args.models), args.json)


if __name__ == "__main__":
    sys.exit(main())

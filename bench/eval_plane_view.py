"""The real photos seen at a lower angle: how much the view from above
(`vision.recognition.plane_view`) reads back (`make eval`).

    RUMMIKUB_DATA=... python -m bench.eval_plane_view [--models DIR] [--json OUT]

The held-out real `valid/` photos are mostly taken from above. Each is warped as a camera
tilted further would see it: the photo's far edge narrowed to a share of its near edge's
width (a keystone: 0.6 is a phone held at a moderate angle, 0.3 a player photographing the
table from their seat), some also turned first (a phone held sideways or from another side
of the table). The labels are warped with the photo. Each warped set is read with the
plane view and without it: tiles found, tiles read right (colour + number), extra finds,
and in how many photos the view was made. Then the 8 photos whose tiles lie in sets
(`bench/valid_sets.json`) end to end, as `rummikub scan` judges them: photos whose whole
table state is right (every set grouped right and every tile read right). The stage's settings were chosen looking at
the rows "far edge 0.5" and "far edge 0.3" (and at the held-out rendered editions of
`bench.eval_editions`); the turned rows were first run after they were fixed.
"""

from __future__ import annotations

import json
import sys

import cv2
import numpy as np

from bench import model_eval_arguments, run_models_eval

# The set photos' warps: end to end, grouping and rules included.
SET_WARPS = (("far edge 0.5", 0.5, 0), ("far edge 0.4, turned 30 deg", 0.4, 30),
             ("far edge 0.3", 0.3, 0))
# (name, far edge / near edge width, turn in degrees before the keystone)
WARPS = (
    ("from above (as taken)", 1.0, 0),
    ("far edge 0.6 of the near", 0.6, 0),
    ("far edge 0.5", 0.5, 0),
    ("far edge 0.4, turned 30 deg", 0.4, 30),
    ("far edge 0.4, turned 90 deg", 0.4, 90),
    ("far edge 0.4, turned 180 deg", 0.4, 180),
    ("far edge 0.3", 0.3, 0),
)
FILL = (90, 90, 90)  # beyond the photo's own edge


def warp(image: np.ndarray, far: float, turn: float) -> tuple[np.ndarray, np.ndarray]:
    """(warped image of the same size, its 3x3 map from the original's pixels)."""
    h, w = image.shape[:2]
    rotate = np.vstack([cv2.getRotationMatrix2D((w / 2, h / 2), turn, 1.0), [0, 0, 1]])
    inset = (1 - far) / 2 * w
    keystone = cv2.getPerspectiveTransform(
        np.float32([[0, 0], [w, 0], [w, h], [0, h]]),
        np.float32([[inset, 0], [w - inset, 0], [w, h], [0, h]]))
    m = keystone @ rotate
    out = cv2.warpPerspective(image, m, (w, h), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_CONSTANT, borderValue=FILL)
    return out, m


def _warped_labels(photo, m: np.ndarray, shape, keep_all: bool = False
                   ) -> list[tuple[str, np.ndarray]]:
    """The labels whose centre stays inside the warped photo (all with `keep_all`, which
    keeps the truth's label indices), warped."""
    h, w = shape[:2]
    out = []
    for tile in photo.tiles:
        poly = cv2.perspectiveTransform(tile.polygon.reshape(-1, 1, 2).astype(np.float64), m)
        poly = poly.reshape(-1, 2).astype(np.float32)
        cx, cy = poly.mean(axis=0)
        if keep_all or (0 <= cx < w and 0 <= cy < h):
            out.append((tile.code, poly))
    return out


def _readers(models_dir) -> dict:
    from vision.recognition.pipeline import TileReader

    return {"one pass": TileReader.load(models_dir, plane_view=False, fine_scale=False,
                                          squashed_view=False),
            "finer": TileReader.load(models_dir, plane_view=False, squashed_view=False),
            "shipped": TileReader.load(models_dir)}


def count_tiles(det, labels) -> tuple[int, int, int, int]:
    """(tiles, found, read right, extra finds) of one photo's reading `det` against its
    `labels` [(code, polygon)]."""
    from bench.eval_vision import match_centres

    pairs = (match_centres(det.centers, [q for _c, q in labels],
                           np.argsort(-det.detector_scores)) if len(det) else [])
    right = sum(det.codes[d] == labels[k][0] for d, k in pairs)
    return len(labels), len(pairs), right, len(det) - len(pairs)


def evaluate(models_dir=None, log=print) -> dict:
    from training.real_data import load_split

    readers = _readers(models_dir)
    photos = [(p, p.read()) for p in load_split("valid")]
    results = {}
    for name, far, turn in WARPS:
        row = {}
        for mode, reader in readers.items():
            tiles = found = right = extra = viewed = 0
            for photo, image in photos:
                if far < 1.0 or turn:
                    image, m = warp(image, far, turn)
                else:
                    m = np.eye(3)
                labels = _warped_labels(photo, m, image.shape)
                det = reader.read(image)
                viewed += reader.last_plane_tilt is not None
                counts = count_tiles(det, labels)
                tiles, found, right, extra = (a + b for a, b in zip(
                    (tiles, found, right, extra), counts, strict=True))
            row[mode] = {"tiles": tiles, "found": found, "read_right": right, "extra": extra,
                         "viewed": viewed, "photos": len(photos)}
        results[name] = row
        log(format_row(name, row))
    return results


class _Warped:
    """A `training.real_data` photo seen through a warp: `read()` and `tiles` as the
    original's, for `bench.eval_table`'s matching."""

    class _Tile:
        def __init__(self, code, polygon):
            self.code, self.polygon = code, polygon

    def __init__(self, photo, far: float, turn: float):
        self.image, m = warp(photo.read(), far, turn)
        self.tiles = [self._Tile(code, poly) for code, poly in
                      _warped_labels(photo, m, self.image.shape, keep_all=True)]

    def read(self) -> np.ndarray:
        return self.image


def evaluate_sets(models_dir=None, log=print) -> dict:
    """Whole table states right, of the valid/ set photos, warped, without / with the view."""
    from bench.eval_table import TRUTH_FILE, _mapped, compare, match_to_labels
    from referee import DEFAULT_RULES
    from training.real_data import load_split
    from vision.game.table import judge_table

    truth = json.loads(TRUTH_FILE.read_text())["photos"]
    photos = {p.key: p for p in load_split("valid")}
    readers = _readers(models_dir)
    results = {}
    for name, far, turn in SET_WARPS:
        row = {}
        for mode, reader in readers.items():
            right = 0
            for key, item in truth.items():
                photo = _Warped(photos[key], far, turn)
                det = reader.read(photo.read())
                reading = judge_table(det, DEFAULT_RULES)
                d2l = match_to_labels(reading.detections.centers,
                                      [t.polygon for t in photo.tiles])
                sets, loose = _mapped(reading, d2l)
                _found, grouped = compare(item["sets"], item["loose"], sets, loose)
                codes = reading.detections.codes
                right += grouped and len(d2l) == len(det) == len(photo.tiles) and all(
                    codes[d] == photo.tiles[k].code for d, k in d2l.items())
            row[mode] = {"right": right, "photos": len(truth)}
        results[name] = row
        log(f"  {name:30s}   " + "   ".join(f"{row[m]['right']}/{len(truth)}" for m in row))
    return results


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:6.2f} %" if b else "     -  "


def format_cells(name: str, row: dict) -> str:
    """The row's name, its tiles, then found / read right / extra finds of each reader."""
    cells = [f"{_pct(r['found'], r['tiles'])} {_pct(r['read_right'], r['tiles'])} {r['extra']:3d}"
             for r in row.values()]
    return f"  {name:30s} {row['shipped']['tiles']:5d}  " + "  ".join(cells)


def format_row(name: str, row: dict) -> str:
    shipped = row["shipped"]
    return format_cells(name, row) + f"   {shipped['viewed']:2d}/{shipped['photos']}"


def main(argv: list[str] | None = None) -> int:
    args = model_eval_arguments("python -m bench.eval_plane_view", __doc__, argv)
    print("real valid/ photos warped as a lower camera sees them: tiles found / read right / "
          "extra finds; in one pass, with the finer pass (`vision.recognition.fine_scale`), and as "
          "shipped, with the view from above too (`vision.recognition.plane_view`)")
    print(f"  {'warp':30s} {'tiles':>5s}  {'one pass':^23s}  {'+ finer scale':^23s}  "
          f"{'+ view from above':^23s}   viewed")

    def both() -> dict:
        results = evaluate(args.models)
        print("the valid/ photos whose tiles lie in sets, end to end (grouping and rules "
              "included): whole table state right; one pass, + finer scale, + view from above")
        results["sets, whole table state right"] = evaluate_sets(args.models)
        return results

    return run_models_eval("eval_plane_view", both, args.json)


if __name__ == "__main__":
    sys.exit(main())

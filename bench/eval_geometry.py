"""The table plane from the tiles (`vision.recognition.geometry`): how well it undoes an oblique
view, and whether grouping tables or splitting rack rows gets better on it.

`python -m bench.eval_geometry [--tables 100] [--racks 100] [--rendered 40]` films synthetic
tables (`bench/synth_tables.py`, laid flat) and two-row racks
with a pinhole camera (65 degree field of view) looking down at 90 to 25 degrees of
elevation, turned up to +-0.4 rad (tables) or by a fixed yaw (racks), and adds corner
noise like a detector's (2 % of a tile width, tables; 3 %, racks). It prints:

1. Tables: the tiles' shape error (see `vision.recognition.geometry._shape_error`: 0 = every
   tile the same upright rectangle) in the photo and on the estimated plane, and sets grouped
   exactly right by `vision.game.layout.group_lines` on the photo and on the plane.
2. Racks: rows split right by `vision.game.rack.rows_of` on the photo and on the plane, with the
   tiles' true outlines (noisy) and with the rotated rectangles a detector draws instead
   (`cv2.minAreaRect` of each outline), from which the plane must be estimated too.
3. With the models (needs Pillow): such tables and two-row racks rendered
   (`bench.synth_tables.render_table`) as seen from 55 and 45 degrees and read by
   `TileReader`: sets grouped right (`judge_table`) and rack rows split right, on the
   photo and on the plane estimated from the detector's boxes.
Sections 1-2 take seconds; section 3 a few minutes.
"""

from __future__ import annotations

import argparse
import math

import cv2
import numpy as np


def pinhole(points: np.ndarray, elevation_deg: float, yaw: float = 0.0,
            size=(1000, 750), fov_deg: float = 65.0) -> np.ndarray:
    """Table-plane points seen by a camera looking down at `elevation_deg` (90 = from
    above), turned `yaw` rad about the table's normal, fitted into a photo of `size`."""
    p = np.asarray(points, np.float64).reshape(-1, 2)
    c = p.mean(axis=0)
    p = (p - c) / np.ptp(p, axis=0).max()
    cy, sy = math.cos(yaw), math.sin(yaw)
    p = p @ np.array([[cy, -sy], [sy, cy]]).T
    xyz = np.column_stack([p, np.zeros(len(p))])
    e = math.radians(elevation_deg)
    cam = 1.3 * np.array([0.0, math.cos(e), math.sin(e)])
    fwd = -cam / np.linalg.norm(cam)
    right = np.array([1.0, 0.0, 0.0])
    up = np.cross(fwd, right)
    xc = (xyz - cam) @ np.stack([right, -up, fwd]).T
    f = size[0] / 2 / math.tan(math.radians(fov_deg) / 2)
    uv = f * xc[:, :2] / xc[:, 2:]
    lo, hi = uv.min(axis=0), uv.max(axis=0)
    k = min(0.9 * size[0] / (hi - lo)[0], 0.9 * size[1] / (hi - lo)[1])
    return ((uv - lo) * k + 0.05 * np.array(size)).reshape(np.shape(points))


def noisy(quads: np.ndarray, rng: np.random.Generator, share: float) -> np.ndarray:
    widths = np.linalg.norm(quads[:, 1] - quads[:, 0], axis=1)
    return quads + rng.normal(0, 1, quads.shape) * (share * widths)[:, None, None]


def as_detector_boxes(quads: np.ndarray) -> np.ndarray:
    """Each outline as the rotated rectangle a detector draws, in the tile's corner order."""
    from vision.game.layout import upright_from_axis
    from vision.recognition.detect import order_quad

    out = []
    for q in quads:
        box = cv2.boxPoints(cv2.minAreaRect(q.astype(np.float32)))
        up = q[0] + q[1] - q[2] - q[3]  # the tile's own up, from its true outline
        out.append(upright_from_axis(order_quad(box), tuple(up)))
    return np.array(out, np.float64)


def rack_outlines(rng: np.random.Generator):
    """Two rows of 7-15 standing tiles on a rack face: (quads on the face, true rows)."""
    from bench.synth_tables import tile_corners

    w = 40.0
    h = w / 0.72
    quads, rows = [], []
    for row in range(2):
        n = int(rng.integers(7, 16))
        ids = []
        for k in range(n):
            quads.append(tile_corners((k * w * 1.02, row * h * 1.1), rng.normal(0, 0.01), w, h))
            ids.append(len(quads) - 1)
        rows.append(ids)
    return np.array(quads), rows


def _dets(quads: np.ndarray):
    from vision.recognition.detections import TileDetections
    from vision.recognition.labels import TILE_CLASSES

    n, c = len(quads), len(TILE_CLASSES)
    return TileDetections(quads.astype(np.float32), np.ones(n, np.float32),
                          np.full((n, c), 1 / c, np.float32), np.zeros(n, np.int64))


def tables(n: int) -> None:
    from bench.synth_tables import synth_table
    from vision.game.layout import group_lines
    from vision.recognition.geometry import ASPECT, TablePlane, _shape_error

    print(f"tables seen by a pinhole camera ({n} per elevation, 2 % corner noise):")
    print("  elevation  tilt   shape error photo -> plane   sets right photo / plane")
    for elevation in (90, 60, 45, 35, 25):
        err_photo, err_plane, tilts = [], [], []
        right_photo = right_plane = total = 0
        for seed in range(n):
            rng = np.random.default_rng(50_000 + seed)
            table = synth_table(rng, oblique=0.0, noise=0.0)
            quads = noisy(pinhole(table.plane_quads, elevation, rng.uniform(-0.4, 0.4)), rng,
                          0.02)
            plane = TablePlane.from_tiles(quads)
            tilts.append(plane.tilt)
            err_photo.append(_shape_error(quads, ASPECT))
            err_plane.append(_shape_error(plane.to_plane(quads), ASPECT))
            truth = {tuple(s) for s in table.sets}
            right_photo += len(truth & {tuple(s) for s in group_lines(quads, plane=False).sets})
            right_plane += len(truth & {tuple(s) for s in group_lines(quads, plane=plane).sets})
            total += len(truth)
        print(f"  {elevation:>5} deg  {np.median(tilts):.2f}   {np.median(err_photo):.3f} -> "
              f"{np.median(err_plane):.3f}                "
              f"{right_photo}/{total} / {right_plane}/{total}")


def racks(n: int) -> None:
    from vision.game.rack import rows_of

    print(f"two-row racks seen by a pinhole camera ({n} per view, 3 % corner noise): rows "
          f"split right by rows_of")
    print("  elevation  yaw     outlines: photo / plane    detector boxes: photo / plane")
    for elevation in (60, 45, 35):
        for yaw in (0.0, 0.3, 0.6):
            counts = [0, 0, 0, 0]
            for seed in range(n):
                rng = np.random.default_rng(60_000 + seed)
                face, rows = rack_outlines(rng)
                quads = noisy(pinhole(face, elevation, yaw), rng, 0.03)
                for k, q in enumerate((quads, as_detector_boxes(quads))):
                    counts[2 * k] += rows_of(_dets(q), plane=False) == rows
                    counts[2 * k + 1] += rows_of(_dets(q), plane=True) == rows
            print(f"  {elevation:>5} deg  {yaw:.1f}     {counts[0]:>3} / {counts[1]:<3}"
                  f"               {counts[2]:>3} / {counts[3]}   (of {n})")


def pinhole_homography(plane_points: np.ndarray, elevation_deg: float, yaw: float = 0.0,
                       size=(1000, 750)) -> np.ndarray:
    """The 3x3 map from the table plane to the photo of `pinhole` (same framing)."""
    pts = np.asarray(plane_points, np.float64).reshape(-1, 2)
    h, _ = cv2.findHomography(pts, pinhole(pts, elevation_deg, yaw, size))
    return h


def _steep_photo(rng, table, elevation, yaw):
    """`table` filmed from `elevation`, rendered; None when the camera would see so much
    of the plane beyond the tiles that the canvas would not fit in memory."""
    from dataclasses import replace

    from bench.synth_tables import _project, jpeg_roundtrip, render_table

    h = pinhole_homography(table.plane_quads, elevation, yaw)
    corners = np.float64([[0, 0], [1000, 0], [1000, 750], [0, 750]])
    back = np.column_stack([corners, np.ones(4)]) @ np.linalg.inv(h).T
    if np.any(back[:, 2] * np.sign(back[:, 2].mean()) <= 0):
        return None, table
    seen = back[:, :2] / back[:, 2:]
    if np.prod(np.ptp(seen, axis=0)) > 4e7:
        return None, table
    table = replace(table, homography=h,
                    quads=_project(table.plane_quads, h).astype(np.float32))
    return jpeg_roundtrip(render_table(rng, table)), table


def rendered(n: int) -> None:
    from bench.eval_table import _mapped, compare, match_to_labels
    from bench.synth_tables import SynthTable, full_box, synth_table
    from referee import DEFAULT_RULES
    from vision.game.layout import group_lines
    from vision.game.rack import rows_of
    from vision.game.table import judge_table
    from vision.recognition.pipeline import TileReader

    reader = TileReader.load()
    print(f"rendered tables and racks seen obliquely, read by the models ({n} per view):")
    print("  view                 sets right photo / plane      whole tables photo / plane")
    for elevation in (55, 45):
        counts = [0, 0, 0, 0, 0]
        for seed in range(n):
            rng = np.random.default_rng(41_000 + 100 * elevation + seed)
            table = synth_table(rng, oblique=0.0, flip_p=0.0, noise=0.0)
            photo, table = _steep_photo(rng, table, elevation, rng.uniform(-0.4, 0.4))
            if photo is None:
                continue
            det = reader.read(photo)
            d2l = match_to_labels(det.centers, list(table.true_quads()))
            for k, plane in enumerate((False, True)):
                layout = group_lines(det.corners, plane=plane)
                reading = judge_table(det, DEFAULT_RULES, suggest=False, layout=layout)
                found, whole = compare(table.sets, table.loose, *_mapped(reading, d2l))
                counts[k] += found
                counts[2 + k] += whole
            counts[4] += len(table.sets)
        print(f"  table, {elevation} deg      {counts[0]}/{counts[4]} / {counts[1]}/{counts[4]}"
              f"                 {counts[2]} / {counts[3]}")
    print("  view                 rack rows right photo / plane (racks with every tile found)")
    box = sorted(full_box().elements())
    for elevation, yaw in ((60, 0.3), (60, 0.5), (45, 0.3), (45, 0.5)):
        right = [0, 0]
        found_all = 0
        for seed in range(n):
            rng = np.random.default_rng(42_000 + seed)
            face, rows = rack_outlines(rng)
            face = face * 1.25  # tiles 50 px wide on the rack face
            codes = [box[int(rng.integers(len(box)))] for _ in range(len(face))]
            rack = SynthTable(codes, face.astype(np.float32), rows, [], 1000, 750, "rows",
                              face.astype(np.float32), np.eye(3))
            photo, rack = _steep_photo(rng, rack, elevation, yaw)
            if photo is None:
                continue
            det = reader.read(photo)
            d2l = match_to_labels(det.centers, list(rack.true_quads()))
            if len(d2l) != len(codes) or len(det) != len(codes):
                continue
            found_all += 1
            for k, on_plane in enumerate((False, True)):
                right[k] += [[d2l[i] for i in row] for row in rows_of(det, on_plane)] == rows
        print(f"  rack, {elevation} deg, yaw {yaw}   {right[0]} / {right[1]}   "
              f"(of {found_all} of {n})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--racks", type=int, default=100)
    parser.add_argument("--rendered", type=int, default=40,
                        help="rendered tables and racks per view read by the models (0: skip)")
    args = parser.parse_args(argv)
    if args.tables:
        tables(args.tables)
    if args.racks:
        racks(args.racks)
    if args.rendered:
        try:
            import PIL  # noqa: F401
        except ImportError:
            print("rendered: skipped (Pillow not installed)")
        else:
            rendered(args.rendered)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

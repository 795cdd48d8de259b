"""Rendered stands with depth in editions the models never saw: found and read right by cell.

    python -m bench.eval_depth [--photos 8] [--models DIR] [--json OUT]

(`make eval`.) `training.render3d` draws a stand of 1, 2 or 3 tiers seen by a phone 30-60 cm
away and 20-45 degrees above it (each higher tier behind and above, the lower part of its
tiles hidden), and a low phone propped on the table (8-20 degrees), in each held-out
edition of `training.editions.HELD_OUT` (training never draws their font + body + ink
combinations). Renderer seeds 190,000+; training draws its scenes from other streams.

A labelled tile is one whose whole number (or joker face) the photo shows, standing or
lying taller than wide (`DepthScene.labels`); its label is the VISIBLE part of its face.
Tiles shown only in part without their number, or lying flat and seen wider than tall,
are neither to find nor false finds.

- found: a labelled tile with a detection whose centre lies inside its visible quad
  (one-to-one, `bench.eval_vision.match_centres`).
- read right: of the labelled tiles, found and read as the tile, without a profile (a
  Rummy green 5 is right as the fourth colour slot, O5).
- false finds: detections on no tile at all; of them on a hard negative: centre on the
  stand's embossed logo, a box's logo or a smiley sticker.
- misread turned: of the tiles found but misread, a 6 read as a 9 or a 9 as a 6 of the same
  colour slot (the crop taken as the tile turned round; these editions print no bar under
  either number).
- by part: the same counts for the labelled tiles lying on the table, standing with at
  least 75 % of the face in sight (the beam's lip hides up to 16 % of every standing
  face), and standing with less (the tier in front hides the rest).

Two readings of each photo, side by side (say which one a number is):

- raw: the photo's tiles as `TileReader.read` gives them, before any rule of the game.
- product: as the product reads the photo. A rack scene through `vision.game.rack.read_rack`
  (a rack all faces one way, copy counts, tiles off the rack left out); "found" there is a
  tile on the stand found AND counted in the rack. A low phone's table through
  `vision.game.table.judge_table` (a set faces one way). For racks also: tiles lying on
  the table left out of the total (not found, or found and named off the rack) against
  counted; false finds counted in the total; photos whose total is right, of those where
  every tile on the stand shows its number (elsewhere the tier in front hides one, and
  no reading can total it).

Targets: >= 99 % found and >= 98 % read right in every cell.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from bench import rendered_eval_main

SEEDS = 190_000
CELLS = {"rack, 1 tier": ("rack", 1), "rack, 2 tiers": ("rack", 2),
         "rack, 3 tiers": ("rack", 3), "low phone": ("low", None)}
TARGETS = {"found": 0.99, "read_right": 0.98}
PARTS = {"lying": "lying on the table", "standing": "standing, >= 75 % in sight",
         "hidden": "standing, < 75 % in sight"}


def _part(tile) -> str:
    if not tile.standing:
        return "lying"
    return "standing" if tile.visible_share >= 0.75 else "hidden"


def _turned_six_nine(truth: str, read: str) -> bool:
    """A 6 read as a 9 or a 9 as a 6 of the same colour slot: the turn is what went wrong."""
    return truth[:1] == read[:1] and {truth[1:], read[1:]} == {"6", "9"}


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:6.2f} %" if b else "     -  "


def score(reader, scenes) -> dict:
    """found / read right / extra / false finds over rendered `scenes` (DepthScene)."""
    from bench.eval_vision import match_centres
    from training.render3d.scene import _labelled
    from vision.recognition.plane_view import points_in_quads

    out = {"photos": len(scenes), "tiles": 0, "found": 0, "read_right": 0, "extra": 0,
           "false_finds": 0, "on_hard_negatives": 0, "number_hidden": 0, "seconds": 0.0,
           "misread_turned": 0, "product_found": 0, "product_read_right": 0,
           "product_misread_turned": 0, "rack_photos": 0, "on_rack": 0, "on_rack_found": 0,
           "on_rack_read_right": 0, "lying_left_out": 0, "lying_counted": 0,
           "false_counted": 0, "total_right": 0, "total_photos": 0,
           "product_tiles": 0,
           **{f"{part}{count}": 0 for part in PARTS for count in ("", "_found", "_read_right")}}
    for scene in scenes:
        labels = scene.labels
        parts = [_part(t) for t in scene.tiles if _labelled(t)]
        t0 = time.perf_counter()
        det = reader.read(scene.image)
        out["seconds"] += time.perf_counter() - t0
        centres = det.centers if len(det) else np.zeros((0, 2), np.float32)
        order = np.argsort(-det.detector_scores) if len(det) else None
        polygons = [q for _c, q in labels]
        pairs = match_centres(centres, polygons, order)
        out["tiles"] += len(labels)
        out["number_hidden"] += sum(1 for t in scene.tiles if t.standing and not t.number_visible)
        out["found"] += len(pairs)
        out["read_right"] += sum(det.codes[d] == labels[k][0] for d, k in pairs)
        out["misread_turned"] += sum(_turned_six_nine(labels[k][0], det.codes[d]) for d, k in pairs)
        for part in parts:
            out[part] += 1
        for d, k in pairs:
            out[f"{parts[k]}_found"] += 1
            out[f"{parts[k]}_read_right"] += int(det.codes[d] == labels[k][0])
        out["extra"] += len(det) - len(pairs)
        unmatched = np.setdiff1d(np.arange(len(det)), [d for d, _k in pairs]).astype(int)
        on_tiles = np.zeros(len(unmatched), bool)
        if len(unmatched):
            quads = [t.quad for t in scene.tiles] + [t.visible for t in scene.tiles]
            if quads:
                on_tiles = points_in_quads(centres[unmatched], np.stack(quads)).any(axis=1)
        _product(scene, det, pairs, parts, unmatched[~on_tiles], out, reader)
        if len(unmatched):
            out["false_finds"] += int((~on_tiles).sum())
            h, w = scene.decoys.shape
            for c in centres[unmatched][~on_tiles]:
                x, y = int(np.clip(c[0], 0, w - 1)), int(np.clip(c[1], 0, h - 1))
                out["on_hard_negatives"] += bool(scene.decoys[max(0, y - 2):y + 3,
                                                              max(0, x - 2):x + 3].any())
    return out


def _product(scene, det, pairs, parts, false_finds, out: dict, reader=None) -> None:
    """The product's reading of one scene counted into `out` (see the module's doc)."""
    from referee import DEFAULT_RULES, Tile, rack_penalty
    from training.render3d.scene import _labelled
    from vision.game.rack import read_rack
    from vision.game.table import judge_table

    labels = scene.labels
    frame = (scene.image.shape[1], scene.image.shape[0])
    if scene.kind != "rack" or not len(det):
        codes = (judge_table(det, DEFAULT_RULES, suggest=False, frame=frame).detections.codes
                 if len(det) else [])
        counted = set(range(len(det)))
    else:
        rack = read_rack(det, DEFAULT_RULES, frame=frame, photo=scene.image, reader=reader)
        codes, counted = rack.detections.codes, {i for row in rack.rows for i in row}
    # a rack's tiles to count are those on the stand; a table's, all of them
    to_count = {k for k, part in enumerate(parts) if scene.kind != "rack" or part != "lying"}
    pairs_in = [(d, k) for d, k in pairs if k in to_count and d in counted]
    out["product_tiles"] += len(to_count)
    out["product_found"] += len(pairs_in)
    out["product_read_right"] += sum(codes[d] == labels[k][0] for d, k in pairs_in)
    out["product_misread_turned"] += sum(_turned_six_nine(labels[k][0], codes[d])
                                         for d, k in pairs_in)
    if scene.kind != "rack":
        return
    out["rack_photos"] += 1
    on_stand = [k for k, part in enumerate(parts) if part != "lying"]
    matched = dict((k, d) for d, k in pairs)
    out["on_rack"] += len(on_stand)
    out["on_rack_found"] += sum(k in matched and matched[k] in counted for k in on_stand)
    out["on_rack_read_right"] += sum(k in matched and matched[k] in counted
                                     and codes[matched[k]] == labels[k][0] for k in on_stand)
    lying = [k for k, part in enumerate(parts) if part == "lying"]
    wrongly = sum(k in matched and matched[k] in counted for k in lying)
    out["lying_counted"] += wrongly
    out["lying_left_out"] += len(lying) - wrongly
    out["false_counted"] += sum(int(d) in counted for d in false_finds)
    # The total is checkable only where the number of every tile on the stand shows.
    if all(_labelled(t) for t in scene.tiles if t.standing):
        truth = rack_penalty([Tile.from_code(labels[k][0]) for k in on_stand], DEFAULT_RULES)
        out["total_photos"] += 1
        out["total_right"] += int(rack.total == truth)


def evaluate(models_dir=None, photos: int = 8, log=print) -> dict:
    from training.editions import HELD_OUT
    from training.render3d.scene import render_depth_scene
    from vision.recognition.pipeline import TileReader

    reader = TileReader.load(models_dir)
    results: dict = {}
    for e_index, (name, edition) in enumerate(HELD_OUT.items()):
        for c_index, (cell, (kind, tiers)) in enumerate(CELLS.items()):
            scenes = [render_depth_scene(np.random.default_rng(
                SEEDS + 1000 * (len(CELLS) * e_index + c_index) + i), edition, kind=kind,
                tiers=tiers) for i in range(photos)]
            results[f"{name} / {cell}"] = score(reader, scenes)
    return results


def report(results: dict, photos: int) -> str:
    lines = [f"rendered stands with depth, held-out editions ({photos} photos a cell, seeds "
             f"{SEEDS:,}+), without a profile: labelled tiles (number shows) found / read right,",
             "  raw = the tile reader alone, product = read_rack (racks) or judge_table (low)",
             f"  {'edition / scene':38s} {'tiles':>5s} {'raw found':>9s} {'raw right':>10s} "
             f"{'prod found':>10s} {'prod right':>10s} "
             f"{'extra':>6s} {'false':>6s} {'on logos':>8s} {'hidden':>6s}"]
    for key, r in results.items():
        lines.append(f"  {key:38s} {r['tiles']:5d} {_pct(r['found'], r['tiles']):>9s} "
                     f"{_pct(r['read_right'], r['tiles']):>10s} "
                     f"{_pct(r.get('product_found', 0), r.get('product_tiles', 0)):>10s} "
                     f"{_pct(r.get('product_read_right', 0), r.get('product_tiles', 0)):>10s} "
                     f"{r['extra']:6d} "
                     f"{r['false_finds']:6d} {r['on_hard_negatives']:8d} {r['number_hidden']:6d}")
    tiles = sum(r["tiles"] for r in results.values())
    found = sum(r["found"] for r in results.values())
    right = sum(r["read_right"] for r in results.values())
    met = [k for k, r in results.items() if r["tiles"]
           and r["found"] >= TARGETS["found"] * r["tiles"]
           and r["read_right"] >= TARGETS["read_right"] * r["tiles"]]
    lines.append(f"  all: {tiles} tiles, found {_pct(found, tiles)}, read right "
                 f"{_pct(right, tiles)}; cells meeting >= 99 % found and >= 98 % read right: "
                 f"{len(met)} of {len(results)}")
    misread = found - right
    turned = sum(r.get("misread_turned", 0) for r in results.values())
    lines.append(f"  raw: misread {misread} of the found tiles; of them a 6 read as a 9 or a 9 "
                 f"as a 6 of the same colour (taken as turned round): {turned}")
    p_tiles, p_found, p_right, p_turned = (
        sum(r.get(f"product_{c}", 0) for r in results.values())
        for c in ("tiles", "found", "read_right", "misread_turned"))
    lines.append(f"  product: {p_tiles} tiles to count (a rack's: on its stand), found and "
                 f"counted {_pct(p_found, p_tiles)}, read right {_pct(p_right, p_tiles)}; "
                 f"misread {p_found - p_right}, of them 6/9 swapped {p_turned}")
    rack = {c: sum(r.get(c, 0) for r in results.values())
            for c in ("rack_photos", "on_rack", "on_rack_found", "on_rack_read_right",
                      "lying_left_out", "lying_counted", "false_counted", "total_right",
                      "total_photos")}
    lying = rack["lying_left_out"] + rack["lying_counted"]
    lines.append(f"  product, rack scenes: {rack['on_rack']} tiles on the stand counted "
                 f"{_pct(rack['on_rack_found'], rack['on_rack'])}, counted and read right "
                 f"{_pct(rack['on_rack_read_right'], rack['on_rack'])}; {lying} lying by: left "
                 f"out {rack['lying_left_out']}, counted {rack['lying_counted']}; false finds "
                 f"counted {rack['false_counted']}; total right "
                 f"{rack['total_right']} of the {rack['total_photos']} photos (of "
                 f"{rack['rack_photos']}) where every stand tile's number shows")
    for part, words in PARTS.items():
        n, f, r = (sum(row[f"{part}{c}"] for row in results.values())
                   for c in ("", "_found", "_read_right"))
        lines.append(f"  {words}: {n} tiles, found {_pct(f, n)}, read right {_pct(r, n)}")
    lines.append("  (hidden: standing tiles whose number the tier in front hides, not counted; "
                 "false: detections on no tile; on logos: of them on a hard negative)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return rendered_eval_main("eval_depth", __doc__, argv, (8, "photos per cell"), "the scenes", evaluate, report)


if __name__ == "__main__":
    sys.exit(main())

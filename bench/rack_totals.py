"""Why a rendered stand's rack total is wrong, photo by photo (issue #19, tuning aid).

    python -m bench.rack_totals [--base 600100] [--photos 24] [--cache DIR] [--list]

Renders `bench.eval_depth`'s rack cells (1-3 tiers in each held-out edition) from renderer
seed `--base` (each cell's seeds base + 1000 x cell + i, as `bench.eval_depth` draws them:
`--base 190000 --photos 8` are its own scenes, held out: tune on others), reads them with
today's models, prints `bench.eval_depth`'s product numbers for them, and, for each photo
where every stand tile's number shows but `read_rack`'s total is wrong, what went wrong:

- missed: a stand tile with no detection;
- named off: a stand tile found but left off the rack (`off_rack`);
- lying counted: a detection on a tile lying on the table counted in the rack;
- extra counted: a second detection on a stand tile counted;
- false counted: a detection on no tile counted;
- misread 6/9, misread: a stand tile counted and read as another tile.

It also counts the photos `vision.game.cover` would refuse as covered, judged as a rack
photo is (`problems(rack=True)`; none has a hand):
`rummikub score` and the server would not total them at all.

`--cache DIR` keeps the scenes and the detector's readings (pickles) so that a change to
`vision.game.rack` can be measured again in seconds.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections import Counter
from pathlib import Path

import numpy as np

CAUSES = ("missed", "named off", "lying counted", "extra counted", "false counted",
          "misread 6/9", "misread")


class CachedReader:
    """A `TileReader` whose `read` and `classify_at` answers are kept per photo."""

    def __init__(self, reader):
        self.reader = reader
        self.reads: dict[int, object] = {}
        self.crops: dict[tuple, tuple] = {}
        self.profile_head = getattr(reader, "profile_head", None)
        self.uncertain_below = getattr(reader, "uncertain_below", 0.0)

    def read(self, image):
        key = id(image)
        if key not in self.reads:
            self.reads[key] = self.reader.read(image)
        return self.reads[key]

    def classify_at(self, image, quads):
        key = (id(image), np.asarray(quads, np.float32).round(2).tobytes())
        if key not in self.crops:
            self.crops[key] = self.reader.classify_at(image, quads)
        return tuple(np.copy(a) if a is not None else None for a in self.crops[key])


def scenes(base: int, photos: int, cache: Path | None):
    """(name, seed, scene) of the rack cells, rendered or from `cache`."""
    from bench.eval_depth import CELLS
    from training.editions import HELD_OUT
    from training.render3d.scene import render_depth_scene

    out = []
    for e_index, (name, edition) in enumerate(HELD_OUT.items()):
        for c_index, (_cell, (kind, tiers)) in enumerate(CELLS.items()):
            if kind != "rack":
                continue
            for i in range(photos):
                seed = base + 1000 * (len(CELLS) * e_index + c_index) + i
                path = cache / f"scene-{seed}.pkl" if cache else None
                if path and path.exists():
                    scene = pickle.loads(path.read_bytes())
                else:
                    scene = render_depth_scene(np.random.default_rng(seed), edition,
                                               kind=kind, tiers=tiers)
                    if path:
                        path.write_bytes(pickle.dumps(scene))
                out.append((name, seed, scene))
    return out


def causes(scene, det, rack) -> Counter:
    """What made `rack`'s total differ from the stand's, counted by `CAUSES`."""
    from bench.eval_depth import _turned_six_nine
    from bench.eval_vision import match_centres
    from training.render3d.scene import _labelled
    from vision.recognition.plane_view import points_in_quads

    labels = scene.labels
    labelled = [t for t in scene.tiles if _labelled(t)]
    counted = {i for row in rack.rows for i in row}
    centres = det.centers if len(det) else np.zeros((0, 2), np.float32)
    pairs = match_centres(centres, [q for _c, q in labels],
                          np.argsort(-det.detector_scores) if len(det) else None)
    matched = {k: d for d, k in pairs}
    out: Counter = Counter()
    codes = rack.detections.codes
    for k, t in enumerate(labelled):
        if not t.standing:
            continue
        if k not in matched:
            out["missed"] += 1
        elif matched[k] not in counted:
            out["named off"] += 1
        elif codes[matched[k]] != t.code:
            out["misread 6/9" if _turned_six_nine(t.code, codes[matched[k]]) else "misread"] += 1
    paired = {d for d, _k in pairs}
    for d in sorted(counted - paired):
        under = [t for t in scene.tiles
                 if points_in_quads(centres[d:d + 1], np.stack([t.quad, t.visible])).any()]
        if not under:
            out["false counted"] += 1
        elif any(not t.standing for t in under):
            out["lying counted"] += 1
        else:
            out["extra counted"] += 1
    for d, k in pairs:
        if d in counted and not labelled[k].standing:
            out["lying counted"] += 1
    return out


def run(base: int, photos: int, cache: Path | None, listing: bool, log=print) -> dict:
    from bench.eval_depth import score
    from referee import DEFAULT_RULES, Tile, rack_penalty
    from training.render3d.scene import _labelled
    from vision.game.rack import read_rack
    from vision.recognition.pipeline import TileReader

    reader = CachedReader(TileReader.load())
    drawn = scenes(base, photos, cache)
    reads_path = cache / f"reads-{base}-{photos}.pkl" if cache else None
    if reads_path and reads_path.exists():
        reader.reads = {id(s.image): d for (_n, _s, s), d in
                        zip(drawn, pickle.loads(reads_path.read_bytes()), strict=True)}
    counts = score(reader, [s for _n, _s, s in drawn])
    if reads_path and not reads_path.exists():
        reads_path.write_bytes(pickle.dumps([reader.reads[id(s.image)] for _n, _s, s in drawn]))
    totals: Counter = Counter()
    photos_by: Counter = Counter()
    wrong = 0
    for name, seed, scene in drawn:
        if not all(_labelled(t) for t in scene.tiles if t.standing):
            continue
        det = reader.read(scene.image)
        frame = (scene.image.shape[1], scene.image.shape[0])
        rack = read_rack(det, DEFAULT_RULES, frame=frame, photo=scene.image, reader=reader)
        truth = rack_penalty([Tile.from_code(t.code) for t in scene.tiles
                              if t.standing and _labelled(t)], DEFAULT_RULES)
        if rack.total == truth:
            continue
        wrong += 1
        why = causes(scene, det, rack)
        totals.update(why)
        photos_by.update(why.keys())
        if len(why) == 1:
            photos_by[f"only {next(iter(why))}"] += 1
        if listing:
            log(f"  {name:18s} seed {seed}: total {rack.total} for {truth}; "
                + ", ".join(f"{c} {n}" for c, n in why.items()))
    log(f"rack scenes from seed {base:,} ({photos} a cell): stand tiles {counts['on_rack']} "
        f"counted {counts['on_rack_found']}, counted and read right "
        f"{counts['on_rack_read_right']}; lying by left out {counts['lying_left_out']}, "
        f"counted {counts['lying_counted']}; false finds counted {counts['false_counted']}; "
        f"totals right {counts['total_right']} of {counts['total_photos']}")
    # `rummikub score` and the server read a rack photo through `read_lone_photo`, which
    # refuses it where something seems to lie over its tiles: none of these has a hand.
    from vision.game import cover

    readings = [(s.image, reader.read(s.image)) for _n, _s, s in drawn]
    refused = sum(bool(cover.check(image, d, rack=True).problems(rack=True))
                  for image, d in readings if len(d))
    counts["refused_covered"] = refused
    log(f"  clean photos refused as covered (a hand?), so not scored at all: {refused} of "
        f"{len(drawn)}")
    log(f"  the {wrong} wrong totals: " + "; ".join(
        f"{c} {totals[c]} tiles in {photos_by[c]} photos (only cause in "
        f"{photos_by['only ' + c]})" for c in CAUSES if totals[c]))
    return {"counts": counts, "tiles": dict(totals), "photos": dict(photos_by)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rack_totals",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=int, default=600_100)
    parser.add_argument("--photos", type=int, default=24)
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--list", action="store_true", help="one line per wrong total")
    args = parser.parse_args(argv)
    if args.cache:
        args.cache.mkdir(parents=True, exist_ok=True)
    run(args.base, args.photos, args.cache, args.list)
    return 0


if __name__ == "__main__":
    sys.exit(main())

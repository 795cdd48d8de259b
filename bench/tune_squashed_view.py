"""The squashed view's tuning data, read without and with it (`docs/decisions/low-tables.md`).

    RUMMIKUB_DATA=... python -m bench.tune_squashed_view [--models DIR] [--json OUT]

Never the evaluation's photos. Rendered stands with depth as `bench.eval_depth` draws
them (held-out editions x {1, 2, 3 tiers, low phone}, 8 each, renderer seeds 600,000+),
racks at an angle and tables as `bench.eval_editions` draws them (20 of each edition,
seeds 570,000+ and 575,000+), and the real train/ photos: as taken (in how many the
stretched passes run), and every third one squashed to 0.4 of its height with the far
edge 0.8 of the near one's (`bench.eval_low_phone.squash`; also to 0.3 and 0.5, added to
choose where the second stretch looks). Tiles found / read right.
"""

from __future__ import annotations

import sys

import numpy as np

from bench import model_eval_arguments, run_models_eval
from bench.eval_depth import CELLS
from bench.eval_plane_view import _pct, _warped_labels, count_tiles

DEPTH_SEEDS = 600_000
RACK_SEEDS, TABLE_SEEDS = 570_000, 575_000


def _depth_scenes():
    from training.editions import HELD_OUT
    from training.render3d.scene import render_depth_scene

    for e_index, edition in enumerate(HELD_OUT.values()):
        for c_index, (kind, tiers) in enumerate(CELLS.values()):
            for i in range(8):
                seed = DEPTH_SEEDS + 1000 * (len(CELLS) * e_index + c_index) + i
                scene = render_depth_scene(np.random.default_rng(seed), edition, kind=kind,
                                           tiers=tiers)
                yield scene.image, scene.labels


def _edition_scenes(kind: str, seeds: int):
    from bench.synth_tables import jpeg_roundtrip
    from training.editions import HELD_OUT, render_edition_scene

    for e_index, edition in enumerate(HELD_OUT.values()):
        for i in range(20):
            image, labels, _ignored = render_edition_scene(
                np.random.default_rng(seeds + 1000 * e_index + i), edition, kind=kind)
            yield jpeg_roundtrip(image), labels


def _squashed_train(share: float = 0.4):
    from bench.eval_low_phone import squash
    from training.real_data import load_split

    for photo in load_split("train")[::3]:
        image, m = squash(photo.read(), share, 0.8)
        yield image, _warped_labels(photo, m, image.shape)


def evaluate(models_dir=None, log=print) -> dict:
    from training.real_data import load_split
    from vision.recognition.pipeline import TileReader

    readers = {"without": TileReader.load(models_dir, squashed_view=False),
               "with": TileReader.load(models_dir)}
    sets = {"depth, seeds 600,000+": list(_depth_scenes()),
            "racks at an angle, 570,000+": list(_edition_scenes("rack_front", RACK_SEEDS)),
            "tables, 575,000+": list(_edition_scenes("table", TABLE_SEEDS)),
            "train/ squashed to 0.4": list(_squashed_train()),
            "train/ squashed to 0.3": list(_squashed_train(0.3)),
            "train/ squashed to 0.5": list(_squashed_train(0.5))}
    results: dict = {}
    for name, scenes in sets.items():
        row = {}
        for mode, reader in readers.items():
            counts = np.zeros(4, int)
            for image, labels in scenes:
                counts += count_tiles(reader.read(image), labels)
            row[mode] = dict(zip(("tiles", "found", "read_right", "extra"),
                                 (int(v) for v in counts), strict=True))
        results[name] = row
        log(f"  {name:30s} {row['with']['tiles']:5d}  " + "  ".join(
            f"{_pct(r['found'], r['tiles'])} {_pct(r['read_right'], r['tiles'])} {r['extra']:3d}"
            for r in row.values()))
    reader = readers["with"]
    taken = load_split("train")
    ran = sum(bool(reader.read(photo.read()) is not None and reader.last_stretched)
              for photo in taken)
    results["train/ as taken: stretched"] = {"photos": len(taken), "stretched": ran}
    log(f"  train/ as taken: the stretched passes ran on {ran} of {len(taken)} photos")
    return results


def main(argv: list[str] | None = None) -> int:
    args = model_eval_arguments("python -m bench.tune_squashed_view", __doc__, argv)
    print("the squashed view's tuning data: tiles found / read right / extra finds, without "
          "and with it")
    print(f"  {'set':30s} {'tiles':>5s}  {'without':^23s}  {'with squashed view':^23s}")
    return run_models_eval("tune_squashed_view", lambda: evaluate(args.models), args.json)


if __name__ == "__main__":
    sys.exit(main())

"""A hand over a rack photo: refused, read with the doubt said, or read silently (issue #19).

    python -m bench.eval_rack_hands [--photos 6] [--cache DIR] [--models DIR] [--json OUT]

`rummikub score`, `round` and the server read a rack photo through
`vision.game.cover.read_rack_photo`: a hand over the stand's tiles refuses it; smooth skin
only beside them is a doubt said beside the total (`DOUBT_WORDS`). This measures both sides
of that gate on rendered stands (`bench.rack_totals`' scenes: 1-3 tiers in the held-out
editions, tiles lying by; `--photos` a cell from seeds 600,100+ and as many from 800,100+):

- clean: each stand as rendered, no hand: refused (target none) / doubt said;
- hands: one painted hand of each of `bench.hands`' six kinds reaching for a tile standing on
  the stand (one of those the clean reading found, drawn at random; seeds 39,000+), counted
  where it covers at least a quarter of a tile found clean (`bench.eval_cover.OVER`):
  refused / read with the doubt / read silently. A hand read silently may hide tiles from
  the total: the number to keep low.

Painted hands are not real ones (docs/decisions/covered-photo.md). `--cache DIR` keeps the
rendered scenes as `bench.rack_totals --cache` does (the same files).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from bench import model_eval_parser, run_models_eval

BASES = (600_100, 800_100)
HAND_SEEDS = 39_000


def _stand_tiles(scene, det) -> np.ndarray:
    """Indices of the detections whose centre lies on a tile standing on the stand."""
    from vision.recognition.plane_view import points_in_quads

    standing = [t.visible for t in scene.tiles if t.standing]
    if not standing or not len(det):
        return np.zeros(0, int)
    return np.nonzero(points_in_quads(det.centers, np.stack(standing)).any(axis=1))[0]


def evaluate(models_dir=None, photos: int = 6, cache: Path | None = None,
             log=print) -> dict:
    from bench.eval_cover import OVER, covered_share, tile_height
    from bench.hands import KINDS, paint
    from bench.rack_totals import scenes
    from vision.game import cover
    from vision.recognition.pipeline import TileReader

    reader = TileReader.load(models_dir)
    clean = {"photos": 0, "refused": 0, "doubt": 0}
    hands = {"over": 0, "refused": 0, "doubt": 0, "silent": 0, "beside": 0}
    per_kind = {k: {"over": 0, "refused": 0, "doubt": 0} for k in KINDS}
    for base in BASES:
        for _name, seed, scene in scenes(base, photos, cache):
            det = reader.read(scene.image)
            if not len(det):
                continue
            c = cover.check(scene.image, det, rack=True)
            clean["photos"] += 1
            clean["refused"] += bool(c.problems(rack=True))
            clean["doubt"] += bool(c.doubts(rack=True))
            stand = _stand_tiles(scene, det)
            if not len(stand):
                continue
            for kind in KINDS:
                rng = np.random.default_rng(HAND_SEEDS + 10 * seed + KINDS.index(kind))
                tile = det.corners[int(stand[rng.integers(len(stand))])]
                hand = paint(scene.image, tile, tile_height(det), kind, rng, det.corners)
                if covered_share(scene.image.shape, det.corners[stand], hand.mask) < OVER:
                    hands["beside"] += 1
                    continue
                seen = reader.read(hand.image)
                c = cover.check(hand.image, seen, rack=True) if len(seen) else None
                refused = c is None or bool(c.problems(rack=True))
                doubt = not refused and bool(c.doubts(rack=True))
                hands["over"] += 1
                hands["refused"] += refused
                hands["doubt"] += doubt
                hands["silent"] += not refused and not doubt
                per_kind[kind]["over"] += 1
                per_kind[kind]["refused"] += refused
                per_kind[kind]["doubt"] += doubt
    log(f"clean rendered stands ({clean['photos']}, {photos} a cell from seeds "
        f"{', '.join(f'{b:,}' for b in BASES)}+): refused {clean['refused']}, read with the "
        f"doubt said {clean['doubt']}")
    log(f"painted hands over stand tiles ({hands['over']}; {hands['beside']} more drawn beside "
        f"them, not counted): refused {hands['refused']}, read with the doubt said "
        f"{hands['doubt']}, read silently {hands['silent']}")
    log("  per kind (refused + doubt of over): " + ", ".join(
        f"{k} {v['refused']}+{v['doubt']}/{v['over']}" for k, v in per_kind.items()))
    return {"clean": clean, "hands": hands, "per_kind": per_kind}


def main(argv: list[str] | None = None) -> int:
    parser = model_eval_parser("python -m bench.eval_rack_hands", __doc__,
                               ("--photos", 6, "stands a cell from each seed range"))
    parser.add_argument("--cache", type=Path, help="keep the rendered scenes here")
    args = parser.parse_args(argv)
    if args.cache:
        args.cache.mkdir(parents=True, exist_ok=True)
    return run_models_eval("eval_rack_hands",
                           lambda: evaluate(args.models, args.photos, args.cache), args.json)


if __name__ == "__main__":
    sys.exit(main())

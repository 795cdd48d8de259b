"""Crops of tiles lying flat on the table in the depth renders, weighted up (`--flat-tiles`).

The crops of no tile (`training.classifier.not_tiles`) teach a flat target, and every
fine-tune with them found fewer of the tiles lying flat before a low phone in
`bench.eval_depth` (docs/decisions/joker-faces.md): such a tile, seen nearly edge on, looks
less like a tile seen from above than like the crops of no tile. With `--depth` those tiles
come in only with the stands' scenes, about 2 of a batch of 128. This pool renders its own
stands-with-depth scenes (`training.render3d`, a random stream of its own, so the other
crops stay as they were) and keeps only the tiles lying on the table that a scene labels
(`DepthScene.labels`: the whole number shows and the tile lies taller than wide in the
photo), cut as the other rendered tiles are (jittered `train_quad`, turned 180 degrees at
random, target `class + 53 * turned`). The trainer draws them as a share of each batch of
their own, taken from the rendered tiles' share.

With `stretch` (`--flat-stretched`) the crops are cut as the squashed view
(`vision.recognition.squashed_view`) sees those tiles: the scene's photo stretched upright
by each of its STRETCHES (`stretched`), the tiles' quads mapped into it (`to_stretched`),
jittered there (where that pass's detector boxes them: a box turned or shifted in the
stretched photo is a sheared one in the photo) and cut from the stretched photo.
`copies` crops of each tile per stretch; the scenes and tiles are the unstretched pool's
(its draws are made all the same; the stretched crops' jitter draws from a stream of its
own).

`valid/`, the held-out editions and `bench.eval_depth`'s seeds are never drawn here.
"""

from __future__ import annotations

import time

import numpy as np

from vision.recognition.rectify import rectify_tiles, rotate_quad_180

KINDS = ("low", "rack")  # the phone low on the table shows the most tiles lying flat


def lying_labels(scene) -> list[tuple[str, np.ndarray]]:
    """(code, training quad) of each labelled tile of a DepthScene that lies on the table."""
    from training.render3d.scene import _labelled

    return [(t.code, t.train_quad) for t in scene.tiles if _labelled(t) and not t.standing]


def stretched_views(image: np.ndarray, quads: np.ndarray):
    """[(photo, quads)]: `image` stretched upright by each of the squashed view's
    STRETCHES (`vision.recognition.squashed_view.stretched`), the tiles at `quads`
    (N, 4, 2) of `image` mapped into it."""
    from vision.recognition.squashed_view import STRETCHES, stretched, to_stretched

    return [(stretched(image, f), to_stretched(quads, f, image.shape[0])) for f in STRETCHES]


def flat_tile_crops(scenes: int, size, seed: int, copies: int = 3, strength: float = 1.0,
                    heavy: float = 0.0, heavy_max: float = 4.0, stretch: bool = False,
                    log=print):
    """(x (N, H, W, 3) uint8, y (N,) int64) crops of the tiles lying flat in `scenes`
    rendered depth scenes, half of them seen by a phone low on the table; with `stretch`
    cut from the photos stretched as the squashed view stretches them
    (`stretched_views`)."""
    from training.classifier.data import CLASS_INDEX, N_CLASSES, jitter_quads
    from training.render3d.scene import render_depth_scene

    rng = np.random.default_rng(seed)
    # stretched: the crops' jitter draws from a stream of its own
    jitter = np.random.default_rng([seed, 1]) if stretch else rng
    t0 = time.perf_counter()
    xs, ys, tiles = [], [], 0
    for k in range(scenes):
        scene = render_depth_scene(rng, kind=KINDS[k % len(KINDS)])
        labels = lying_labels(scene)
        if not labels:
            continue
        tiles += len(labels)
        codes = np.array([CLASS_INDEX[c] for c, _q in labels])
        quads = np.stack([q for _c, q in labels]).astype(np.float32)
        for _ in range(copies):
            q = jitter_quads(rng, quads, strength, heavy, heavy_max)
            down = rng.random(len(q)) < 0.5
            if stretch:
                continue  # drawn all the same: the next scenes are the unstretched pool's
            q = np.where(down[:, None, None], rotate_quad_180(q), q)
            xs.append(rectify_tiles(scene.image, q, size))
            ys.append(codes + N_CLASSES * down)
        for image, at in stretched_views(scene.image, quads) if stretch else ():
            for _ in range(copies):
                q = jitter_quads(jitter, at, strength, heavy, heavy_max)
                down = jitter.random(len(q)) < 0.5
                q = np.where(down[:, None, None], rotate_quad_180(q), q)
                xs.append(rectify_tiles(image, q, size))
                ys.append(codes + N_CLASSES * down)
    if not xs:
        return np.zeros((0, size[1], size[0], 3), np.uint8), np.zeros(0, np.int64)
    x, y = np.concatenate(xs), np.concatenate(ys).astype(np.int64)
    log(f"flat tiles: {scenes} depth scenes, {tiles} tiles lying flat -> {len(x)} crops"
        f"{' (stretched)' if stretch else ''} ({time.perf_counter() - t0:.0f}s)")
    return x, y


def batch_weights(n_real: int, syn_y: np.ndarray, flat: np.ndarray, real_share: float,
                  not_tiles: float, flat_share: float) -> np.ndarray:
    """Each crop's chance to be drawn (real crops first, then the rendered ones `syn_y`):
    `real_share` real, `not_tiles` of no tile (target -1), `flat_share` of the pool above
    (`flat`: a bool per rendered crop), the rest the other rendered tiles. With no pool and
    `flat_share` 0 the numbers are the trainer's before this option, bit for bit."""
    neg = syn_y < 0
    other = ~neg & ~flat
    w_syn = np.full(len(syn_y), (1 - real_share - not_tiles - flat_share)
                    / max(int(other.sum()), 1))
    w_syn[neg] = not_tiles / max(int(neg.sum()), 1)
    if flat.any():
        w_syn[flat] = flat_share / int(flat.sum())
    w = np.concatenate([np.full(n_real, real_share / n_real), w_syn])
    return w / w.sum()

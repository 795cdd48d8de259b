"""Crops of what is not a tile, for the classifier to be unsure of (`--not-tiles`).

The classifier has no "not a tile" class: the reader drops a find when the detector's
score times the classifier's best probability is low (`vision.recognition.pipeline`,
the not-a-tile rule). A classifier taught that any picture on a tile body is a joker
(`training.joker_faces`) grows sure that a wood knot is one too (docs/decisions/
joker-faces.md). So training also shows it crops of no tile with a flat target (the same
probability for all 106 outputs: "outlier exposure"), which keeps its best probability
low there and leaves the rule something to drop.

Where they come from, never a labelled tile nor a tile the labels leave out:
- real `train/` photos: tile-sized quads at random places and angles that overlap no
  label polygon (grown by a fifth of a tile), and the detector's finds at a low threshold
  whose centre lies on no label;
- rendered training-edition scenes (flat and with depth): the detector's finds whose
  centre lies on no tile of the scene at all (labelled or ignored): logos, stickers,
  knots, the stand's beam, the box.
`valid/` and the held-out editions are never read here.
"""

from __future__ import annotations

import time

import cv2
import numpy as np

from vision.recognition.rectify import canonical_quad, rectify_tiles

LOW_THRESHOLD = 0.1  # detector score: finds well under the shipped 0.4 are the hard ones


def _mask(shape, quads, grow: float) -> np.ndarray:
    m = np.zeros(shape[:2], np.uint8)
    for q in quads:
        c = q.mean(0)
        cv2.fillPoly(m, [np.round(c + (q - c) * (1 + grow)).astype(np.int32)], 1)
    return m


def _off_tiles(finds: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The finds whose centre lies outside `mask`."""
    h, w = mask.shape
    keep = []
    for q in finds:
        x, y = np.clip(np.round(q.mean(0)).astype(int), 0, (w - 1, h - 1))
        keep.append(not mask[y, x])
    return finds[np.asarray(keep, bool)] if len(finds) else finds


def _random_quads(rng, shape, mask, side: tuple[float, float], n: int) -> list[np.ndarray]:
    h, w = shape[:2]
    out = []
    for _ in range(n * 8):
        if len(out) == n:
            break
        s = rng.uniform(0.75, 1.3)
        rect = ((rng.uniform(0, w), rng.uniform(0, h)), (side[0] * s, side[1] * s),
                rng.uniform(0, 180))
        q = cv2.boxPoints(rect).astype(np.float32)
        if q.min() < 0 or (q[:, 0] >= w).any() or (q[:, 1] >= h).any():
            continue
        own = _mask(shape, [q], 0.0)
        if (own & mask).sum() <= 0.02 * own.sum():
            out.append(canonical_quad(q))
    return out


def not_tile_crops(size, seed: int, detector, real_per_photo: int = 6,
                   rendered_scenes: int = 300, log=print) -> np.ndarray:
    """(N, H, W, 3) uint8 crops of no tile (above), through the pipeline's crop code."""
    from training.classifier.data import real_tiles

    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    crops, counts = [], {"real background": 0, "real finds": 0, "rendered finds": 0}
    for photo, tiles in real_tiles("train"):
        image = photo.read()
        quads = [q for _c, q in tiles]  # each label polygon's rectangle
        mask = _mask(image.shape, quads, 0.2)
        sides = np.array([sorted((np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[2] - q[1])))
                          for q in quads])
        side = tuple(np.median(sides, 0))
        background = _random_quads(rng, image.shape, mask, side, real_per_photo)
        finds, _ = detector.detect(image, threshold=LOW_THRESHOLD)
        finds = _off_tiles(np.asarray(finds, np.float32).reshape(-1, 4, 2), mask)
        for kind, qs in (("real background", background), ("real finds", list(finds))):
            if len(qs):
                crops.append(rectify_tiles(image, np.stack(qs), size))
                counts[kind] += len(qs)
    for k in range(rendered_scenes):
        image, tiles = _rendered_scene(rng, k)
        finds, _ = detector.detect(image, threshold=LOW_THRESHOLD)
        finds = _off_tiles(np.asarray(finds, np.float32).reshape(-1, 4, 2),
                           _mask(image.shape, tiles, 0.2))
        if len(finds):
            crops.append(rectify_tiles(image, finds, size))
            counts["rendered finds"] += len(finds)
    x = np.concatenate(crops) if crops else np.zeros((0, size[1], size[0], 3), np.uint8)
    log(f"not tiles: {len(x)} crops ({', '.join(f'{v} {k}' for k, v in counts.items())}; "
        f"{time.perf_counter() - t0:.0f}s)")
    return x


def _rendered_scene(rng, k: int):
    """A rendered training scene and the quads of every tile it shows at all."""
    if k % 2:
        from training.render3d.scene import render_depth_scene

        scene = render_depth_scene(rng)
        return scene.image, [t.visible for t in scene.tiles]
    from training.editions import render_edition_scene

    photo, labels, ignores = render_edition_scene(rng)
    return photo, [q for _c, q in labels] + list(ignores)

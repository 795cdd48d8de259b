"""Tile crops for the classifier: real (train/ label polygons) and rendered, as arrays.

Every crop goes through `vision.recognition.rectify.rectify_tiles`, the code used at inference. A
crop's target is `class_index + 53 * upside_down` (106 classes): the network reads both
what the tile is and whether the crop shows it turned 180 degrees.

The real labels do not say which way is up. `ink_row_centre` finds it: on the upright
face the number's ink sits in the upper part (the embossed logo below is faint), so the
ink's centre of mass lies above the middle. Measured on train/: bimodal, modes at ~0.33
and ~0.67 of the height, ~2 % of tiles between 0.4 and 0.6 (mostly cut-off tiles).
"""

from __future__ import annotations

import time

import cv2
import numpy as np

from training.real_data import load_split, oriented_quad
from vision.recognition.labels import TILE_CLASSES
from vision.recognition.rectify import canonical_quad, rectify_tiles, rotate_quad_180

N_CLASSES = len(TILE_CLASSES)
CLASS_INDEX = {code: i for i, code in enumerate(TILE_CLASSES)}


def ink_row_centre(crops: np.ndarray) -> np.ndarray:
    """Vertical centre of mass (0 top .. 1 bottom) of the printed ink in each crop."""
    res = np.full(len(crops), 0.5, np.float32)
    for i, c in enumerate(crops):
        m = max(2, c.shape[1] // 8)
        inner = c[m:-m, m:-m]
        gray = inner.astype(np.float32).mean(2)
        sat = cv2.cvtColor(inner, cv2.COLOR_BGR2HSV)[..., 1].astype(np.float32)
        ink = np.clip((np.median(gray) - gray - 25) / 40, 0, 1)
        ink += np.clip((sat - np.median(sat) - 40) / 60, 0, 1)
        total = ink.sum()
        if total > 3:
            rows = np.arange(inner.shape[0], dtype=np.float32)[:, None]
            res[i] = float((ink * rows).sum() / total) / inner.shape[0]
    return res


def jitter_quads(rng: np.random.Generator, quads: np.ndarray, strength: float = 1.0,
                 heavy: float = 0.0, heavy_max: float = 4.0):
    """Mimic detector error: corner noise, shift, scale, small rotation (upright order kept).

    At strength 1: rotation sd 2 degrees, scale sd 3.5 %, shift sd 3 % and per-corner sd
    2.2 % of the tile's width. A share `heavy` of the tiles gets a strength drawn from
    1.5..`heavy_max` instead (a rough detector; at 4: ~8 degrees sd, ~14 % scale sd).
    """
    quads = np.asarray(quads, np.float32)
    out = np.empty_like(quads)
    for i, q in enumerate(quads):
        if heavy and rng.random() < heavy:
            strength_i = rng.uniform(1.5, heavy_max)
        else:
            strength_i = strength
        out[i] = _jitter_one(rng, q, strength_i)
    return out


def _jitter_one(rng, q, strength):
    c = q.mean(0)
    w = np.linalg.norm(q[1] - q[0])
    a = rng.normal(0, 0.035) * strength
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]], np.float32)
    s = 1 + rng.normal(0, 0.035) * strength
    p = (q - c) @ rot.T * s + c
    p += rng.normal(0, 0.03 * w * strength, 2)  # shift
    p += rng.normal(0, 0.022 * w * strength, (4, 2))  # per-corner
    return p


def real_tiles(split: str):
    """[(photo, [(code, canonical quad)])] for one split of the real photos."""
    out = []
    for photo in load_split(split):
        tiles = [(t.code, canonical_quad(oriented_quad(t.polygon))) for t in photo.tiles]
        if tiles:
            out.append((photo, tiles))
    return out


def upright_real(split: str, size, flips: dict | None = None):
    """Real tiles with their upright quads (rule above; `flips` overrides per (key, i)).

    Returns (photos, codes, upright quads, photo index per tile, ink centre per tile).
    """
    photos, codes, quads, owner, cents = [], [], [], [], []
    for pi, (photo, tiles) in enumerate(real_tiles(split)):
        image = photo.read()
        q = np.stack([t[1] for t in tiles])
        crops = rectify_tiles(image, q, size)
        cent = ink_row_centre(crops)
        for i, (code, quad) in enumerate(tiles):
            down = cent[i] > 0.5
            if flips and (photo.key, i) in flips:
                down = flips[(photo.key, i)]
            quads.append(rotate_quad_180(quad) if down else quad)
            codes.append(code)
            owner.append(pi)
            cents.append(cent[i])
        photos.append(photo)
    return photos, codes, np.stack(quads), np.asarray(owner), np.asarray(cents)


def real_crops(split: str, size, copies: int, seed: int, strength: float = 1.0,
               heavy: float = 0.0, heavy_max: float = 4.0, flips: dict | None = None,
               log=print):
    """`copies` jittered crops per real tile (first copy unjittered), random 180 turns."""
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    photos, codes, quads, owner, _ = upright_real(split, size, flips)
    xs, ys = [], []
    for pi, photo in enumerate(photos):
        sel = np.nonzero(owner == pi)[0]
        image = photo.read()
        for k in range(copies):
            q = quads[sel] if k == 0 else jitter_quads(rng, quads[sel], strength, heavy, heavy_max)
            down = rng.random(len(sel)) < 0.5
            q = np.where(down[:, None, None], rotate_quad_180(q), q)
            xs.append(rectify_tiles(image, q, size))
            ys.append(np.array([CLASS_INDEX[codes[j]] for j in sel]) + N_CLASSES * down)
    x, y = np.concatenate(xs), np.concatenate(ys).astype(np.int64)
    log(f"real {split}: {len(codes)} tiles x {copies} = {len(x)} crops "
        f"({time.perf_counter() - t0:.0f}s)")
    return x, y


def synthetic_crops(n: int, size, seed: int, copies: int = 2, deadline: float | None = None,
                    strength: float = 1.0, heavy: float = 0.0, heavy_max: float = 4.0,
                    log=print, editions: float = 0.0, depth: float = 0.0,
                    jokers: float = 0.0, joker_families: tuple | None = None):
    """About `n` crops cut from rendered scenes (stops early at `deadline`); a share
    `jokers` of the scenes are sets with a joker in each whose face is a random picture
    (`training.joker_faces`; of `joker_families` only, where given), of the rest a share `depth` are stands with depth
    (`training.render3d`: crops of the visible part of each tile whose number shows, as a
    detector outlines it), of the rest a share `editions` in other editions and scenes
    (`training.editions`). A share of 0 draws nothing, so the other draws stay as they were."""
    from training.render import render_scene  # Pillow: training only

    rng = np.random.default_rng(seed)
    xs, ys, count, scenes = [], [], 0, 0
    t0 = time.perf_counter()
    while count < n and (deadline is None or time.perf_counter() < deadline):
        if jokers and rng.random() < jokers:
            from training.editions import random_edition, render_edition_scene, with_emblem_jokers

            photo, labels, _ = render_edition_scene(
                rng, with_emblem_jokers(random_edition(rng), joker_families), kind="jokers")
        elif depth and rng.random() < depth:
            from training.render3d.scene import _labelled, render_depth_scene

            scene = render_depth_scene(rng)
            photo = scene.image
            labels = [(t.code, t.train_quad) for t in scene.tiles if _labelled(t)]
        elif editions and rng.random() < editions:
            from training.editions import render_edition_scene

            photo, labels, _ = render_edition_scene(rng, kind=str(rng.choice(
                ["table", "scatter", "closeup", "rack", "rack_front", "hand"],
                p=[0.2, 0.2, 0.1, 0.1, 0.3, 0.1])))
        else:
            kind = str(rng.choice(["table", "scatter", "closeup", "rack"],
                                  p=[0.3, 0.35, 0.2, 0.15]))
            photo, labels = render_scene(rng, kind=kind)
        scenes += 1
        if not labels:
            continue
        codes = [c for c, _ in labels]
        quads = np.stack([q for _, q in labels])
        for _ in range(copies):
            q = jitter_quads(rng, quads, strength, heavy, heavy_max)
            down = rng.random(len(q)) < 0.5
            q = np.where(down[:, None, None], rotate_quad_180(q), q)
            xs.append(rectify_tiles(photo, q, size))
            ys.append(np.array([CLASS_INDEX[c] for c in codes]) + N_CLASSES * down)
            count += len(q)
    x, y = np.concatenate(xs), np.concatenate(ys).astype(np.int64)
    log(f"synthetic: {scenes} scenes -> {len(x)} crops ({time.perf_counter() - t0:.0f}s)")
    return x, y

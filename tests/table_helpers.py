"""Helpers for the table tests: TileDetections built from known codes and corners."""

from __future__ import annotations

import numpy as np

from vision.recognition.detections import TileDetections
from vision.recognition.labels import TILE_CLASSES


def detections_from(codes, quads, *, probs: dict[int, dict[str, float]] | None = None,
                    scores: dict[int, float] | None = None):
    """Confident readings of `codes`; `probs[i]` overrides tile i's distribution, `scores[i]`
    its detector score (1 otherwise)."""
    n = len(codes)
    p = np.full((n, len(TILE_CLASSES)), 1e-5, np.float32)
    for i, code in enumerate(codes):
        p[i, TILE_CLASSES.index(code)] = 1.0
        for other, value in (probs or {}).get(i, {}).items():
            p[i, TILE_CLASSES.index(other)] = value
    p /= p.sum(axis=1, keepdims=True)
    return TileDetections(
        corners=np.asarray(quads, np.float32).reshape(-1, 4, 2),
        detector_scores=np.array([(scores or {}).get(i, 1.0) for i in range(n)], np.float32),
        class_probs=p,
        class_ids=p.argmax(axis=1).astype(np.int64),
        uncertain=p.max(axis=1) < 0.6,
    )


def row(codes, *, x=100.0, y=100.0, w=40.0, gap=2.0, angle=0.0):
    """Corners of tiles laid side by side from (x, y) along `angle` (radians)."""
    from bench.synth_tables import tile_corners

    r = np.array([np.cos(angle), np.sin(angle)])
    return [tile_corners(np.array([x, y]) + r * k * (w + gap), angle, w, w / 0.72)
            for k in range(len(codes))]


def phone_processed(data: bytes, seed: int) -> bytes:
    """A rendered photo's JPEG as a phone's own processing might leave it: a white balance
    left a little warm, sensor noise, a lift of the shadows, sharpening, JPEG 85
    (docs/decisions/rack-tiles-only.md, "The same photos as a phone's processing leaves
    them"). Seeded by `seed`: the same bytes every run."""
    import cv2

    rng = np.random.default_rng(seed)
    x = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR).astype(np.float32)
    x *= np.float32([0.93, 1.0, 1.05])  # B, G, R
    x += rng.normal(0, 2.5, x.shape[:2])[..., None] + rng.normal(0, 1.0, x.shape)
    x = 255 * (np.clip(x, 0, 255) / 255) ** 0.85
    x += 0.6 * (x - cv2.GaussianBlur(x, (0, 0), 1.2))
    _ok, out = cv2.imencode(".jpg", np.clip(x, 0, 255).astype(np.uint8),
                            [cv2.IMWRITE_JPEG_QUALITY, 85])
    return out.tobytes()


def turned_round(detections: TileDetections, i: int, as_drawn: str, other_way: str,
                 share: float) -> TileDetections:
    """Tile i read `as_drawn` lying turned round against its neighbours, with `share` of
    the probability saying "`other_way`, seen the other way round"."""
    d = detections
    d.corners[i] = np.roll(d.corners[i], 2, axis=0)
    probs = np.full(len(TILE_CLASSES), 1e-6, np.float32)
    probs[TILE_CLASSES.index(as_drawn)] = 1.0 - share
    probs[TILE_CLASSES.index(other_way)] = share
    d.class_probs[i] = probs
    d.class_ids[i] = int(np.argmax(probs))
    d.flip_probs = np.zeros_like(d.class_probs)
    d.flip_probs[i, TILE_CLASSES.index(other_way)] = share
    return d


def read_white_rack(seed: int, upright: bool = False, change=None):
    """(scene, rack reading) of `bench.eval_white_racks`' photo `seed` (16 MP; taken
    `upright` as `--portrait` takes it), read as `rummikub score` reads it; `change`: a
    function of its JPEG bytes and the seed giving the bytes read instead (`phone_processed`).
    The test is skipped without Pillow or the models."""
    import pytest

    pytest.importorskip("PIL")
    from bench.eval_white_racks import BASE, KINDS, SIZE, render
    from referee import DEFAULT_RULES
    from vision.game import cover
    from vision.recognition.decode import Photo
    from vision.recognition.pipeline import TileReader
    from vision.recognition.settings import MODELS_DIR

    if not all((MODELS_DIR / n).is_file() for n in ("detector.onnx", "classifier.onnx")):
        pytest.skip(f"no models in {MODELS_DIR}")
    size = SIZE[::-1] if upright else SIZE
    _seed, scene, data = render(seed, KINDS[(seed - BASE) % len(KINDS)], size)
    if change is not None:
        data = change(data, seed)
    reader = TileReader.load()
    return scene, cover.read_rack_photo(reader, Photo.from_bytes(data), DEFAULT_RULES)

"""Tile quadrilaterals -> fixed-size upright crops, and crops -> the classifier's tensor.

Written once and used by training and inference alike, so the classifier sees in use
exactly what it saw in training. Crop size and normalisation come from the classifier's
JSON sidecar (`models/classifier.json`, key `input`); the defaults below only apply when
no sidecar exists.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from vision.recognition.settings import MODELS_DIR

DEFAULT_SIZE = (32, 44)  # (width, height) of a crop
DEFAULT_MEAN = (0.5, 0.5, 0.5)
DEFAULT_STD = (0.25, 0.25, 0.25)


@lru_cache(maxsize=4)
def _sidecar_input(models_dir: str) -> dict:
    path = Path(models_dir) / "classifier.json"
    if path.exists():
        return json.loads(path.read_text()).get("input", {})
    return {}


def crop_size(models_dir: Path | str = MODELS_DIR) -> tuple[int, int]:
    """(width, height) of the classifier's crops, from its sidecar."""
    spec = _sidecar_input(str(models_dir))
    return int(spec.get("width", DEFAULT_SIZE[0])), int(spec.get("height", DEFAULT_SIZE[1]))


def canonical_quad(quad: np.ndarray) -> np.ndarray:
    """Reorder 4 corners of a (near-)rectangle into the detector's convention.

    Clockwise q0..q3 = top-left, top-right, bottom-right, bottom-left of the tile held with
    its long side vertical and its "up" being whichever long-axis direction points more
    towards the photo's top (-y); ties (long axis exactly horizontal) take -x as up. The
    result is the upright order up to a 180-degree turn, which the classifier resolves.
    """
    q = np.asarray(quad, np.float32).reshape(4, 2)
    c = q.mean(0)
    angles = np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0])
    q = q[np.argsort(angles)]  # clockwise on screen (y points down)
    edges = np.linalg.norm(np.roll(q, -1, axis=0) - q, axis=1)
    # short edges are 0-1 & 2-3 or 1-2 & 3-0
    start = 0 if edges[0] + edges[2] <= edges[1] + edges[3] else 1
    mids = [(q[start] + q[(start + 1) % 4]) / 2, (q[(start + 2) % 4] + q[(start + 3) % 4]) / 2]
    a, b = mids
    # up = the short edge whose midpoint is higher; tie -> the one further left
    if abs(a[1] - b[1]) > 1e-3 * (1 + abs(a[0] - b[0])):
        top = 0 if a[1] < b[1] else 1
    else:
        top = 0 if a[0] <= b[0] else 1
    first = (start + 2 * top) % 4
    return np.roll(q, -first, axis=0)


def rotate_quad_180(quads: np.ndarray) -> np.ndarray:
    """The same tile(s) with "up" turned round: q2, q3, q0, q1."""
    return np.roll(np.asarray(quads), 2, axis=-2)


def rectify_tiles(
    image_bgr: np.ndarray, quads: np.ndarray, size: tuple[int, int] | None = None
) -> np.ndarray:
    """Warp each quad (q0 -> top-left, clockwise) to an upright (H, W, 3) uint8 crop.

    `quads` (N, 4, 2) photo pixels; `size` (width, height) defaults to the classifier
    sidecar's. Quads much larger than the crop are first shrunk by 2, 4 or 8 with area
    averaging, so the final warp never shrinks by 2.5x or more (no aliasing on 4000-px
    photos). Parts outside the photo are filled by edge replication.
    """
    w, h = size or crop_size()
    quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    out = np.empty((len(quads), h, w, 3), np.uint8)
    dst = np.float32([[0, 0], [w, 0], [w, h], [0, h]]) - 0.5
    ih, iw = image_bgr.shape[:2]
    # How many crop pixels each photo pixel spans, for all tiles at once (the per-tile loop
    # below is then only OpenCV calls, warping straight into `out`).
    sides = np.maximum(np.linalg.norm(quads[:, 1] - quads[:, 0], axis=1) / w,
                       np.linalg.norm(quads[:, 3] - quads[:, 0], axis=1) / h)
    for i, quad in enumerate(quads):
        side = sides[i]
        src, quad_px = image_bgr, quad
        if side >= 2.5:  # shrink the neighbourhood first by 2, 4 or 8 (fast area path)
            k = min(8, 2 ** int(np.log2(side / 1.25)))
            x0, y0 = (np.floor(quad.min(0)).astype(int) - 2) // k * k
            x1, y1 = np.ceil(quad.max(0)).astype(int) + 3
            x0, y0 = max(x0, 0), max(y0, 0)
            x1, y1 = min(x0 + (x1 - x0) // k * k, iw // k * k), min(y0 + (y1 - y0) // k * k,
                                                                    ih // k * k)
            if x1 - x0 >= 2 * k and y1 - y0 >= 2 * k:
                src = cv2.resize(image_bgr[y0:y1, x0:x1], ((x1 - x0) // k, (y1 - y0) // k),
                                 interpolation=cv2.INTER_AREA)
                quad_px = (quad - np.float32([x0, y0]) + 0.5) / k - 0.5
        m = cv2.getPerspectiveTransform(quad_px.astype(np.float32), dst)
        cv2.warpPerspective(src, m, (w, h), dst=out[i], flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_REPLICATE)
    return out


@lru_cache(maxsize=8)
def _tensor_table(mean: tuple[float, ...], std: tuple[float, ...]) -> np.ndarray:
    """(3, 256) float32: the tensor value of each byte in each channel, computed with the
    same float32 operations as the arithmetic it replaces, so it gives the same bits."""
    x = np.arange(256, dtype=np.float32)[:, None] * np.float32(1 / 255)
    x = (x - np.float32(mean)) / np.float32(std)
    return np.ascontiguousarray(x.T)


def to_tensor(
    crops: np.ndarray,
    mean: tuple[float, float, float] = DEFAULT_MEAN,
    std: tuple[float, float, float] = DEFAULT_STD,
) -> np.ndarray:
    """(N, H, W, 3) uint8 BGR crops -> (N, 3, H, W) float32, (x/255 - mean) / std per channel."""
    crops = np.asarray(crops)
    crops = crops.reshape(-1, *crops.shape[-3:])
    if crops.dtype != np.uint8:  # e.g. float crops from an augmentation: plain arithmetic
        x = (crops.astype(np.float32) * np.float32(1 / 255) - np.float32(mean)) / np.float32(std)
        return np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    table = _tensor_table(tuple(float(v) for v in mean), tuple(float(v) for v in std))
    # A look-up per byte instead of three float passes and a transposed copy: the same
    # numbers (a test compares them with the arithmetic), in a third of the time.
    x = np.empty((len(crops), 3, *crops.shape[1:3]), np.float32)
    for channel in range(3):
        np.take(table[channel], crops[..., channel], out=x[:, channel], mode="clip")
    return x

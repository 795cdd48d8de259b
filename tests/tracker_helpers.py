"""What the live-table tests share: the real valid/ photos they play on, the tile reader,
and the camera's view as a phone on a stand sees it (small, noisy, bumped)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

PHOTOS = ("rummy-36", "rummy4-1", "rummy2-10")  # 54, 30 and 12 tiles
SMALL_W = 160


def valid_photos(root, keys=PHOTOS) -> list:
    """The real valid/ photos named by `keys`, in that order."""
    from training.real_data import load_split

    by_key = {p.key: p for p in load_split("valid", root)}
    return [by_key[k] for k in keys]


def load_tile_reader():
    """The tile reader on the shipped models; the test skips where they are missing."""
    from vision.recognition.pipeline import ModelsMissing, TileReader

    try:
        return TileReader.load()
    except ModelsMissing as e:
        pytest.skip(str(e))


def bumped(image: np.ndarray, degrees: float, shift) -> tuple[np.ndarray, np.ndarray]:
    """The view turned by `degrees` about its centre and shifted by `shift` px; the strip
    it uncovers is plain table (the colour of the photo's border), as a camera would see
    more of the table there, not streaks. Returns (frame, 2x3 move)."""
    h, w = image.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    m[:, 2] += shift
    border = np.concatenate([image[:4].reshape(-1, 3), image[-4:].reshape(-1, 3)])
    fill = tuple(float(v) for v in np.median(border, axis=0))
    out = cv2.warpAffine(image, m, (w, h), flags=cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_CONSTANT, borderValue=fill)
    return out, m


def small(frame: np.ndarray) -> np.ndarray:
    h, w = frame.shape[:2]
    return cv2.resize(frame, (SMALL_W, round(h * SMALL_W / w)), interpolation=cv2.INTER_AREA)


_NOISE: dict = {}


def noisy(frame: np.ndarray, rng) -> np.ndarray:
    """Sensor noise, a fresh one of a few per frame (drawn once: noise is costly to draw)."""
    if frame.shape not in _NOISE:
        _NOISE[frame.shape] = [np.round(rng.normal(0, 2.0, frame.shape)).astype(np.int16)
                               for _ in range(3)]
    pattern = _NOISE[frame.shape][int(rng.integers(3))]
    return np.clip(frame.astype(np.int16) + pattern, 0, 255).astype(np.uint8)
